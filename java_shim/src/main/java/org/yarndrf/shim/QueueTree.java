package org.yarndrf.shim;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;

/**
 * The queue tree as the core last reported it. Queues are updated in place across reloads, so
 * running applications keep their queue objects; a queue that disappears from the file is
 * marked removed (no new submissions) and stays while apps still use it.
 */
public final class QueueTree {
  private final Configuration conf;
  private final ShimQueue.RecoveryListener recovery;
  private final Map<String, ShimQueue> byPath = new LinkedHashMap<>();
  private ShimQueue root;

  public QueueTree(Configuration conf, ShimQueue.RecoveryListener recovery) {
    this.conf = conf;
    this.recovery = recovery;
    root = new ShimQueue("root", null, conf, recovery);
    byPath.put("root", root);
  }

  public synchronized ShimQueue root() {
    return root;
  }

  /** Applies the core's queue list (parents before children; read and checked by Messages.queues). */
  public synchronized void update(List<QueueSettings> entries) {
    Set<String> seen = new HashSet<>();
    for (QueueSettings s : entries) {
      ShimQueue q = byPath.get(s.path);
      if (q == null) {
        ShimQueue parent = byPath.get(s.path.substring(0, s.path.lastIndexOf('.')));
        q = new ShimQueue(s.path, parent, conf, recovery);
        byPath.put(s.path, q);
      }
      q.configure(s);
      seen.add(s.path);
    }
    for (Map.Entry<String, ShimQueue> e : byPath.entrySet()) {
      if (!seen.contains(e.getKey())) {
        e.getValue().markRemoved();
      }
    }
  }

  /**
   * Adds or replaces the entries of queues the core built (a schedule reply's "queues_built",
   * parents first), then adds the leaves it created with a created leaf's settings ("queues_created":
   * parent -> names, each made from its parent's settings), keeping every other queue as it is.
   * A queue whose parent the tree does not have (or has as a leaf, for a created one) means the
   * shim's tree is not the core's: nothing changes, and the caller resyncs.
   */
  public synchronized void grow(List<QueueSettings> entries, Map<String, List<String>> created) {
    Map<String, Boolean> known = new HashMap<>();  // path -> leaf, for the entries of this reply
    for (QueueSettings s : entries) {
      String parent = s.path.substring(0, Math.max(0, s.path.lastIndexOf('.')));
      if (!s.path.equals("root") && !byPath.containsKey(parent) && !known.containsKey(parent)) {
        throw new IllegalStateException("the core built queue " + s.path
            + " under " + parent + ", which the shim's queue tree does not have");
      }
      known.put(s.path, s.leaf);
    }
    for (String parent : created.keySet()) {
      ShimQueue q = byPath.get(parent);
      Boolean leaf = known.containsKey(parent) ? known.get(parent) : q == null ? null : q.isLeaf();
      if (leaf == null || leaf) {
        throw new IllegalStateException("the core created queues under " + parent
            + ", which the shim's queue tree does not have as a parent queue");
      }
    }
    for (QueueSettings s : entries) {
      put(s);
    }
    for (Map.Entry<String, List<String>> e : created.entrySet()) {
      QueueSettings parent = byPath.get(e.getKey()).settings();
      for (String name : e.getValue()) {
        put(QueueSettings.createdUnder(parent, e.getKey() + "." + name));
      }
    }
  }

  private void put(QueueSettings s) {
    ShimQueue q = byPath.get(s.path);
    if (q == null) {
      q = new ShimQueue(s.path, byPath.get(s.path.substring(0, s.path.lastIndexOf('.'))), conf,
          recovery);
      byPath.put(s.path, q);
    }
    q.configure(s);
  }

  /**
   * The queue an app stored with this queue name is recovered into. A restarted RM recovers its
   * apps before it starts its scheduler, when the tree holds root alone (the core gives the rest
   * at start), so findOrPlaceholder resolves the name by itself: a full path stands for itself,
   * any other name for a queue under root.
   */
  static String recoveredPath(String stored) {
    return stored.equals("root") || stored.startsWith("root.") ? stored : "root." + stored;
  }

  /** A queue by full path ("root.a.b") or by a unique short name ("b"); null if none. */
  public synchronized ShimQueue find(String name) {
    if (name == null) {
      return null;
    }
    ShimQueue q = byPath.get(name);
    if (q != null) {
      return q;
    }
    ShimQueue found = null;
    for (ShimQueue c : byPath.values()) {
      if (c.getShortName().equals(name)) {
        if (found != null) {
          return null;
        }
        found = c;
      }
    }
    return found;
  }

  /**
   * The queue for an app YARN already runs (recovery, snapshot): its configured queue, or a
   * placeholder leaf marked removed if the file no longer has it, so the app keeps running.
   */
  public synchronized ShimQueue findOrPlaceholder(String path) {
    ShimQueue q = find(path);
    if (q != null) {
      return q;
    }
    ShimQueue parent = root;
    StringBuilder p = new StringBuilder("root");
    for (String part : recoveredPath(path).substring("root.".length()).split("\\.")) {
      p.append('.').append(part);
      ShimQueue next = byPath.get(p.toString());
      if (next == null) {
        next = new ShimQueue(p.toString(), parent, conf, recovery);
        next.markRemoved();
        byPath.put(p.toString(), next);
      }
      parent = next;
    }
    return parent;
  }
}

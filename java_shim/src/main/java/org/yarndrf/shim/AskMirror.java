package org.yarndrf.shim;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.hadoop.yarn.api.records.ResourceRequest;

/**
 * What the core was last told about each app's outstanding asks. Diffing YARN's current asks
 * (AppSchedulingInfo, the truth) against it yields exactly the asks to send: absolute counts,
 * count 0 for asks that disappeared. This also catches asks YARN re-adds by itself (containers
 * killed before the AM pulled them).
 *
 * <p>Each ask (app, priority, allocation id, location) gets an id the first time it is sent, in
 * full ("asks"); after that a change of its count alone, by far the most common change, is the
 * pair {@code id, count} in the flat "counts" array (bridge protocol version 2, BRIDGE.md). A
 * diff names each ask once, so the two may be applied in either order. Ids are never reused, so
 * an id from before a {@link #forget} or {@link #clear} cannot be mistaken for a newer ask.
 *
 * <p>Locking: used under the scheduler's lock (the loop's collect and snapshot, YARN's app events);
 * its methods synchronize as well, so no caller can see it half-changed.
 */
public final class AskMirror {
  private static final class Key {
    final int priority;
    final long allocationId;
    final String location;

    Key(int priority, long allocationId, String location) {
      this.priority = priority;
      this.allocationId = allocationId;
      this.location = location;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Key)) {
        return false;
      }
      Key k = (Key) o;
      return priority == k.priority && allocationId == k.allocationId
          && location.equals(k.location);
    }

    @Override
    public int hashCode() {
      return Objects.hash(priority, allocationId, location);
    }
  }

  private static final class Ask {
    final long id;
    final int count;
    final long[] amounts;
    final boolean relax;

    Ask(long id, int count, long[] amounts, boolean relax) {
      this.id = id;
      this.count = count;
      this.amounts = amounts;
      this.relax = relax;
    }

    boolean sameShape(long[] otherAmounts, boolean otherRelax) {
      return relax == otherRelax && Arrays.equals(amounts, otherAmounts);
    }
  }

  /** app id -> every ask sent for it, including withdrawn ones (count 0), which keep their id. */
  private final Map<String, Map<Key, Ask>> sent = new HashMap<>();
  private long lastId;
  /** How many of the asks sent (anywhere, "*") still want containers. */
  private int outstanding;

  /** Whether some app has asks the core was told of that still want containers. */
  public synchronized boolean hasOutstanding() {
    return outstanding > 0;
  }

  private static int wanting(Map<Key, Ask> asks) {
    int n = 0;
    for (Map.Entry<Key, Ask> e : asks.entrySet()) {
      if (e.getValue().count > 0 && "*".equals(e.getKey().location)) {
        n++;
      }
    }
    return n;
  }

  /**
   * Appends what brings the core from what it was told to `current`: asks to send in full to
   * `asks`, and count changes of asks sent before to `counts` (id, count, id, count, ...).
   */
  public synchronized void diff(String appId, List<ResourceRequest> current,
      List<Messages.AskRow> asks, List<Long> counts) {
    Map<Key, Ask> before = sent.getOrDefault(appId, new HashMap<>());
    outstanding -= wanting(before);
    Map<Key, Ask> now = new HashMap<>();
    for (ResourceRequest rr : current) {
      Key k = new Key(rr.getPriority().getPriority(), rr.getAllocationRequestId(),
          rr.getResourceName());
      int count = rr.getNumContainers();
      long[] amounts = Messages.vector(rr.getCapability());
      Ask was = before.remove(k);
      if (was != null && was.sameShape(amounts, rr.getRelaxLocality())) {
        now.put(k, was.count == count ? was : new Ask(was.id, count, was.amounts, was.relax));
        if (was.count != count) {
          counts.add(was.id);
          counts.add((long) count);
        }
      } else {
        Ask a = new Ask(++lastId, count, amounts, rr.getRelaxLocality());
        now.put(k, a);
        asks.add(new Messages.AskRow(a.id, a.count, appId, k.priority, k.allocationId, k.location,
            a.relax, a.amounts));
      }
    }
    for (Map.Entry<Key, Ask> e : before.entrySet()) {
      Ask gone = e.getValue();
      now.put(e.getKey(), gone.count == 0 ? gone : new Ask(gone.id, 0, gone.amounts, gone.relax));
      if (gone.count > 0) {
        counts.add(gone.id);
        counts.add(0L);
      }
    }
    sent.put(appId, now);
    outstanding += wanting(now);
  }

  public synchronized void forget(String appId) {
    Map<Key, Ask> gone = sent.remove(appId);
    if (gone != null) {
      outstanding -= wanting(gone);
    }
  }

  public synchronized void clear() {
    sent.clear();
    outstanding = 0;
  }
}

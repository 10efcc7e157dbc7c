package org.yarndrf.shim;

import com.fasterxml.jackson.databind.node.ArrayNode;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.yarndrf.shim.bridge.Protocol;

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

  /** {name: amount}, for the bridge's resource objects (nodes, containers, free resources). */
  public static Map<String, Long> amounts(Resource r) {
    Map<String, Long> out = new java.util.TreeMap<>();
    for (ResourceInformation ri : r.getResources()) {
      out.put(ri.getName(), ri.getValue());
    }
    return out;
  }

  /** Amounts in YARN's resource type order, the order of the snapshot's "resources". */
  static long[] vector(Resource r) {
    ResourceInformation[] infos = r.getResources();
    long[] out = new long[infos.length];
    for (int i = 0; i < infos.length; i++) {
      out[i] = infos[i].getValue();
    }
    return out;
  }

  /**
   * Appends what brings the core from what it was told to `current`: asks to send in full to
   * `asks`, and count changes of asks sent before to `counts` (id, count, id, count, ...).
   */
  public synchronized void diff(String appId, List<ResourceRequest> current, ArrayNode asks,
      ArrayNode counts) {
    Map<Key, Ask> before = sent.getOrDefault(appId, new HashMap<>());
    Map<Key, Ask> now = new HashMap<>();
    for (ResourceRequest rr : current) {
      Key k = new Key(rr.getPriority().getPriority(), rr.getAllocationRequestId(),
          rr.getResourceName());
      int count = rr.getNumContainers();
      long[] amounts = vector(rr.getCapability());
      Ask was = before.remove(k);
      if (was != null && was.sameShape(amounts, rr.getRelaxLocality())) {
        now.put(k, was.count == count ? was : new Ask(was.id, count, was.amounts, was.relax));
        if (was.count != count) {
          counts.add(was.id).add(count);
        }
      } else {
        Ask a = new Ask(++lastId, count, amounts, rr.getRelaxLocality());
        now.put(k, a);
        asks.add(full(appId, k, a));
      }
    }
    for (Map.Entry<Key, Ask> e : before.entrySet()) {
      Ask gone = e.getValue();
      now.put(e.getKey(), gone.count == 0 ? gone : new Ask(gone.id, 0, gone.amounts, gone.relax));
      if (gone.count > 0) {
        counts.add(gone.id).add(0);
      }
    }
    sent.put(appId, now);
  }

  /** [id, count, app, priority, allocation_id, location, relax_locality, amounts...]. */
  private static ArrayNode full(String appId, Key k, Ask a) {
    ArrayNode n = Protocol.JSON.createArrayNode().add(a.id).add(a.count).add(appId)
        .add(k.priority).add(k.allocationId).add(k.location).add(a.relax);
    for (long v : a.amounts) {
      n.add(v);
    }
    return n;
  }

  public synchronized void forget(String appId) {
    sent.remove(appId);
  }

  public synchronized void clear() {
    sent.clear();
  }
}

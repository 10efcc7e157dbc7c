package org.yarndrf.shim;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
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
 * (AppSchedulingInfo, the truth) against it yields exactly the "ask" deltas to send: absolute
 * counts, count 0 for asks that disappeared. This also catches asks YARN re-adds by itself
 * (containers killed before the AM pulled them).
 */
public final class AskMirror {
  private static final class Ask {
    final int count;
    final Map<String, Long> resources;
    final boolean relax;

    Ask(int count, Map<String, Long> resources, boolean relax) {
      this.count = count;
      this.resources = resources;
      this.relax = relax;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Ask)) {
        return false;
      }
      Ask a = (Ask) o;
      return count == a.count && relax == a.relax && resources.equals(a.resources);
    }

    @Override
    public int hashCode() {
      return Objects.hash(count, resources, relax);
    }
  }

  private final Map<String, Map<String, Ask>> sent = new HashMap<>();

  private static String key(int priority, long allocationId, String location) {
    return priority + "/" + allocationId + "/" + location;
  }

  public static Map<String, Long> amounts(Resource r) {
    Map<String, Long> out = new java.util.TreeMap<>();
    for (ResourceInformation ri : r.getResources()) {
      out.put(ri.getName(), ri.getValue());
    }
    return out;
  }

  public static ObjectNode askDelta(String appId, int priority, long allocationId,
      String location, Map<String, Long> resources, int count, boolean relax) {
    ObjectNode d = Protocol.delta("ask");
    d.put("app", appId);
    d.put("priority", priority);
    d.put("allocation_id", allocationId);
    d.put("location", location);
    d.set("resources", Protocol.amounts(resources));
    d.put("count", count);
    d.put("relax_locality", relax);
    return d;
  }

  /** Returns the ask deltas that bring the core from what it was told to `current`. */
  public synchronized List<ObjectNode> diff(String appId, List<ResourceRequest> current) {
    Map<String, Ask> before = sent.get(appId);
    if (before == null) {
      before = new HashMap<>();
    }
    Map<String, Ask> now = new HashMap<>();
    List<ObjectNode> out = new ArrayList<>();
    for (ResourceRequest rr : current) {
      int prio = rr.getPriority().getPriority();
      long alloc = rr.getAllocationRequestId();
      String k = key(prio, alloc, rr.getResourceName());
      Ask a = new Ask(rr.getNumContainers(), amounts(rr.getCapability()), rr.getRelaxLocality());
      now.put(k, a);
      if (!a.equals(before.get(k))) {
        out.add(askDelta(appId, prio, alloc, rr.getResourceName(), a.resources, a.count, a.relax));
      }
    }
    for (Map.Entry<String, Ask> e : before.entrySet()) {
      if (!now.containsKey(e.getKey()) && e.getValue().count > 0) {
        String[] parts = e.getKey().split("/", 3);
        out.add(askDelta(appId, Integer.parseInt(parts[0]), Long.parseLong(parts[1]), parts[2],
            e.getValue().resources, 0, e.getValue().relax));
      }
    }
    sent.put(appId, now);
    return out;
  }

  public synchronized void forget(String appId) {
    sent.remove(appId);
  }

  public synchronized void clear() {
    sent.clear();
  }
}

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
 * <p>Whether an ask is its attempt's AM ask (the one the RM makes for the AM container, at
 * priority 0 while the attempt waits for it) is part of its shape: an ask that changes from one
 * to the other is sent in full again, its id in "am_asks" or not (protocol version 6).
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
    final boolean am;

    Ask(long id, int count, long[] amounts, boolean relax, boolean am) {
      this.id = id;
      this.count = count;
      this.amounts = amounts;
      this.relax = relax;
      this.am = am;
    }

    Ask withCount(int newCount) {
      return new Ask(id, newCount, amounts, relax, am);
    }

    boolean sameShape(long[] otherAmounts, boolean otherRelax, boolean otherAm) {
      return relax == otherRelax && am == otherAm && Arrays.equals(amounts, otherAmounts);
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
   * `asks` (the ids of AM asks among them to `amAsks`), and count changes of asks sent before to
   * `counts` (id, count, id, count, ...). `amPriority`: the priority of the attempt's AM ask
   * while it waits for its AM container, else null.
   */
  public synchronized void diff(String appId, List<ResourceRequest> current, Integer amPriority,
      List<Messages.AskRow> asks, List<Long> counts, List<Long> amAsks) {
    Map<Key, Ask> before = sent.getOrDefault(appId, new HashMap<>());
    outstanding -= wanting(before);
    Map<Key, Ask> now = new HashMap<>();
    for (ResourceRequest rr : current) {
      Key k = new Key(rr.getPriority().getPriority(), rr.getAllocationRequestId(),
          rr.getResourceName());
      int count = rr.getNumContainers();
      long[] amounts = Messages.vector(rr.getCapability());
      boolean am = amPriority != null && amPriority == k.priority;
      Ask was = before.remove(k);
      if (was != null && was.sameShape(amounts, rr.getRelaxLocality(), am)) {
        now.put(k, was.count == count ? was : was.withCount(count));
        if (was.count != count) {
          counts.add(was.id);
          counts.add((long) count);
        }
      } else {
        Ask a = new Ask(++lastId, count, amounts, rr.getRelaxLocality(), am);
        now.put(k, a);
        asks.add(new Messages.AskRow(a.id, a.count, appId, k.priority, k.allocationId, k.location,
            a.relax, a.amounts));
        if (am) {
          amAsks.add(a.id);
        }
      }
    }
    for (Map.Entry<Key, Ask> e : before.entrySet()) {
      Ask gone = e.getValue();
      now.put(e.getKey(), gone.count == 0 ? gone : gone.withCount(0));
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

package org.yarndrf.shim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
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
 * pair {@code id, count} in the flat "counts" array (bridge protocol version 2, docs/bridge.md). A
 * diff names each ask once, so the two may be applied in either order. Ids are never reused, so
 * an id from before a {@link #forget} or {@link #clear} cannot be mistaken for a newer ask.
 *
 * <p>Whether an ask is its attempt's AM ask (the one the RM makes for the AM container, at
 * priority 0 while the attempt waits for it) is part of its shape: an ask that changes from one
 * to the other is sent in full again, its id in "am_asks" or not (protocol version 6). So is its
 * node label expression: YARN keeps a request key's on its ANY ask (AppSchedulingInfo), which
 * carries it to the core; its rack and node asks follow it there.
 *
 * <p>It also keeps the shapes of the asks that still want containers ({@link #wantedFloors}): a
 * node whose free room fits none of them can take none of those asks, so a schedule call need not
 * list it. Asks are counted by shape (few distinct ones in practice), so nothing is recomputed
 * over the asks.
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
    final String label;

    Ask(long id, int count, long[] amounts, boolean relax, boolean am, String label) {
      this.id = id;
      this.count = count;
      this.amounts = amounts;
      this.relax = relax;
      this.am = am;
      this.label = label;
    }

    Ask withCount(int newCount) {
      return new Ask(id, newCount, amounts, relax, am, label);
    }

    boolean sameShape(long[] otherAmounts, boolean otherRelax, boolean otherAm, String otherLabel) {
      return relax == otherRelax && am == otherAm && Arrays.equals(amounts, otherAmounts)
          && Objects.equals(label, otherLabel);
    }
  }

  /** An ask's amounts as a map key. */
  private static final class Shape {
    final long[] amounts;

    Shape(long[] amounts) {
      this.amounts = amounts;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Shape && Arrays.equals(amounts, ((Shape) o).amounts);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(amounts);
    }
  }

  /** app id -> every ask sent for it, including withdrawn ones (count 0), which keep their id. */
  private final Map<String, Map<Key, Ask>> sent = new HashMap<>();
  private long lastId;
  /** How many of the asks sent (anywhere, "*") still want containers. */
  private int outstanding;
  /** Asks sent that still want containers (any location), by shape; a shape of none is removed. */
  private final Map<Shape, Integer> wantedShapes = new HashMap<>();
  /** What {@link #wantedFloors} returns; null after the set of wanted shapes changed. */
  private List<long[]> floors = Collections.emptyList();

  /** Whether some app has asks the core was told of that still want containers. */
  public synchronized boolean hasOutstanding() {
    return outstanding > 0;
  }

  /**
   * Amounts (in YARN's resource type order) a node's free room must fit one of for some ask sent
   * that still wants containers, at any location, to fit it; empty when none wants any. They are
   * the wanted shapes no other wanted shape fits inside, so a room fits one of them exactly when
   * it fits some wanted ask; beyond {@link #MAX_FLOORS} of them, their componentwise smallest
   * alone (a room that fits no ask may fit it, one that fits an ask always does). Recomputed over
   * the shapes, never the asks, and only after the set of shapes changed.
   */
  public synchronized List<long[]> wantedFloors() {
    if (floors == null) {
      floors = floorsOf(wantedShapes.keySet());
    }
    return floors;
  }

  /** Shapes a node is checked against at most; the distinct shapes of a trace are usually few. */
  static final int MAX_FLOORS = 16;

  private static List<long[]> floorsOf(Collection<Shape> shapes) {
    if (shapes.size() <= 4 * MAX_FLOORS) {  // the pairwise check stays small
      List<long[]> out = new ArrayList<>();
      for (Shape s : shapes) {
        if (!fitsAnotherInside(s, shapes)) {
          out.add(s.amounts);
        }
      }
      if (out.size() <= MAX_FLOORS) {
        return Collections.unmodifiableList(out);
      }
    }
    long[] smallest = null;
    for (Shape s : shapes) {
      smallest = smallest == null ? s.amounts.clone() : min(smallest, s.amounts);
    }
    return Collections.singletonList(smallest);
  }

  /** Whether another of `shapes` fits inside `s` (a room that fits `s` fits that one too). */
  private static boolean fitsAnotherInside(Shape s, Collection<Shape> shapes) {
    for (Shape o : shapes) {
      if (o != s && fitsIn(o.amounts, s.amounts)) {
        return true;
      }
    }
    return false;
  }

  private static boolean fitsIn(long[] small, long[] big) {
    for (int i = 0; i < small.length; i++) {
      if (i >= big.length || small[i] > big[i]) {
        return false;
      }
    }
    return true;
  }

  private static long[] min(long[] into, long[] other) {
    for (int i = 0; i < into.length; i++) {
      into[i] = i < other.length ? Math.min(into[i], other[i]) : 0;
    }
    return into;
  }

  /** Counts (sign 1) or uncounts (sign -1) the asks that want containers in `asks`. */
  private void tally(Map<Key, Ask> asks, int sign) {
    for (Map.Entry<Key, Ask> e : asks.entrySet()) {
      Ask a = e.getValue();
      if (a.count <= 0) {
        continue;
      }
      if ("*".equals(e.getKey().location)) {
        outstanding += sign;
      }
      Shape shape = new Shape(a.amounts);
      int left = wantedShapes.getOrDefault(shape, 0) + sign;
      if (left > 0) {
        if (wantedShapes.put(shape, left) == null) {
          floors = null;  // a new shape
        }
      } else {
        wantedShapes.remove(shape);
        floors = null;
      }
    }
  }

  /**
   * Appends what brings the core from what it was told to `current`: asks to send in full to
   * `asks` (the ids of AM asks among them to `amAsks`), and count changes of asks sent before to
   * `counts` (id, count, id, count, ...). `amPriority`: the priority of the attempt's AM ask
   * while it waits for its AM container, else null.
   */
  public synchronized void diff(String appId, List<ResourceRequest> current, Integer amPriority,
      List<RequestValues.AskRow> asks, List<Long> counts, List<Long> amAsks) {
    Map<Key, Ask> before = sent.getOrDefault(appId, Collections.emptyMap());
    Map<Key, Ask> now = new HashMap<>();
    for (ResourceRequest rr : current) {
      Key k = new Key(rr.getPriority().getPriority(), rr.getAllocationRequestId(),
          rr.getResourceName());
      int count = rr.getNumContainers();
      long[] amounts = YarnRecords.vector(rr.getCapability());
      boolean am = amPriority != null && amPriority == k.priority;
      String label = ResourceRequest.ANY.equals(k.location) ? rr.getNodeLabelExpression() : null;
      Ask was = before.get(k);
      if (was != null && was.sameShape(amounts, rr.getRelaxLocality(), am, label)) {
        now.put(k, was.count == count ? was : was.withCount(count));
        if (was.count != count) {
          counts.add(was.id);
          counts.add((long) count);
        }
      } else {
        Ask a = new Ask(++lastId, count, amounts, rr.getRelaxLocality(), am, label);
        now.put(k, a);
        asks.add(new RequestValues.AskRow(a.id, a.count, appId, k.priority, k.allocationId,
            k.location, a.relax, a.amounts).withLabel(a.label));
        if (am) {
          amAsks.add(a.id);
        }
      }
    }
    for (Map.Entry<Key, Ask> e : before.entrySet()) {
      if (now.containsKey(e.getKey())) {
        continue;
      }
      Ask gone = e.getValue();
      now.put(e.getKey(), gone.count == 0 ? gone : gone.withCount(0));
      if (gone.count > 0) {
        counts.add(gone.id);
        counts.add(0L);
      }
    }
    sent.put(appId, now);
    tally(now, 1);  // first, so a shape the app keeps is never uncounted to none in between
    tally(before, -1);
  }

  public synchronized void forget(String appId) {
    Map<Key, Ask> gone = sent.remove(appId);
    if (gone != null) {
      tally(gone, -1);
    }
  }

  public synchronized void clear() {
    sent.clear();
    outstanding = 0;
    wantedShapes.clear();
    floors = Collections.emptyList();
  }
}

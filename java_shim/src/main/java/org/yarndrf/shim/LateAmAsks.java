package org.yarndrf.shim;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.yarn.api.records.Resource;

/**
 * The leaves whose apps began waiting for their AM container since the scheduling loop last
 * collected: asks the core has not seen. A call is decided with the asks of its collection and
 * committed a call's time later, and YARN goes on taking asks meanwhile; an AM asked for in that
 * window by a queue below the one an assignment goes to is what DRF serves first, and committing
 * the assignment hands its room to the higher queue. On the SLS trace that was most of yarn-drf's
 * DRF violations (benchmarks/RESULTS.md, "DRF violations: AMs asked for while a call was out").
 * The committer gives each such assignment back (the rest of the reply it commits), at most
 * yarn-drf.scheduler.max-deferred-share of its work (DeferralBudget); the next call, made at
 * once, decides again with the AM in view. An AM ask cuts at most the replies of the one
 * call it arrived during: from the next collection on the core knows it.
 *
 * <p>"Below" is hierarchical DRF's comparison, between the two leaves' ancestors just under their
 * lowest common ancestor: weighted dominant share (ShimQueue.dominantShare over the weight YARN
 * reports). It re-checks the core's order at commit, as CapacityScheduler's tryCommit re-checks a
 * proposal; what the core weighs beyond that (per-resource weights, mins, users) it decided with
 * the asks it had, and the next call decides again.
 *
 * <p>Locking: {@link #asked} from allocate() (an app's lock); the others under the scheduler's.
 */
final class LateAmAsks {
  private final Set<ShimQueue> asked = ConcurrentHashMap.newKeySet();

  /** An app of `leaf` asked for its AM container. */
  void asked(ShimQueue leaf) {
    asked.add(leaf);
  }

  /**
   * A collection begins: the asks made from now on are late for its call. (Cleared before the
   * asks are read, so an ask made in between counts both ways: it may cut a reply it need not.)
   */
  void collecting() {
    asked.clear();
  }

  /** Whether a leaf below `leaf` asked for an AM since the collection. */
  boolean anyBelow(ShimQueue leaf, Resource cluster) {
    if (asked.isEmpty()) {
      return false;  // (the usual case: a commit pays nothing)
    }
    for (ShimQueue other : asked) {
      if (other != leaf && below(other, leaf, cluster)) {
        return true;
      }
    }
    return false;
  }

  /** Whether `a` comes before `b` in hierarchical DRF's order now. */
  static boolean below(ShimQueue a, ShimQueue b, Resource cluster) {
    List<ShimQueue> pathA = fromRoot(a);
    List<ShimQueue> pathB = fromRoot(b);
    int i = 0;
    while (i < pathA.size() && i < pathB.size() && pathA.get(i) == pathB.get(i)) {
      i++;
    }
    if (i == pathA.size() || i == pathB.size()) {
      return false;  // one holds the other: no order between them
    }
    return level(pathA.get(i), cluster) < level(pathB.get(i), cluster);
  }

  private static double level(ShimQueue q, Resource cluster) {
    return ShimQueue.dominantShare(q.getUsed(), cluster) / q.weight();
  }

  private static List<ShimQueue> fromRoot(ShimQueue q) {
    List<ShimQueue> path = new ArrayList<>();
    for (ShimQueue p = q; p != null; p = p.getParent()) {
      path.add(0, p);
    }
    return path;
  }
}

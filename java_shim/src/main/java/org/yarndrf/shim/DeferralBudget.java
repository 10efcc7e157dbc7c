package org.yarndrf.shim;

/**
 * How many of the core's assignments commits may still give back behind late AM asks
 * (LateAmAsks), so that at most yarn-drf.scheduler.max-deferred-share of the assignments the
 * scheduling loop commits or gives back are given back. Each given back is work the next call
 * does again: while AMs arrive faster than a call takes (a burst of submissions on a large
 * cluster), giving back every one cost the loop half its work (benchmarks/RESULTS.md, "The
 * 5,000-node shortfall").
 *
 * <p>A token bucket: an assignment committed earns share / (1 - share) of a deferral, a deferral
 * spends one, and at most a reply's worth is kept, so a burst after a quiet spell may give back
 * one whole reply. Share 1 gives back every one (no bound), 0 none. Used by the scheduling loop's
 * commit only (one thread).
 */
final class DeferralBudget {
  /** A reply's worth: serve's default --max-assignments-per-call. */
  static final double MOST_KEPT = 64;

  private final boolean unbounded;
  private final double earnedPerCommit;
  private double left = MOST_KEPT;

  DeferralBudget(double maxDeferredShare) {
    if (!(maxDeferredShare >= 0 && maxDeferredShare <= 1)) {
      throw new IllegalArgumentException(ShimConf.MAX_DEFERRED_SHARE
          + " must be between 0 and 1, got " + maxDeferredShare);
    }
    this.unbounded = maxDeferredShare == 1;
    this.earnedPerCommit = unbounded ? 0 : maxDeferredShare / (1 - maxDeferredShare);
    if (maxDeferredShare == 0) {
      left = 0;
    }
  }

  /** Whether one more assignment may be given back; if so it is counted. */
  boolean take() {
    if (unbounded) {
      return true;
    }
    if (left < 1) {
      return false;
    }
    left -= 1;
    return true;
  }

  /** An assignment was committed (not given back). */
  void committed() {
    left = Math.min(MOST_KEPT, left + earnedPerCommit);
  }
}

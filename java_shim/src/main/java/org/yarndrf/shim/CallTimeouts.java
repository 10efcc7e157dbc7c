package org.yarndrf.shim;

import java.util.Arrays;
import java.util.function.IntSupplier;

/**
 * How long a schedule call may take, from the calls measured: a fixed timeout either fails every
 * call of a loaded machine (each failure used to cost a full resync, itself slower than a call) or
 * waits needlessly long on a quiet one. The rule: the configured timeout doubled as often as it
 * takes to reach {@code FACTOR x the 90th percentile of the last WINDOW calls}, at most {@code
 * capMs} (beyond the time a snapshot may take, a resync is no dearer than waiting). Doublings, not
 * the figure itself: a connection's timeout is fixed when it opens, so the schedule channel opens
 * a new one only when the timeout moves a step. Each time a call is asked again after a timeout,
 * the wait doubles, up to the cap too. A call's time is the whole of it, its timed-out attempts
 * included, so a slow spell raises the next timeouts.
 *
 * <p>Locking: none; only the scheduling loop's thread uses it.
 */
final class CallTimeouts {
  /** Calls remembered; fewer than MIN_SAMPLES say nothing yet. */
  static final int WINDOW = 32;
  static final int MIN_SAMPLES = 8;
  static final int FACTOR = 3;
  /** Attempts after the first before the session gives up and resyncs. */
  static final int RETRIES = 2;

  private final int configuredMs;
  private final IntSupplier capMs;
  private final long[] recentMs = new long[WINDOW];
  private int samples;

  /** @param capMs the longest wait (the snapshot channel's timeout now), at least configuredMs */
  CallTimeouts(int configuredMs, IntSupplier capMs) {
    this.configuredMs = configuredMs;
    this.capMs = capMs;
  }

  /** A call (all its attempts) got its answer after {@code ms}. */
  void took(long ms) {
    recentMs[samples++ % WINDOW] = ms;
  }

  /** The wait of attempt {@code attempt} (0: the first) of the next call. */
  int forAttempt(int attempt) {
    long ms = (long) timeoutMs() << Math.min(attempt, RETRIES);
    return (int) Math.min(ms, cap());
  }

  /** The first attempt's wait. */
  int timeoutMs() {
    int n = Math.min(samples, WINDOW);
    if (n < MIN_SAMPLES) {
      return configuredMs;
    }
    long[] sorted = Arrays.copyOf(recentMs, n);
    Arrays.sort(sorted);
    long wanted = FACTOR * sorted[(n * 9 + 9) / 10 - 1];  // 3 x p90
    long ms = configuredMs;
    while (ms < wanted && ms < cap()) {
      ms *= 2;
    }
    return (int) Math.min(cap(), ms);
  }

  private long cap() {
    return Math.max(configuredMs, capMs.getAsInt());
  }
}

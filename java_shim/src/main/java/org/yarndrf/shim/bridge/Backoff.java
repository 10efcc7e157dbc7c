package org.yarndrf.shim.bridge;

/** Exponential backoff between reconnect attempts: initial, x2 per failure, capped; reset on success. */
public final class Backoff {
  private final long initialMs;
  private final long maxMs;
  private long currentMs;
  private long nextAttemptAtMs;

  public Backoff(long initialMs, long maxMs) {
    this.initialMs = initialMs;
    this.maxMs = Math.max(initialMs, maxMs);
  }

  public boolean mayAttempt(long nowMs) {
    return nowMs >= nextAttemptAtMs;
  }

  /** Milliseconds from nowMs until the next attempt is allowed (0: now). */
  public long waitMs(long nowMs) {
    return Math.max(0, nextAttemptAtMs - nowMs);
  }

  /** Records a failure at nowMs; returns the wait before the next attempt. */
  public long failed(long nowMs) {
    currentMs = currentMs == 0 ? initialMs : Math.min(maxMs, currentMs * 2);
    nextAttemptAtMs = nowMs + currentMs;
    return currentMs;
  }

  public void succeeded() {
    currentMs = 0;
    nextAttemptAtMs = 0;
  }
}

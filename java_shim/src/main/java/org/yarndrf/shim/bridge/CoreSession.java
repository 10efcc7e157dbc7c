package org.yarndrf.shim.bridge;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One conversation with the core over a {@link CoreChannel}: every failure (unreachable, timeout,
 * malformed reply, a listener that is not the core) is logged, counted and turned into "no
 * answer", and leaves the session needing a resync, because the core may have half-applied the
 * batch; except a timeout of a call its caller will send again ({@link #exchangeOrTimeOut}).
 * While failing, calls are spaced by a {@link Backoff}. A core that stops answering for long can
 * be reported to whoever can restart it ({@link #whenUnresponsive}).
 *
 * <p>Locking: its own; in the shim, one thread (the scheduling loop) makes every call.
 */
public final class CoreSession {
  private static final Logger LOG = LoggerFactory.getLogger(CoreSession.class);

  private final CoreChannel channel;
  private final CoreChannel slowChannel;
  private final Backoff backoff;
  private final LongSupplier clockMs;
  private volatile boolean needsResync = true;
  private volatile boolean lastCallTimedOut;
  private long lastAnswerMs;
  private int failedSinceAnswer;
  private int unresponsiveCalls;
  private long unresponsiveMs;
  private Consumer<String> onUnresponsive;

  public final AtomicLong calls = new AtomicLong();
  public final AtomicLong failures = new AtomicLong();
  public final AtomicLong timeouts = new AtomicLong();
  /** Timeouts answered by asking again with the same request, not by a resync. */
  public final AtomicLong retried = new AtomicLong();
  public final AtomicLong malformed = new AtomicLong();
  public final AtomicLong unverified = new AtomicLong();
  public final AtomicLong skipped = new AtomicLong();
  public final AtomicLong resyncs = new AtomicLong();

  public CoreSession(CoreChannel channel, Backoff backoff, LongSupplier clockMs) {
    this(channel, channel, backoff, clockMs);
  }

  /**
   * @param slowChannel the same core with a longer timeout, for snapshots and reloads, whose
   *     size grows with the cluster
   */
  public CoreSession(CoreChannel channel, CoreChannel slowChannel, Backoff backoff,
      LongSupplier clockMs) {
    this.channel = channel;
    this.slowChannel = slowChannel;
    this.backoff = backoff;
    this.clockMs = clockMs;
    this.lastAnswerMs = clockMs.getAsLong();
  }

  /**
   * Calls `action` (with a description) when at least `calls` calls in a row have failed to reach
   * the core and it has not answered for `afterMs`; then counts afresh. A listener that is not the
   * core does not count: restarting ours would not move it.
   */
  public synchronized void whenUnresponsive(int calls, long afterMs, Consumer<String> action) {
    this.unresponsiveCalls = calls;
    this.unresponsiveMs = afterMs;
    this.onUnresponsive = action;
  }

  /** True when the next exchange must be a full snapshot (first contact, or after any failure). */
  public boolean needsResync() {
    return needsResync;
  }

  public void resynced() {
    needsResync = false;
    resyncs.incrementAndGet();
  }

  /** Makes the next exchange a snapshot: YARN's state changed in a way the core was not told. */
  public void resyncNext(String why) {
    needsResync = true;
    LOG.warn("yarn-drf bridge: {}; resync with a full snapshot next", why);
  }

  /** Whether the last call timed out: the core may have applied it. */
  public boolean lastCallTimedOut() {
    return lastCallTimedOut;
  }

  /** Whether a call may be attempted now (false while backing off after a failure). */
  public boolean mayCall() {
    return backoff.mayAttempt(clockMs.getAsLong());
  }

  /**
   * The next call need not wait out the backoff: the core was not listening and now is (a child
   * reported its port), so the failures behind the backoff say nothing about it.
   */
  public void retryNow() {
    backoff.succeeded();
  }

  /** Milliseconds until a call may be attempted again (0: now). */
  public long retryInMs() {
    return backoff.waitMs(clockMs.getAsLong());
  }

  /**
   * Sends one request. Returns its reply as `decoder` reads it, or null after logging and
   * counting why not (unreachable, timed out, or a reply the decoder refuses).
   * @param what a short name for the log ("schedule 17", "snapshot")
   * @param ignoreBackoff true for calls that must not wait for the backoff
   */
  public <T> T exchange(String what, String request, boolean ignoreBackoff,
      ReplyDecoder<T> decoder) {
    return exchange(channel, what, request, ignoreBackoff, true, decoder);
  }

  /**
   * Like exchange, but a timeout leaves the session in sync: null with {@link #lastCallTimedOut},
   * for the caller to send the same request again, which the core answers with the reply it gave
   * it (applying it once). Only a caller that does so may use this.
   */
  public <T> T exchangeOrTimeOut(String what, String request, boolean ignoreBackoff,
      ReplyDecoder<T> decoder) {
    return exchange(channel, what, request, ignoreBackoff, false, decoder);
  }

  /** Like exchange, with the slow channel's longer timeout (snapshots, reloads). */
  public <T> T exchangeSlow(String what, String request, ReplyDecoder<T> decoder) {
    return exchange(slowChannel, what, request, true, true, decoder);
  }

  private <T> T exchange(CoreChannel via, String what, String request, boolean ignoreBackoff,
      boolean timeoutFails, ReplyDecoder<T> decoder) {
    lastCallTimedOut = false;
    if (!ignoreBackoff && !mayCall()) {
      skipped.incrementAndGet();
      return null;
    }
    calls.incrementAndGet();
    String reply;
    try {
      reply = via.call(request);
    } catch (CoreUnavailableException e) {
      if (e.isTimeout()) {
        timeouts.incrementAndGet();
      }
      if (e.isTimeout() && !timeoutFails) {
        lastCallTimedOut = true;
        retried.incrementAndGet();
        LOG.warn("yarn-drf bridge: {} timed out ({}); asking again with the same request [timeouts={}"
            + " retried={}]", what, e.getMessage(), timeouts.get(), retried.get());
        noAnswer();
        return null;
      }
      failures.incrementAndGet();
      if (e.isUnverified()) {
        unverified.incrementAndGet();
      }
      lastCallTimedOut = e.isTimeout();
      fail(what, (e.isTimeout() ? "timed out" : "unavailable") + ": " + e.getMessage());
      if (!e.isUnverified()) {
        noAnswer();
      }
      return null;
    }
    answered();
    try {
      T decoded = decoder.decode(reply);
      backoff.succeeded();
      return decoded;
    } catch (MalformedReplyException e) {
      malformed.incrementAndGet();
      fail(what, "malformed reply: " + e.getMessage());
      return null;
    }
  }

  private synchronized void answered() {
    lastAnswerMs = clockMs.getAsLong();
    failedSinceAnswer = 0;
  }

  private void noAnswer() {
    String why;
    Consumer<String> action;
    synchronized (this) {
      long silentMs = clockMs.getAsLong() - lastAnswerMs;
      if (onUnresponsive == null || ++failedSinceAnswer < unresponsiveCalls
          || silentMs < unresponsiveMs) {
        return;
      }
      why = "no answer for " + silentMs + " ms (" + failedSinceAnswer + " calls in a row failed)";
      action = onUnresponsive;
      answered();  // counts afresh: the next report comes after as long again
    }
    action.accept(why);
  }

  private void fail(String what, String why) {
    needsResync = true;
    long waitMs = backoff.failed(clockMs.getAsLong());
    LOG.warn("yarn-drf bridge: {} {}; assigning nothing, resync with a full snapshot next "
        + "(retry in {} ms) [failures={} timeouts={} malformed={}]", what, why, waitMs,
        failures.get(), timeouts.get(), malformed.get());
  }

  public String counters() {
    return "calls=" + calls.get() + " failures=" + failures.get() + " timeouts=" + timeouts.get()
        + " malformed=" + malformed.get() + " unverified=" + unverified.get() + " skipped="
        + skipped.get() + " resyncs=" + resyncs.get() + " retried=" + retried.get();
  }

  public void close() {
    channel.close();
    if (slowChannel != channel) {
      slowChannel.close();
    }
  }
}

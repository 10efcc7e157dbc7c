package org.yarndrf.shim.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One conversation with the core over a {@link CoreChannel}: every failure (unreachable, timeout,
 * malformed reply, a listener that is not the core) is logged, counted and turned into "no
 * answer", and leaves the session needing a resync, because the core may have half-applied the
 * batch. While failing, calls are spaced by a {@link Backoff}. A core that stops answering for
 * long can be reported to whoever can restart it ({@link #whenUnresponsive}).
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
   * Sends one request. Returns the checked reply, or null after logging and counting why not.
   * @param what a short name for the log ("heartbeat node1:8041", "submit app_1")
   * @param ignoreBackoff true for calls that must not wait for the backoff (app submission)
   */
  public JsonNode exchange(String what, String request, boolean ignoreBackoff) {
    return exchange(channel, what, request, ignoreBackoff);
  }

  /** Like exchange, with the slow channel's longer timeout (snapshots, reloads). */
  public JsonNode exchangeSlow(String what, String request) {
    return exchange(slowChannel, what, request, true);
  }

  private JsonNode exchange(CoreChannel via, String what, String request, boolean ignoreBackoff) {
    if (!ignoreBackoff && !mayCall()) {
      skipped.incrementAndGet();
      return null;
    }
    calls.incrementAndGet();
    lastCallTimedOut = false;
    String reply;
    try {
      reply = via.call(request);
    } catch (CoreUnavailableException e) {
      failures.incrementAndGet();
      if (e.isTimeout()) {
        timeouts.incrementAndGet();
      }
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
      JsonNode node = Protocol.decodeReply(reply);
      backoff.succeeded();
      return node;
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

  /** Reports a reply that was well-formed as an envelope but not in its content. */
  public void malformedContent(String what, String problem) {
    malformed.incrementAndGet();
    fail(what, "malformed reply: " + problem);
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
        + skipped.get() + " resyncs=" + resyncs.get();
  }

  public void close() {
    channel.close();
    if (slowChannel != channel) {
      slowChannel.close();
    }
  }
}

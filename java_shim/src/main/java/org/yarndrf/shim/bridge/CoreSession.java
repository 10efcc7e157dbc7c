package org.yarndrf.shim.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One conversation with the core over a {@link CoreChannel}: every failure (unreachable, timeout,
 * malformed reply) is logged, counted and turned into "no answer", and leaves the session
 * needing a resync, because the core may have half-applied the batch. While failing, calls are
 * spaced by a {@link Backoff}.
 */
public final class CoreSession {
  private static final Logger LOG = LoggerFactory.getLogger(CoreSession.class);

  private final CoreChannel channel;
  private final CoreChannel slowChannel;
  private final Backoff backoff;
  private final LongSupplier clockMs;
  private volatile boolean needsResync = true;

  public final AtomicLong calls = new AtomicLong();
  public final AtomicLong failures = new AtomicLong();
  public final AtomicLong timeouts = new AtomicLong();
  public final AtomicLong malformed = new AtomicLong();
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
  }

  /** True when the next exchange must be a full snapshot (first contact, or after any failure). */
  public boolean needsResync() {
    return needsResync;
  }

  public void resynced() {
    needsResync = false;
    resyncs.incrementAndGet();
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
    String reply;
    try {
      reply = via.call(request);
    } catch (CoreUnavailableException e) {
      failures.incrementAndGet();
      if (e.isTimeout()) {
        timeouts.incrementAndGet();
      }
      fail(what, (e.isTimeout() ? "timed out" : "unavailable") + ": " + e.getMessage());
      return null;
    }
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
        + " malformed=" + malformed.get() + " skipped=" + skipped.get() + " resyncs="
        + resyncs.get();
  }

  public void close() {
    channel.close();
    if (slowChannel != channel) {
      slowChannel.close();
    }
  }
}

package org.yarndrf.shim;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.shim.bridge.CoreDir;
import org.yarndrf.shim.bridge.CoreSession;
import org.yarndrf.shim.bridge.MalformedReplyException;
import org.yarndrf.shim.bridge.PortFileWatch;
import org.yarndrf.shim.bridge.ReplyDecoder;
import org.yarndrf.shim.bridge.ServePorts;
import org.yarndrf.shim.bridge.ServeSupervisor;

/**
 * The shim's conversation with its core: the session (failures, backoff, the unresponsive-child
 * restart), the epochs that keep a late request from touching a rebuilt core, the resync by a
 * full snapshot, and the calls the scheduling loop makes (snapshot, schedule, reload). Any failure
 * means "nothing allocated from this call, a snapshot next"; a schedule call that times out is
 * asked again first ({@link #schedule}).
 *
 * <p>It also owns the core's private directory and, in child mode, the child's supervisor and
 * the ports the child reported; {@link #close} stops and deletes them all.
 *
 * <p>Locking: none of its own. The scheduling loop's thread makes every call; the scheduler only
 * creates it, waits for its first answer, and closes it when the RM stops.
 */
final class BridgeClient {
  private static final Logger LOG = LoggerFactory.getLogger(BridgeClient.class);

  /** What came of a reload: the core's reply, or none (then whether the call timed out). */
  static final class ReloadOutcome {
    final ReplyValues.ReloadReply reply;
    final boolean timedOut;

    ReloadOutcome(ReplyValues.ReloadReply reply, boolean timedOut) {
      this.reply = reply;
      this.timedOut = timedOut;
    }
  }

  private final CoreSession session;
  /** The channel of snapshots and reloads, sized by each snapshot; null over a test channel. */
  private final SizedTimeoutChannel snapshotChannel;
  private final SizedTimeoutChannel scheduleChannel;
  private final CallTimeouts timeouts;
  private final ServeSupervisor supervisor;
  /** The ports the child reported (null unless in child mode), and the private directory. */
  private final ServePorts ports;
  private final CoreDir dir;
  private final int slowTimeoutMs;
  /** When (System.nanoTime) the first snapshot the core answered was sent. */
  private volatile long answeredSnapshotSentNanos;
  /** Notified when a snapshot's answer has been applied and when the child exits: a start wait ends. */
  private final Object startEvents = new Object();
  /** Guarded by startEvents. */
  private boolean answered;
  /** Wakes the scheduling loop (given by it when it starts). */
  private volatile Runnable wakeLoop = () -> { };
  /** Child mode: wakes the loop when the child writes its port file; null when it cannot. */
  private PortFileWatch portWatch;
  /** ServePorts.seenNanos of the child the loop last found listening (the loop's thread only). */
  private long listeningSince;
  /**
   * Incremented by every snapshot and sent with every request: the core refuses requests of an
   * older epoch, so a request that timed out here but reaches Python late cannot change the
   * state rebuilt from a newer snapshot.
   */
  private long epoch;
  /** The last successful schedule call, encoding and decoding included; sent with the next. */
  private long lastRoundTripNanos;
  private long lastCallMs;

  /**
   * @param scheduleChannel the session's channel of schedule calls, whose timeout {@code
   *     timeouts} sets per attempt; null over a test channel
   */
  BridgeClient(CoreSession session, SizedTimeoutChannel scheduleChannel,
      SizedTimeoutChannel snapshotChannel, CallTimeouts timeouts, ServeSupervisor supervisor,
      ServePorts ports, CoreDir dir, int slowTimeoutMs) {
    this.session = session;
    this.scheduleChannel = scheduleChannel;
    this.timeouts = timeouts;
    this.snapshotChannel = snapshotChannel;
    this.supervisor = supervisor;
    this.ports = ports;
    this.dir = dir;
    this.slowTimeoutMs = slowTimeoutMs;
  }

  long epoch() {
    return epoch;
  }

  /**
   * The epoch of the next snapshot. Milliseconds since 1970 keep epochs increasing across RM
   * restarts, which matters when the service outlives the RM (external mode).
   */
  long newEpoch() {
    epoch = Math.max(epoch + 1, System.currentTimeMillis());
    return epoch;
  }

  /**
   * Keeps `wake` to call the loop when the child starts listening, and runs it whenever the
   * supervised service was restarted (child mode), after marking a snapshot due: the new service
   * knows nothing, and an idle cluster would make no call to tell it.
   */
  void whenCoreRestarts(Runnable wake) {
    wakeLoop = wake;
    if (supervisor != null) {
      supervisor.whenRestarted(() -> {
        session.resyncNext("the core service was restarted");
        wake.run();
      });
    }
  }

  /**
   * Child mode, before the first child starts: the loop is woken the moment a child writes its
   * port file, and ends a start wait when a child exits. Where the directory cannot be watched
   * the loop calls the core as it starts, spaced by the backoff.
   */
  void watchChild() {
    supervisor.whenExited(this::startEvent);
    try {
      portWatch = PortFileWatch.start(dir.portFile(), () -> wakeLoop.run());
    } catch (IOException | RuntimeException e) {
      LOG.warn("yarn-drf: cannot watch {} for the core's ports ({}); calling the core while it "
          + "starts, with backoff", dir.portFile(), e.toString());
    }
  }

  boolean needsResync() {
    return session.needsResync();
  }

  /**
   * Whether the core listens: always in external mode (or where its port file cannot be watched);
   * in child mode once the current child has written its port file. The loop's thread only: a
   * child found listening anew (the first, or one the supervisor restarted) is called at once,
   * not after the backoff that the calls made while it was not there built up.
   */
  boolean coreListening() {
    if (portWatch == null) {
      return true;
    }
    if (!ports.reported()) {
      return false;
    }
    long seen = ports.seenNanos();
    if (seen != listeningSince) {
      listeningSince = seen;
      session.retryNow();
    }
    return true;
  }

  /** Whether a snapshot may be sent now: the core listens and no backoff holds calls back. */
  boolean mayResync() {
    return coreListening() && session.mayCall();
  }

  long retryInMs() {
    return session.retryInMs();
  }

  void resyncNext(String why) {
    session.resyncNext(why);
  }

  /** Nodes, apps, containers and asks: what the core's work on a snapshot grows with. */
  private static long items(RequestValues.Snapshot s) {
    return s.nodes.size() + s.apps.size() + s.containers.size() + s.asks.size();
  }

  /** Sends YARN's full state; returns the core's queue tree, or null if the core did not take it. */
  List<QueueSettings> resync(RequestValues.Snapshot snapshot) {
    int timeoutMs = snapshotChannel == null ? slowTimeoutMs
        : snapshotChannel.sizeFor(items(snapshot));
    long sent = System.nanoTime();
    List<QueueSettings> queues = session.exchangeSlow("snapshot", Messages.encode(snapshot),
        Messages::snapshotReply);
    if (queues == null) {
      return null;
    }
    if (answeredSnapshotSentNanos == 0) {
      answeredSnapshotSentNanos = sent;
    }
    session.resynced();
    LOG.info("yarn-drf bridge: core resynchronised ({} nodes, {} apps, {} containers, {} asks; "
        + "timeout {} ms) [{}]", snapshot.nodes.size(), snapshot.apps.size(),
        snapshot.containers.size(), snapshot.asks.size(), timeoutMs, session.counters());
    return queues;
  }

  /**
   * One schedule call; the reply, or null after a failure (counted and logged by the session).
   * A timeout is no failure: the core usually goes on to apply the call, so the same request
   * (same text: nothing collected twice, nothing new collected meanwhile) goes again with a longer
   * wait, and the core answers it with the reply it gave the first (docs/bridge.md, "Retries"). Only
   * when the last retry times out too, or the core refuses the request, is its state unknown:
   * then the session needs a resync.
   */
  ReplyValues.ScheduleReply schedule(RequestValues.Schedule request) {
    if (lastRoundTripNanos > 0) {
      request.rttMs = lastRoundTripNanos / 1e6;
    }
    String what = "schedule " + request.seq;
    String text = Messages.encode(request);
    ReplyDecoder<ReplyValues.ScheduleReply> decoder = reply -> {
      ReplyValues.ScheduleReply r = Messages.scheduleReply(reply);
      if (r.seq != request.seq) {
        throw new MalformedReplyException("reply seq " + r.seq + " for request " + request.seq);
      }
      return r;
    };
    long start = System.nanoTime();
    ReplyValues.ScheduleReply reply = null;
    for (int attempt = 0; reply == null; attempt++) {
      if (scheduleChannel != null) {
        scheduleChannel.useTimeoutMs(timeouts.forAttempt(attempt));
      }
      boolean retry = attempt > 0;
      reply = attempt < CallTimeouts.RETRIES
          ? session.exchangeOrTimeOut(what, text, retry, decoder)
          : session.exchange(what, text, retry, decoder);
      if (reply == null && (attempt == CallTimeouts.RETRIES || !session.lastCallTimedOut())) {
        break;
      }
    }
    long took = System.nanoTime() - start;
    lastCallMs = TimeUnit.NANOSECONDS.toMillis(took);
    lastRoundTripNanos = reply == null ? 0 : took;
    if (reply != null) {
      timeouts.took(lastCallMs);
    }
    return reply;
  }

  /** How long the last schedule call took, all its attempts included, in milliseconds. */
  long lastCallMs() {
    return lastCallMs;
  }

  /** `yarn rmadmin -refreshQueues`: the core re-reads its queue file (`path`: what YARN names). */
  ReloadOutcome reload(String path) {
    RequestValues.Reload request = new RequestValues.Reload(epoch);
    request.path = path;
    ReplyValues.ReloadReply reply = session.exchangeSlow("reload", Messages.encode(request),
        Messages::reloadReply);
    return new ReloadOutcome(reply, reply == null && session.lastCallTimedOut());
  }

  /** `yarn application -movetoqueue`: the core's answer, or null after a failure. */
  ReplyValues.MoveReply move(String app, String queue, String user, List<String> groups) {
    RequestValues.Move request = new RequestValues.Move(epoch, app, queue, user);
    request.groups.addAll(groups);
    return session.exchangeSlow("move", Messages.encode(request), Messages::moveReply);
  }

  /** How long a snapshot or reload call may take now, in milliseconds. */
  int slowTimeoutMs() {
    return snapshotChannel == null ? slowTimeoutMs : snapshotChannel.timeoutMs();
  }

  /** The core's answer to a snapshot is applied (YARN's queue tree is the core's): a start wait ends. */
  void snapshotApplied() {
    synchronized (startEvents) {
      answered = true;
      startEvents.notifyAll();
    }
  }

  private void startEvent() {
    synchronized (startEvents) {
      startEvents.notifyAll();
    }
  }

  /**
   * Waits until the core has answered its first snapshot, at most `timeoutMs`; a child that exits
   * meanwhile ends the wait at once (the supervisor starts another, but the reason is the
   * operator's to see now). Says in the RM's log how long the core took from `sinceNanos` (the
   * scheduler's start, System.nanoTime) and where that time went, or why it has not answered.
   * Returns whether it answered.
   */
  boolean awaitFirstAnswer(long sinceNanos, long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    String exited = null;
    boolean done;
    synchronized (startEvents) {
      while (!answered) {
        exited = supervisor == null ? null : supervisor.lastExit();
        long leftNanos = deadline - System.nanoTime();
        if (exited != null || leftNanos <= 0) {
          break;
        }
        startEvents.wait(TimeUnit.NANOSECONDS.toMillis(leftNanos) + 1);
      }
      done = answered;
    }
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sinceNanos);
    if (done) {
      LOG.info("yarn-drf: the core answered its first call {} ms after the scheduler started{}",
          tookMs, startBreakdown(sinceNanos));
      return true;
    }
    LOG.error("yarn-drf: the core has not answered {} ms after the scheduler started: {}. The "
        + "ResourceManager goes on without it and allocates nothing until it answers [{}]", tookMs,
        exited != null ? "the core service ended, " + exited : notAnsweredBecause(timeoutMs),
        session.counters());
    return false;
  }

  /** Where a start's time went: the child's spawn, its port reported, the snapshot it answered. */
  private String startBreakdown(long sinceNanos) {
    if (ports == null) {
      return "";
    }
    return " (bridge port " + ports.bridgePort() + "; child started at "
        + msSince(sinceNanos, supervisor.startedNanos()) + ", reported its port at "
        + msSince(sinceNanos, ports.seenNanos()) + ", answered a snapshot sent at "
        + msSince(sinceNanos, answeredSnapshotSentNanos) + ")";
  }

  private static String msSince(long sinceNanos, long nanos) {
    return nanos == 0 ? "?" : TimeUnit.NANOSECONDS.toMillis(nanos - sinceNanos) + " ms";
  }

  private String notAnsweredBecause(long timeoutMs) {
    String waited = "waited " + ShimConf.START_TIMEOUT_MS + "=" + timeoutMs + " ms";
    if (ports == null) {
      return waited + " for the service on the bridge port";
    }
    return waited + (ports.bridgePort() == ServePorts.UNKNOWN
        ? ", and the child has not reported a port (still starting, or hung)"
        : " after the child listened on 127.0.0.1:" + ports.bridgePort());
  }

  /** The status server's port the child reported; 0 if it runs none; UNKNOWN if not known. */
  int statusPort() {
    return ports == null ? ServePorts.UNKNOWN : ports.statusPort();
  }

  /** The core's private directory (a child's token and port file, queue file copies). */
  CoreDir privateDir() {
    return dir;
  }

  String counters() {
    return session.counters();
  }

  /**
   * Stops the child first (a call under way then fails at once instead of running out its
   * timeout), then closes the channels and deletes the child's private directory.
   */
  void close() {
    if (supervisor != null) {
      supervisor.stop();
    }
    if (portWatch != null) {
      portWatch.close();
    }
    LOG.info("yarn-drf bridge stopping: {}", session.counters());
    session.close();
    if (dir != null) {
      dir.close();
    }
  }
}

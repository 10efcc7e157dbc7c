package org.yarndrf.shim;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduling thread, as CapacityScheduler's global scheduling (YARN-5139) has one: NODE_UPDATE
 * only records what YARN reports, and this thread, whenever something changed, sends everything
 * that changed since its last call (events, asks, submissions) and every node that heartbeated
 * since it was last offered and whose free room fits some outstanding ask ({@link NodeOffers}) in
 * one call, then commits the core's assignments, each re-checked. Idle cluster: no calls. Busy:
 * calls as heartbeats come, each covering the nodes that heartbeated meanwhile.
 *
 * <p>Unlike CapacityScheduler's thread, which visits every node every few milliseconds, it sleeps
 * until woken by a change ({@link #wake}), or, while YARN has asks outstanding, for at most the
 * recheck interval: a reload on the core's side or a starvation timeout can make room for them
 * without any change in YARN. When the core's reply names a time it wants a call by (a
 * preemption round or kill due: "call_in_ms"), the sleep ends then, never sooner than
 * {@link #MIN_CALL_WAIT_MS} from now, so kills come at their deadline and not up to a recheck
 * later. A restarted core service wakes it too, for a snapshot at once. A call that times out is
 * asked again, the same request with a longer wait ({@link BridgeClient#schedule}), and slow calls
 * make the next ones offer fewer nodes ({@link NodeOffers#callTook}). A
 * failed call is retried, after the session's backoff, as a full
 * snapshot; the thread survives any outage and allocates nothing while it lasts.
 *
 * <p>Locking: takes the scheduler's lock only to collect a request (cheap copies) and to commit a
 * reply; never during a call to the core. The {@link Yarn} methods are called under that lock,
 * except {@link Yarn#mayAllocate} and {@link Yarn#hasOutstandingAsks}, which need none. Its own
 * monitor guards only the wake-up flag.
 */
public final class SchedulingLoop implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(SchedulingLoop.class);
  /** While the RM waits for NodeManagers to re-register after a restart, readiness is polled this often. */
  private static final long READY_POLL_MS = 200;
  /** After an unexpected error the loop pauses this long, then resyncs. */
  private static final long ERROR_PAUSE_MS = 1000;
  /** The shortest sleep before a call the core asked for: never a busy loop, whatever it asks. */
  static final long MIN_CALL_WAIT_MS = 10;
  private static final long NO_CALL_DUE = Long.MIN_VALUE;

  /** What the loop needs from YARN's side (the scheduler), called under the scheduler's lock. */
  interface Yarn {
    /** Whether containers may be allocated (false while a restarted RM waits for its nodes). */
    boolean mayAllocate();

    /** Whether some app has asks the core has been told of and not yet served. */
    boolean hasOutstandingAsks();

    /** YARN's whole state; everything queued before it is superseded by it. */
    RequestValues.Snapshot snapshot(long epoch);

    /** After a snapshot: the core's queue tree, or null if the core did not take it. */
    void resynced(List<QueueSettings> queues);

    /**
     * The changes since the last call and every node with room for some outstanding ask (none
     * while !mayAllocate), or
     * null when nothing changed and `force` is false.
     */
    RequestValues.Schedule collect(long epoch, long seq, boolean force);

    /** Re-checks and commits the core's answer. */
    void commit(ReplyValues.ScheduleReply reply);

    /** A schedule call took {@code ms}, all its attempts included, answered or not. */
    void callTook(long ms);

    /** Whether something waits for the next call (events, changed asks, submissions). */
    boolean hasPendingChanges();
  }

  /** One schedule call, as the benchmarks read it: what it covered and where its time went. */
  public static final class CallRecord {
    /** Nodes with room it decided for; NodeManager heartbeats since the previous call. */
    public final int nodes;
    public final long heartbeats;
    /** Deltas, containers started and finished, asks and counts it carried; apps it placed. */
    public final int changes;
    public final int submissions;
    /** Assignments the core made; those committed and those refused on re-check. */
    public final int assignments;
    public final long applied;
    public final long refused;
    /** Under the scheduler's lock collecting; the call (encoding, py4j, the core, decoding); under the lock committing. */
    public final long collectNanos;
    public final long callNanos;
    public final long commitNanos;

    CallRecord(RequestValues.Schedule req, ReplyValues.ScheduleReply reply, long applied,
        long refused, long collectNanos, long callNanos, long commitNanos) {
      this.nodes = req.nodes.size();
      this.heartbeats = req.heartbeats;
      this.changes = req.deltas.size() + req.started.size() + req.finished.size() / 2
          + req.asks.size() + req.counts.size() / 2;
      this.submissions = req.submissions.size();
      this.assignments = reply.assignments.size();
      this.applied = applied;
      this.refused = refused;
      this.collectNanos = collectNanos;
      this.callNanos = callNanos;
      this.commitNanos = commitNanos;
    }
  }

  /** Told of every schedule call that got a reply, on the loop's thread: keep it short. */
  public interface Observer {
    void called(CallRecord call);
  }

  /** A call a caller's thread waits for (a -refreshQueues, a move), made by the loop's thread. */
  private static final class Pending<T> {
    final Function<BridgeClient, T> call;
    final T failed;
    final CompletableFuture<T> outcome = new CompletableFuture<>();

    Pending(Function<BridgeClient, T> call, T failed) {
      this.call = call;
      this.failed = failed;
    }

    void serve(BridgeClient bridge) {
      try {
        outcome.complete(call.apply(bridge));
      } catch (RuntimeException e) {
        outcome.completeExceptionally(e);
        throw e;
      }
    }

    void fail() {
      outcome.complete(failed);
    }
  }

  private final Object schedulerLock;
  private final Yarn yarn;
  private final BridgeClient bridge;
  private final AssignmentCommitter committer;
  private final long recheckMs;
  private final ConcurrentLinkedQueue<Pending<?>> pending = new ConcurrentLinkedQueue<>();
  private volatile Observer observer;
  private final LoopClock clock = new LoopClock();
  private Thread thread;
  private volatile boolean stopping;
  /** Set by wake(): something changed since the loop last collected. Guarded by this. */
  private boolean work = true;
  private boolean wasReady;
  private long seq;
  /** When (System.nanoTime) the core's last reply asked for a call by; NO_CALL_DUE: none. */
  private long callDueNanos = NO_CALL_DUE;
  /** When (System.nanoTime) the last schedule call went out: the recheck counts from it. */
  private long lastCallNanos = System.nanoTime();

  /** Schedule calls that got a reply, and what they covered in all (the timing hooks). */
  public final AtomicLong calls = new AtomicLong();
  public final AtomicLong nodes = new AtomicLong();
  public final AtomicLong heartbeats = new AtomicLong();
  public final AtomicLong collectNanos = new AtomicLong();
  public final AtomicLong callNanos = new AtomicLong();
  public final AtomicLong commitNanos = new AtomicLong();

  SchedulingLoop(Object schedulerLock, Yarn yarn, BridgeClient bridge,
      AssignmentCommitter committer, long recheckMs) {
    this.schedulerLock = schedulerLock;
    this.yarn = yarn;
    this.bridge = bridge;
    this.committer = committer;
    this.recheckMs = recheckMs;
  }

  synchronized void start() {
    bridge.whenCoreRestarts(this::wake);
    thread = new Thread(this, "yarn-drf-scheduling-loop");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Ends the thread without waiting for it: no call starts after this, and the callers waiting
   * for one get `failed`. A call under way ends when the bridge is closed (its child killed), or at
   * its timeout; {@link #awaitStopped} waits for that.
   */
  void stop() {
    Thread t;
    synchronized (this) {
      stopping = true;
      notifyAll();
      t = thread;
    }
    if (t != null) {
      t.interrupt();
    }
    for (Pending<?> p; (p = pending.poll()) != null;) {
      p.fail();
    }
  }

  /** Waits at most `ms` for the thread to end; whether it has. */
  boolean awaitStopped(long ms) throws InterruptedException {
    Thread t;
    synchronized (this) {
      t = thread;
    }
    if (t != null) {
      t.join(ms);
    }
    return t == null || !t.isAlive();
  }

  /** What the loop's thread is doing (WAITING: until woken, TIMED_WAITING: a timer): for tests. */
  synchronized Thread.State threadState() {
    return thread == null ? Thread.State.NEW : thread.getState();
  }

  /** Something changed in YARN: the loop makes a call soon. Cheap; any thread. */
  public synchronized void wake() {
    if (!work) {
      work = true;
      notifyAll();
    }
  }

  public void setObserver(Observer observer) {
    this.observer = observer;
  }

  /** Where this thread's time went, every part of it (the benchmarks read it at a window's ends). */
  public LoopClock clock() {
    return clock;
  }

  /**
   * Hands a reload to the loop's thread (the only one that talks to the core) and waits for its
   * outcome. Call it without holding the scheduler's lock: the loop may need it meanwhile.
   */
  BridgeClient.ReloadOutcome reload(String path) throws InterruptedException {
    return await(bridge -> bridge.reload(path), new BridgeClient.ReloadOutcome(null, false),
        new BridgeClient.ReloadOutcome(null, true));
  }

  /**
   * Hands `call` to the loop's thread, which makes it before its next schedule call, and waits
   * for what it returns: `failed` if the loop stops or the call fails, `timedOut` if it takes
   * longer than a snapshot and the call may. Call it without holding the scheduler's lock.
   */
  <T> T await(Function<BridgeClient, T> call, T failed, T timedOut) throws InterruptedException {
    if (stopping) {
      return failed;
    }
    Pending<T> p = new Pending<>(call, failed);
    pending.add(p);
    wake();
    try {
      // a snapshot may come first, then the call: each within the slow timeout
      return p.outcome.get(2L * bridge.slowTimeoutMs() + 5000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      pending.remove(p);
      return failed;
    } catch (TimeoutException e) {
      pending.remove(p);
      return timedOut;
    }
  }

  @Override
  public void run() {
    while (!stopping) {
      clock.enter(LoopClock.Part.WAIT);
      try {
        once();
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        // A bug here must not end scheduling for good: start over from a snapshot.
        LOG.error("yarn-drf: the scheduling loop failed; resyncing in {} ms", ERROR_PAUSE_MS, e);
        bridge.resyncNext("the scheduling loop failed (" + e + ")");
        clock.enter(LoopClock.Part.WAIT);
        try {
          Thread.sleep(ERROR_PAUSE_MS);
        } catch (InterruptedException stop) {
          return;
        }
      }
    }
  }

  private void once() throws InterruptedException {
    boolean force = awaitWork();
    if (stopping) {
      return;
    }
    if (bridge.needsResync()) {
      if (!bridge.mayResync() && pending.isEmpty()) {
        return;  // the child is not listening yet, or backing off after a failure: awaitWork waits
      }
      clock.enter(LoopClock.Part.RESYNC);
      RequestValues.Snapshot snapshot;
      synchronized (schedulerLock) {
        snapshot = yarn.snapshot(bridge.newEpoch());
      }
      List<QueueSettings> queues = bridge.resync(snapshot);
      synchronized (schedulerLock) {
        yarn.resynced(queues);
      }
      if (queues == null) {
        failed();
        return;
      }
      bridge.snapshotApplied();
      force = true;  // the snapshot carried asks: decide for them now
    }
    if (!pending.isEmpty()) {
      clock.enter(LoopClock.Part.HANDED);
      servePending();
    }
    clock.enter(LoopClock.Part.COLLECT);
    long start = System.nanoTime();
    RequestValues.Schedule request;
    synchronized (schedulerLock) {
      request = yarn.collect(bridge.epoch(), ++seq, force);
    }
    if (request == null) {
      return;
    }
    long collected = System.nanoTime();
    lastCallNanos = collected;
    clock.enter(LoopClock.Part.CALL);
    ReplyValues.ScheduleReply reply = bridge.schedule(request);
    long answered = System.nanoTime();
    if (reply == null) {
      synchronized (schedulerLock) {
        yarn.callTook(bridge.lastCallMs());
      }
      failed();
      return;
    }
    callDueNanos = reply.callInMs == Messages.NO_CALL_DUE ? NO_CALL_DUE
        : answered + TimeUnit.MILLISECONDS.toNanos(reply.callInMs);
    long applied = committer.applied.get();
    long refused = committer.refused.get();
    clock.enter(LoopClock.Part.COMMIT);
    boolean more;
    synchronized (schedulerLock) {
      yarn.callTook(bridge.lastCallMs());
      yarn.commit(reply);
      more = yarn.hasPendingChanges();  // the commit's own refusals and starts, at least
    }
    long committed = System.nanoTime();
    if (more) {
      wake();
    }
    record(new CallRecord(request, reply, committer.applied.get() - applied,
        committer.refused.get() - refused, collected - start, answered - collected,
        committed - answered));
  }

  /**
   * Waits until woken, or until a timer runs out: the backoff after a failure, the readiness
   * poll, the recheck while asks are outstanding, the call the core asked for. Returns true when
   * a call should be made even without changes (a timer ran out, or the RM just became ready to
   * allocate).
   */
  private boolean awaitWork() throws InterruptedException {
    boolean ready = yarn.mayAllocate();
    if (ready != wasReady) {
      wasReady = ready;
      if (ready) {
        return true;
      }
    }
    long waitMs = 0;  // 0: until woken
    if (bridge.needsResync()) {
      if (bridge.mayResync()) {
        return true;  // a snapshot is due (a failed reload, a restarted core): no change may come
      }
      // Not listening yet: until its port file wakes the loop (BridgeClient.watchChild).
      waitMs = bridge.coreListening() ? Math.max(1, bridge.retryInMs()) : 0;
    } else if (!ready) {
      waitMs = READY_POLL_MS;
    } else {
      waitMs = untilCallDue(recheckMs > 0 && yarn.hasOutstandingAsks() ? untilRecheckMs() : 0);
    }
    synchronized (this) {
      if (!work && !stopping) {
        wait(waitMs);
      }
      boolean woken = work;
      work = false;
      // A wake that brings no call (a heartbeat of a full node) must not put the timers off:
      // NodeManagers heartbeat more often than the recheck, and a starved queue's preemption
      // round rides on the calls the timers make.
      return !woken || (ready && timerDue());
    }
  }

  /** The recheck's wait left, counted from the last call (at least 1 ms: 0 means "until woken"). */
  private long untilRecheckMs() {
    long since = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastCallNanos);
    return Math.max(1, recheckMs - since);
  }

  /** Whether the recheck (while asks are outstanding) or the call the core asked for is due. */
  private boolean timerDue() {
    long now = System.nanoTime();
    boolean recheck = recheckMs > 0 && yarn.hasOutstandingAsks()
        && now - lastCallNanos >= TimeUnit.MILLISECONDS.toNanos(recheckMs);
    return recheck || (callDueNanos != NO_CALL_DUE && now - callDueNanos >= 0);
  }

  /** `waitMs` (0: until woken) cut short by the call the core asked for, if it comes sooner. */
  private long untilCallDue(long waitMs) {
    if (callDueNanos == NO_CALL_DUE) {
      return waitMs;
    }
    long dueMs = Math.max(MIN_CALL_WAIT_MS,
        TimeUnit.NANOSECONDS.toMillis(callDueNanos - System.nanoTime() + 999_999));
    return waitMs == 0 ? dueMs : Math.min(waitMs, dueMs);
  }

  /** After a failed call: a snapshot next, once the backoff allows. */
  private void failed() {
    callDueNanos = NO_CALL_DUE;  // the snapshot's call asks anew
    for (Pending<?> p; (p = pending.poll()) != null;) {
      p.fail();
    }
    synchronized (this) {
      work = true;
    }
  }

  private void servePending() {
    for (Pending<?> p; (p = pending.poll()) != null;) {
      p.serve(bridge);
    }
  }

  private void record(CallRecord call) {
    calls.incrementAndGet();
    nodes.addAndGet(call.nodes);
    heartbeats.addAndGet(call.heartbeats);
    collectNanos.addAndGet(call.collectNanos);
    callNanos.addAndGet(call.callNanos);
    commitNanos.addAndGet(call.commitNanos);
    Observer o = observer;
    if (o != null) {
      o.called(call);
    }
  }

  String counters() {
    return "loop calls=" + calls.get() + " nodes=" + nodes.get() + " heartbeats=" + heartbeats.get()
        + " collect_ms=" + collectNanos.get() / 1_000_000 + " call_ms=" + callNanos.get() / 1_000_000
        + " commit_ms=" + commitNanos.get() / 1_000_000;
  }
}

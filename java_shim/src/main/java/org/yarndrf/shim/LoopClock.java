package org.yarndrf.shim;

/**
 * Where the scheduling thread's time goes, as a whole: every nanosecond since the thread started
 * belongs to exactly one {@link Part}. The thread calls {@link #enter} at each boundary and the
 * time since the previous boundary goes to the part it leaves, so the parts always sum to the
 * elapsed time. {@link #read} adds the part under way up to now, so two reads bracket a window
 * exactly: the benchmarks' "ms per second" figures then add up to the window, whatever was in
 * flight at its ends (a call, a timed-out call, a resync).
 */
public final class LoopClock {
  /** What the scheduling thread is doing. */
  public enum Part {
    /** Asleep until a change, a timer or a retry after a failure. */
    WAIT,
    /** Collecting a call's request, under the scheduler's lock. */
    COLLECT,
    /** A schedule call to the core, every attempt of it, answered or not. */
    CALL,
    /** Re-checking and committing a reply, under the scheduler's lock. */
    COMMIT,
    /** Building, sending and taking in a full snapshot. */
    RESYNC,
    /** Calls handed to the loop by other threads (reloads, moves). */
    HANDED
  }

  private final long[] nanos = new long[Part.values().length];
  private Part current = Part.WAIT;
  private long since;

  public LoopClock() {
    since = System.nanoTime();
  }

  /** The thread starts `part`; the time since the last boundary goes to the part it leaves. */
  public synchronized void enter(Part part) {
    long now = System.nanoTime();
    nanos[current.ordinal()] += now - since;
    since = now;
    current = part;
  }

  /** Nanoseconds in each part so far, indexed by {@link Part#ordinal()}, the part under way included. */
  public synchronized long[] read() {
    long[] out = nanos.clone();
    out[current.ordinal()] += System.nanoTime() - since;
    return out;
  }
}

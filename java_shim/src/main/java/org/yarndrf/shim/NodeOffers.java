package org.yarndrf.shim;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * Which nodes a schedule call offers the core: each node once per heartbeat, as YARN's own
 * schedulers decide for a node when its heartbeat (NODE_UPDATE) comes and not in between. A node
 * that has not heartbeated since a call last looked at it is not offered: an ask made since then
 * waits for the node's next heartbeat, as it would on CapacityScheduler or FairScheduler, so
 * locality waits count heartbeats (scheduling opportunities) and no container lands on a node
 * that has not reported since it registered. With yarn-drf.scheduler.offer-between-heartbeats
 * ({@link #everyNode}) calls offer every node in rounds instead, heartbeat or not, as
 * CapacityScheduler's asynchronous scheduling does.
 *
 * <p>An ask made after a node's heartbeat but before a call looked at the node (the call before
 * was still out) must wait too: heartbeats are numbered ({@link #now}), an app's asks carry the
 * number they were made at, and while every node due an offer heartbeated before an app's latest
 * asks ({@link #latestDue}) the loop leaves them out of the call, so the core cannot
 * place them on those nodes (Hadoop's TestAMRestart saw a failed attempt's successor get its AM
 * off the heartbeat that reported the failure).
 *
 * <p>The core's work on a call grows with the nodes it lists, and a call must finish within the
 * bridge timeout (yarn-drf.bridge.timeout-ms), so a call takes at most {@code perCall} nodes with
 * room (yarn-drf.scheduler.max-nodes-per-call), the longest-waiting first; the others keep their
 * heartbeat for the next call, which the loop makes at once. The bound follows the calls' times
 * ({@link #callTook}): a call slower than the bridge timeout halves it (down to a sixteenth of the
 * configured bound, at least 1), one faster than half the timeout grows it back by half (up to the
 * configured bound), so on a loaded machine calls shrink until they fit instead of timing out.
 * The bound counts the nodes the core still goes on with ({@link #coreCarries}: a call that
 * reached its limit of assignments leaves the rest of its nodes for the next calls, which decide
 * for them first): a call lists only as many new nodes as make up the bound, so no node is
 * encoded, sent and decoded to wait in the core behind hundreds of others (the 10,000-node driver
 * listed about 500 nodes a call to place 64 containers on 4 of them).
 *
 * <p>Locking: the scheduler's lock (heartbeats and the loop's collect run under it).
 */
final class NodeOffers<N> {
  /** The configured bound; the least one it shrinks to. */
  private final int maxPerCall;
  private final int minPerCall;
  private int perCall;
  /** The nodes the core goes on with, as its last reply said. */
  private long carried;
  /** Counts heartbeats; read by allocate() without the scheduler's lock. */
  private final AtomicLong heartbeats = new AtomicLong();
  /**
   * Nodes that heartbeated since a call last looked at them, in heartbeat order, each with the
   * number of its latest heartbeat.
   */
  private final Map<N, Long> heartbeated = new LinkedHashMap<>();
  /** The node of the latest heartbeat: while it waits, its number is the latest of all waiting. */
  private N newest;

  NodeOffers(int perCall) {
    if (perCall < 1) {
      throw new IllegalArgumentException("yarn-drf: " + ShimConf.MAX_NODES_PER_CALL
          + " must be at least 1, got " + perCall);
    }
    this.maxPerCall = perCall;
    this.minPerCall = Math.max(1, perCall / 16);
    this.perCall = perCall;
  }

  /**
   * A schedule call took {@code ms} (all its attempts): one slower than {@code budgetMs} (the
   * configured bridge timeout) halves the next calls' bound, one under half of it grows it by half.
   */
  void callTook(long ms, long budgetMs) {
    if (ms > budgetMs) {
      perCall = Math.max(minPerCall, perCall / 2);
    } else if (2 * ms < budgetMs) {
      perCall = Math.min(maxPerCall, perCall + Math.max(1, perCall / 2));
    }
  }

  /** The most nodes with room the next call offers: the bound less what the core carries. */
  int perCall() {
    return (int) Math.max(0, perCall - carried);
  }

  /** The core's reply: it goes on with {@code nodes} nodes first (0 after a resync: a new core). */
  void coreCarries(long nodes) {
    carried = nodes;
  }

  /** The node heartbeated: the next call looks at it (once, however many heartbeats came). */
  void heartbeat(N node) {
    heartbeated.put(node, heartbeats.incrementAndGet());
    newest = node;
  }

  /** The number of the latest heartbeat: an ask made now comes after it. Any thread. */
  long now() {
    return heartbeats.get();
  }

  /**
   * The number of the latest heartbeat among the nodes due an offer, or Long.MAX_VALUE if none
   * is: asks made at or after it (a {@link #now} value as large) are newer than all their
   * heartbeats.
   */
  long latestDue() {
    if (heartbeated.isEmpty()) {
      return Long.MAX_VALUE;
    }
    Long last = newest == null ? null : heartbeated.get(newest);
    if (last != null) {
      return last;  // none waits with a later one: no walk of the thousands a call leaves waiting
    }
    long latest = 0;
    for (long heartbeat : heartbeated.values()) {
      latest = Math.max(latest, heartbeat);
    }
    return latest;
  }

  /**
   * Between heartbeats: once every node was looked at (a round), every node counts as having
   * heartbeated again, so a round of calls offers each node once.
   */
  void everyNode(Iterable<N> nodes) {
    if (heartbeated.isEmpty()) {
      long round = heartbeats.incrementAndGet();
      for (N node : nodes) {
        heartbeated.put(node, round);
      }
    }
  }

  /** The node left the cluster. */
  void removed(N node) {
    heartbeated.remove(node);
  }

  /** Whether some node heartbeated since a call last looked at it. */
  boolean waiting() {
    return !heartbeated.isEmpty();
  }

  /**
   * Looks at the nodes that heartbeated, longest-waiting first, each once: {@code offer} returns
   * whether it took the node (it has room for some ask). Stops once it took {@link #perCall};
   * the nodes it did not look at keep their turn.
   */
  void offer(Predicate<N> offer) {
    Iterator<N> it = heartbeated.keySet().iterator();
    for (int taken = 0, most = perCall(); taken < most && it.hasNext();) {
      N node = it.next();
      it.remove();
      if (offer.test(node)) {
        taken++;
      }
    }
  }

  /** A call looked at every node and none could take anything (no ask waits, or none may be served). */
  void passAll() {
    heartbeated.clear();
  }
}

package org.yarndrf.shim;

import java.util.List;
import java.util.function.Predicate;

/**
 * Which nodes a schedule call offers the core. The core's work on a call grows with the nodes it
 * lists, and a call must finish within the bridge timeout (yarn-drf.bridge.timeout-ms), so a call
 * lists at most {@code perCall} nodes with room (yarn-drf.scheduler.max-nodes-per-call). The next
 * calls go on from where the last one stopped until every node was looked at once (a round); the
 * loop makes them back to back while a round is unfinished and asks are outstanding, so on a large
 * cluster every node is still offered within a few calls, and each call stays short.
 *
 * <p>Locking: the scheduler's lock (the loop collects under it).
 */
final class NodeRotation {
  private final int perCall;
  /** Where the next call starts looking, as an index into the tracker's node list. */
  private int cursor;
  /** Nodes of the current round not looked at yet; 0: the next call starts a round. */
  private int leftInRound;

  NodeRotation(int perCall) {
    if (perCall < 1) {
      throw new IllegalArgumentException("yarn-drf: " + ShimConf.MAX_NODES_PER_CALL
          + " must be at least 1, got " + perCall);
    }
    this.perCall = perCall;
  }

  /**
   * Looks at nodes from where the last call stopped, in the list's order, wrapping around; stops
   * once {@code offer} took {@code perCall} of them (it returns whether it took the node: the
   * node has room) or the round has looked at every node.
   */
  <N> void offer(List<N> nodes, Predicate<N> offer) {
    int size = nodes.size();
    if (leftInRound <= 0 || leftInRound > size) {
      leftInRound = size;  // a new round (or the cluster shrank: start over)
    }
    int i = size == 0 ? 0 : cursor % size;
    for (int taken = 0; leftInRound > 0 && taken < perCall; leftInRound--) {
      if (offer.test(nodes.get(i))) {
        taken++;
      }
      i = (i + 1) % size;
    }
    cursor = i;
  }

  /** Whether the current round still has nodes no call has looked at. */
  boolean unfinished() {
    return leftInRound > 0;
  }
}

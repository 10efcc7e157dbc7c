package org.yarndrf.shim;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.yarndrf.shim.bridge.Protocol;

/**
 * What YARN did since the last bridge call, in the three parts of a request (BRIDGE.md):
 * "deltas", one object per app or node event; "started", one row per container started; and
 * "finished", flat container, state pairs. Containers are most of a busy heartbeat's events, so
 * they travel as arrays, which the core decodes at a third of the cost of objects. The core
 * applies deltas, then started, then finished; the order within each part is YARN's.
 */
final class PendingEvents {
  private final ArrayNode deltas = Protocol.JSON.createArrayNode();
  private final ArrayNode started = Protocol.JSON.createArrayNode();
  private final ArrayNode finished = Protocol.JSON.createArrayNode();

  void add(ObjectNode delta) {
    deltas.add(delta);
  }

  /** A container YARN started: one the core assigned (`assignmentId`) or recovered (null). */
  void started(RMContainer c, String assignmentId) {
    started.add(row(c, assignmentId));
  }

  void finished(String containerId, String state) {
    finished.add(containerId).add(state);
  }

  /**
   * [container, app, node, priority, allocation_id, assignment_id, amounts...], the amounts in
   * the snapshot's resource order: a "started" row, and a snapshot's "containers" row.
   */
  static ArrayNode row(RMContainer c, String assignmentId) {
    ArrayNode r = Protocol.JSON.createArrayNode()
        .add(c.getContainerId().toString())
        .add(c.getApplicationAttemptId().getApplicationId().toString())
        .add(c.getAllocatedNode().toString())
        .add(c.getAllocatedSchedulerKey().getPriority().getPriority())
        .add(c.getAllocatedSchedulerKey().getAllocationRequestId())
        .add(assignmentId);
    for (long v : AskMirror.vector(c.getAllocatedResource())) {
      r.add(v);
    }
    return r;
  }

  boolean isEmpty() {
    return deltas.isEmpty() && started.isEmpty() && finished.isEmpty();
  }

  /** Puts the three parts in `req`; they stay queued until clear(). */
  void putInto(ObjectNode req) {
    req.putArray("deltas").addAll(deltas);
    req.putArray("started").addAll(started);
    req.putArray("finished").addAll(finished);
  }

  void clear() {
    deltas.removeAll();
    started.removeAll();
    finished.removeAll();
  }
}

package org.yarndrf.shim;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;

/**
 * What YARN did since the last call, in the three parts of a schedule request (docs/bridge.md):
 * deltas, one per app or node event; containers started; and containers finished, as container,
 * state pairs. The core applies deltas, then started, then finished; the order within each part
 * is YARN's.
 *
 * <p>Locking: guarded by the scheduler's lock. YARN's event thread adds to it while handling an
 * event, the scheduling loop's commit adds its refusals and starts, and the loop moves it whole
 * into the next request ({@link #moveInto}), all under that lock.
 */
final class PendingEvents {
  private List<RequestValues.Delta> deltas = new ArrayList<>();
  private List<RequestValues.ContainerRow> started = new ArrayList<>();
  private List<String> finished = new ArrayList<>();

  void add(RequestValues.Delta delta) {
    deltas.add(delta);
  }

  /** A container YARN started: one the core assigned (`assignmentId`) or recovered (null). */
  void started(RMContainer c, String assignmentId) {
    started.add(YarnRecords.containerRow(c, assignmentId));
  }

  void finished(String containerId, String state) {
    finished.add(containerId);
    finished.add(state);
  }

  boolean isEmpty() {
    return deltas.isEmpty() && started.isEmpty() && finished.isEmpty();
  }

  /** Moves everything into the request, leaving this empty. */
  void moveInto(RequestValues.Schedule request) {
    request.deltas.addAll(deltas);
    request.started.addAll(started);
    request.finished.addAll(finished);
    clear();
  }

  /** Forgets everything: a snapshot supersedes every event queued before it. */
  void clear() {
    deltas = new ArrayList<>();
    started = new ArrayList<>();
    finished = new ArrayList<>();
  }
}

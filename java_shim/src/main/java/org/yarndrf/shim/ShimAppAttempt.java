package org.yarndrf.shim;

import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.UpdateContainerError;
import org.apache.hadoop.yarn.server.resourcemanager.RMAuditLogger;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * An application attempt with YARN's own bookkeeping (FiCaSchedulerApp) plus the one method
 * FifoAppAttempt adds, whose constructor is package-private: allocate a container through
 * AppSchedulingInfo so pending asks, metrics and the RMContainer state machine stay YARN's. It
 * also keeps the containers marked for preemption, which its AM is told of (as FSAppAttempt does).
 */
public class ShimAppAttempt extends FiCaSchedulerApp {
  /** Live containers marked for preemption; guarded by this attempt's monitor. */
  private final Set<ContainerId> preemptionMarks = new HashSet<>();
  /** NodeOffers.now() when the AM last changed its asks. */
  private volatile long askedAt;

  public ShimAppAttempt(ApplicationAttemptId attemptId, String user, Queue queue,
      AbstractUsersManager usersManager, RMContext rmContext) {
    super(attemptId, user, queue, usersManager, rmContext);
  }

  /**
   * Marks a live container for preemption: allocate responses name it until it ends. Returns
   * false if it was marked already.
   */
  synchronized boolean markForPreemption(ContainerId id) {
    return preemptionMarks.add(id);
  }

  /** The container has ended: no longer to be named. */
  synchronized void preemptionEnded(ContainerId id) {
    preemptionMarks.remove(id);
  }

  /**
   * The containers marked for preemption, for the strict contract of an allocate response's
   * PreemptionMessage; null when none (no message at all).
   */
  synchronized Set<ContainerId> preemptionMarks() {
    return preemptionMarks.isEmpty() ? null
        : Collections.unmodifiableSet(new HashSet<>(preemptionMarks));
  }

  /** The AM changed its asks after heartbeat number {@code heartbeat} (NodeOffers.now()). */
  void asked(long heartbeat) {
    askedAt = heartbeat;
  }

  long askedAt() {
    return askedAt;
  }

  /** The request key of the attempt's asks with this priority and allocation id, or null. */
  SchedulerRequestKey schedulerKey(int priority, long allocationId) {
    for (SchedulerRequestKey k : getSchedulerKeys()) {
      if (k.getPriority().getPriority() == priority && k.getAllocationRequestId() == allocationId) {
        return k;
      }
    }
    return null;
  }

  /** An update the AM asked for is refused: its next allocate response says why. */
  void refuseUpdate(UpdateContainerError error) {
    addToUpdateContainerErrors(error);
  }

  /**
   * FiCaSchedulerApp adds CapacityScheduler's queue limits to an AM's diagnostics (and casts the
   * queue to its leaf queue class); the core's own reason is the whole diagnostic here.
   */
  @Override
  protected void getPendingAppDiagnosticMessage(StringBuilder diagnosticMessage) {
  }

  @Override
  protected void getActivedAppDiagnosticMessage(StringBuilder diagnosticMessage) {
  }

  /** Returns the new RMContainer, or null if the attempt stopped or the ask is gone. */
  public RMContainer allocate(NodeType type, FiCaSchedulerNode node,
      SchedulerRequestKey schedulerKey, Container container) {
    writeLock.lock();
    try {
      if (isStopped) {
        return null;
      }
      // The AM may have lowered the ask since the core decided: check under the lock.
      if (getOutstandingAsksCount(schedulerKey) <= 0) {
        return null;
      }
      RMContainer rmContainer = new RMContainerImpl(container, schedulerKey,
          getApplicationAttemptId(), node.getNodeID(), appSchedulingInfo.getUser(), rmContext,
          node.getPartition());
      ((RMContainerImpl) rmContainer).setQueueName(getQueueName());
      updateAMContainerDiagnostics(AMState.ASSIGNED, null);
      addToNewlyAllocatedContainers(node, rmContainer);
      ContainerId containerId = container.getId();
      liveContainers.put(containerId, rmContainer);
      ContainerRequest request = appSchedulingInfo.allocate(type, node, schedulerKey, rmContainer);
      attemptResourceUsage.incUsed(node.getPartition(), container.getResource());
      ((RMContainerImpl) rmContainer).setContainerRequest(request);
      rmContainer.handle(new RMContainerEvent(containerId, RMContainerEventType.START));
      RMAuditLogger.logSuccess(getUser(), RMAuditLogger.AuditConstants.ALLOC_CONTAINER,
          "YarnDrfScheduler", getApplicationId(), containerId, container.getResource(),
          getQueueName(), null);
      return rmContainer;
    } finally {
      writeLock.unlock();
    }
  }
}

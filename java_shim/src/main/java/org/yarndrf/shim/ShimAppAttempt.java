package org.yarndrf.shim;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
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
 * AppSchedulingInfo so pending asks, metrics and the RMContainer state machine stay YARN's.
 */
public class ShimAppAttempt extends FiCaSchedulerApp {
  public ShimAppAttempt(ApplicationAttemptId attemptId, String user, Queue queue,
      AbstractUsersManager usersManager, RMContext rmContext) {
    super(attemptId, user, queue, usersManager, rmContext);
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

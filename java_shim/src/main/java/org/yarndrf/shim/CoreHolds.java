package org.yarndrf.shim;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.event.RMAppAttemptContainerFinishedEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core's holds shown in YARN as CapacityScheduler shows its reservations: a held node gets an
 * RMContainer in RESERVED state, reserved through YARN's own calls (FiCaSchedulerApp.reserve on
 * the attempt, which reserves the node and counts the queue's reservedMB/reservedVCores;
 * FiCaSchedulerApp.unreserve), so the RM's UI, REST and metrics count it. The core decides:
 * a reservation here changes no free room and no offer; it ends when the core's hold ends, when
 * the attempt ends (killed, as CapacityScheduler kills an ended attempt's reservations), when
 * the node leaves, and when the shim resyncs (the new core tells its holds again).
 *
 * <p>Locking: the scheduler's lock (the loop's commit and YARN's events run under it).
 */
final class CoreHolds {
  private static final Logger LOG = LoggerFactory.getLogger(CoreHolds.class);

  private final YarnDrfScheduler scheduler;

  CoreHolds(YarnDrfScheduler scheduler) {
    this.scheduler = scheduler;
  }

  /** A schedule reply's holds: those ended first, then those begun (a node may be in both). */
  void apply(List<String> ended, List<Messages.Hold> begun) {
    for (String name : ended) {
      FiCaSchedulerNode node = scheduler.nodeNamed(name);
      if (node != null) {
        release(node);
      }
    }
    for (Messages.Hold h : begun) {
      FiCaSchedulerNode node = scheduler.nodeNamed(h.node);
      if (node != null) {
        release(node);
        reserve(node, h);
      }
    }
  }

  private void reserve(FiCaSchedulerNode node, Messages.Hold h) {
    ApplicationId appId = AssignmentCommitter.applicationId(h.app);
    ShimAppAttempt attempt = appId == null ? null : scheduler.currentAttempt(appId);
    Resource size = YarnRecords.resource(h.amounts);
    if (attempt == null || attempt.isStopped() || size == null) {
      LOG.debug("yarn-drf: hold of {} for {} not shown: no live attempt", h.node, h.app);
      return;  // the core lets it go once it hears the app or attempt ended
    }
    SchedulerRequestKey key = attempt.schedulerKey(h.priority, h.allocationId);
    if (key == null) {
      return;  // the ask is gone: the core lets the node go with the next call
    }
    ContainerId id = BuilderUtils.newContainerId(attempt.getApplicationAttemptId(),
        attempt.getNewContainerId());
    Container container = BuilderUtils.newContainer(id, node.getNodeID(),
        node.getRMNode().getHttpAddress(), size, key.getPriority(), null,
        key.getAllocationRequestId());
    RMContainerImpl reserved = new RMContainerImpl(container, key,
        attempt.getApplicationAttemptId(), node.getNodeID(), attempt.getUser(),
        scheduler.rmContext(), node.getPartition());
    attempt.reserve(key, node, reserved, container, false);
  }

  /**
   * The core placed a container of the request the node is reserved for in YARN: the reservation
   * ends and the container takes its id, as CapacityScheduler allocates from a reservation (an
   * ended attempt's AM hears of it as the reserved container). Returns that id, or null if the
   * node is not reserved for this attempt's request.
   */
  ContainerId takeReserved(FiCaSchedulerNode node, ShimAppAttempt attempt, SchedulerRequestKey key) {
    RMContainer reserved = node.getReservedContainer();
    if (reserved == null || !reserved.getApplicationAttemptId().equals(
        attempt.getApplicationAttemptId()) || !key.equals(reserved.getReservedSchedulerKey())) {
      return null;
    }
    unreserve(node, reserved);
    return reserved.getContainerId();
  }

  /** Ends the node's reservation, if it has one (the hold ended, or the node leaves). */
  void release(FiCaSchedulerNode node) {
    RMContainer reserved = node.getReservedContainer();
    if (reserved != null) {
      unreserve(node, reserved);
    }
  }

  private void unreserve(FiCaSchedulerNode node, RMContainer reserved) {
    ShimAppAttempt attempt = scheduler.getApplicationAttempt(reserved.getApplicationAttemptId());
    if (attempt == null || !attempt.unreserve(reserved.getReservedSchedulerKey(), node, reserved)) {
      node.setReservedContainer(null);  // (an attempt YARN forgot: the node's mark alone is left)
    }
    reserved.handle(new RMContainerEvent(reserved.getContainerId(), RMContainerEventType.RELEASED));
  }

  /**
   * A reserved container YARN ends (its attempt ended, or YARN kills it): unreserved, and told to
   * its attempt as a killed container, whose AM's next attempt hears of it (Hadoop's
   * TestAMRestart expects an ended attempt's reservation among the finished containers).
   */
  void killed(RMContainer reserved, ContainerStatus status) {
    FiCaSchedulerNode node = scheduler.getNodeTracker().getNode(reserved.getReservedNode());
    if (node != null && node.getReservedContainer() == reserved) {
      ShimAppAttempt attempt = scheduler.getApplicationAttempt(reserved.getApplicationAttemptId());
      if (attempt != null) {
        attempt.unreserve(reserved.getReservedSchedulerKey(), node, reserved);
      }
    }
    if (reserved.getState() == RMContainerState.RESERVED) {
      reserved.handle(new RMContainerEvent(reserved.getContainerId(), RMContainerEventType.KILL));
      scheduler.rmContext().getDispatcher().getEventHandler().handle(
          new RMAppAttemptContainerFinishedEvent(reserved.getApplicationAttemptId(), status,
              reserved.getReservedNode()));
    }
  }

  /** Kills the attempt's reservations (it ended), as CapacityScheduler does. */
  void attemptEnded(ShimAppAttempt attempt) {
    for (RMContainer reserved : attempt.getReservedContainers()) {
      killed(reserved, SchedulerUtils.createAbnormalContainerStatus(reserved.getContainerId(),
          SchedulerUtils.COMPLETED_APPLICATION));
    }
  }

  /**
   * Every reservation ends: the shim resyncs, and the new core tells its holds afresh (a hold
   * given back from the saved preemption state too).
   */
  void releaseAll() {
    List<FiCaSchedulerNode> held = new ArrayList<>();
    for (FiCaSchedulerNode node : scheduler.getNodeTracker().getAllNodes()) {
      if (node.getReservedContainer() != null) {
        held.add(node);
      }
    }
    for (FiCaSchedulerNode node : held) {
      release(node);
    }
  }
}

package org.yarndrf.shim;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.nm.GpuCards;

/**
 * Commits the core's assignments, as CapacityScheduler's tryCommit commits proposals: each is
 * re-checked against YARN's state now (the app still runs, the ask is still outstanding with the
 * same size, locality and the app's exclusions allow the node, it fits the node's free room, its
 * GPU cards are cards of the node, the queue and its ancestors stay within their max) and allocated through YARN's own path, or
 * refused back to the core with the reason. Whatever goes wrong with one assignment stays with
 * it: the rest of the reply is still committed.
 *
 * <p>Locking: called under the scheduler's lock (the scheduling loop's commit); each assignment
 * also holds its app attempt's lock, as YARN's allocate() does.
 */
class AssignmentCommitter {
  private static final Logger LOG = LoggerFactory.getLogger(AssignmentCommitter.class);

  /** The reason an assignment given back carries (the core logs it; nothing was wrong with it). */
  static final String DEFERRED = "deferred: a queue below asked for an AM since the call's collection";

  private final YarnDrfScheduler scheduler;
  private final PendingEvents events;
  private final Set<ApplicationId> dirtyApps;
  final AtomicLong applied = new AtomicLong();
  final AtomicLong refused = new AtomicLong();
  /** Assignments given back unapplied, for the next call to decide again (LateAmAsks). */
  final AtomicLong deferred = new AtomicLong();
  private final DeferralBudget budget;

  AssignmentCommitter(YarnDrfScheduler scheduler, PendingEvents events,
      Set<ApplicationId> dirtyApps) {
    this.scheduler = scheduler;
    this.events = events;
    this.dirtyApps = dirtyApps;
    this.budget = new DeferralBudget(scheduler.maxDeferredShare);
  }

  /**
   * Commits the reply's assignments in the core's order, but gives back each that goes to a
   * queue above one whose app asked for its AM since the call's collection (LateAmAsks), its node
   * to the next call. Those to the late AM's own queue and to queues below it are still
   * committed: DRF would serve them before the AM too, and giving them back costs the loop a
   * call's work (at 5,000 nodes a cut reply gave back 57 assignments on average). At most
   * yarn-drf.scheduler.max-deferred-share of them are given back (DeferralBudget).
   */
  void commit(List<ReplyValues.Assignment> assignments) {
    Resource cluster = scheduler.getClusterResource();
    for (ReplyValues.Assignment a : assignments) {
      if (aboveALateAm(a, cluster) && budget.take()) {
        giveBack(a);
      } else {
        budget.committed();
        commit(a);
      }
    }
  }

  private boolean aboveALateAm(ReplyValues.Assignment a, Resource cluster) {
    ApplicationId appId = applicationId(a.app);
    ShimAppAttempt attempt = appId == null ? null : scheduler.currentAttempt(appId);
    return attempt != null
        && scheduler.lateAmAsks.anyBelow((ShimQueue) attempt.getQueue(), cluster);
  }

  private void giveBack(ReplyValues.Assignment a) {
    deferred.incrementAndGet();
    events.add(RequestValues.Delta.assignmentRefused(a.id, DEFERRED));
    FiCaSchedulerNode node = scheduler.nodeNamed(a.node);
    if (node != null) {
      scheduler.offerAgain(node.getNodeID());
    }
  }

  private void commit(ReplyValues.Assignment a) {
    String refusal = null;
    RMContainer allocated = null;
    ShimAppAttempt attempt = null;
    FiCaSchedulerNode node = scheduler.nodeNamed(a.node);
    try {
      ApplicationId appId = applicationId(a.app);
      attempt = appId == null ? null : scheduler.currentAttempt(appId);
      if (appId == null) {
        refusal = "bad application id " + a.app;
      } else if (attempt == null) {
        refusal = "application " + appId + " is not running";
      } else if (node == null) {
        refusal = "node " + a.node + " is not in the cluster";
      } else {
        synchronized (attempt) {
          refusal = check(node, attempt, a);
          if (refusal == null) {
            allocated = allocateOn(node, attempt, a);
            if (allocated == null) {
              refusal = "application stopped or request withdrawn";
            } else {
              account(node, attempt, allocated);
            }
          }
        }
      }
    } catch (RuntimeException e) {
      LOG.error("yarn-drf: applying assignment {} on {} failed", a.id, a.node, e);
      if (allocated != null) {
        // YARN holds the container, our books may not: a snapshot tells the core what YARN runs.
        scheduler.resyncNext("assignment " + a.id + " failed after YARN allocated "
            + allocated.getContainerId() + " (" + e + ")");
        return;
      }
      refusal = "the shim failed to apply it: " + e;
    }
    if (refusal != null) {
      refused.incrementAndGet();
      LOG.info("yarn-drf: refused assignment {} on {}: {}", a.id, a.node, refusal);
      events.add(RequestValues.Delta.assignmentRefused(a.id, refusal));
      return;
    }
    applied.incrementAndGet();
    events.started(allocated, a.id);
    dirtyApps.add(attempt.getApplicationId());
  }

  static ApplicationId applicationId(String text) {
    try {
      return ApplicationId.fromString(text);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static SchedulerRequestKey keyFor(ShimAppAttempt attempt, ReplyValues.Assignment a) {
    return attempt.schedulerKey(a.priority, a.allocationId);
  }

  private String check(FiCaSchedulerNode node, ShimAppAttempt attempt, ReplyValues.Assignment a) {
    if (attempt.isStopped()) {
      return "application attempt stopped";
    }
    SchedulerRequestKey key = keyFor(attempt, a);
    PendingAsk ask = key == null ? null : attempt.getPendingAsk(key, ResourceRequest.ANY);
    if (ask == null || ask.getCount() <= 0) {
      return "request (priority " + a.priority + ", allocation " + a.allocationId
          + ") is no longer outstanding";
    }
    Resource capability = ask.getPerAllocationResource();
    Map<String, Long> asked = YarnRecords.amounts(capability);
    for (Map.Entry<String, Long> e : asked.entrySet()) {
      if (a.resources.getOrDefault(e.getKey(), 0L).longValue() != e.getValue()) {
        return "resources " + a.resources + " differ from the request " + asked;
      }
    }
    if (Exclusions.excludes(attempt, node)) {
      return "node " + node.getNodeID() + " is blacklisted by the application";
    }
    if (!locationAllowed(attempt, key, node)) {
      return "request does not relax locality to node " + node.getNodeID();
    }
    if (!Resources.fitsIn(capability, node.getUnallocatedResource())) {
      return "does not fit node " + node.getNodeID() + " (free " + node.getUnallocatedResource()
          + ", asked " + capability + ")";
    }
    List<Long> cards = scheduler.nodeCards.of(node.getNodeID());
    for (int card : a.cards) {
      if (cards == null || card >= cards.size()) {
        return "node " + node.getNodeID() + " has " + (cards == null ? 0 : cards.size())
            + " GPU cards; card " + card + " is not one of them";
      }
    }
    return ((ShimQueue) attempt.getQueue()).checkLimits(capability, scheduler.getClusterResource());
  }

  private static boolean locationAllowed(ShimAppAttempt attempt, SchedulerRequestKey key,
      FiCaSchedulerNode node) {
    for (ResourceRequest rr : attempt.getAppSchedulingInfo().getAllResourceRequests()) {
      if (ResourceRequest.ANY.equals(rr.getResourceName())
          && rr.getPriority().equals(key.getPriority())
          && rr.getAllocationRequestId() == key.getAllocationRequestId()
          && rr.getRelaxLocality()) {
        return true;
      }
    }
    return attempt.getOutstandingAsksCount(key, node.getNodeName()) > 0
        || attempt.getOutstandingAsksCount(key, node.getRackName()) > 0;
  }

  /** YARN's allocation of the assignment's container (package-private: tests inject faults). */
  RMContainer allocateOn(FiCaSchedulerNode node, ShimAppAttempt attempt, ReplyValues.Assignment a) {
    SchedulerRequestKey key = keyFor(attempt, a);
    Resource capability = attempt.getPendingAsk(key, ResourceRequest.ANY)
        .getPerAllocationResource();
    NodeType type = NodeType.OFF_SWITCH;
    if (attempt.getOutstandingAsksCount(key, node.getNodeName()) > 0) {
      type = NodeType.NODE_LOCAL;
    } else if (attempt.getOutstandingAsksCount(key, node.getRackName()) > 0) {
      type = NodeType.RACK_LOCAL;
    }
    ContainerId containerId = scheduler.holds.takeReserved(node, attempt, key);
    if (containerId == null) {
      containerId = BuilderUtils.newContainerId(attempt.getApplicationAttemptId(),
          attempt.getNewContainerId());
    }
    Container container = BuilderUtils.newContainer(containerId, node.getNodeID(),
        node.getRMNode().getHttpAddress(), capability, key.getPriority(), null,
        key.getAllocationRequestId());
    if (!a.cards.isEmpty()) {
      // in the container token the RM signs: the NodeManager's CardsContainerExecutor reads it
      container.setAllocationTags(Collections.singleton(GpuCards.tag(a.cards)));
    }
    return attempt.allocate(type, node, key, container);
  }

  /** Charges a container YARN allocated to its node, the cluster and its queue (tests inject faults). */
  void account(FiCaSchedulerNode node, ShimAppAttempt attempt, RMContainer container) {
    Resource capability = container.getAllocatedResource();
    node.allocateContainer(container);
    scheduler.addUsed(capability);
    ((ShimQueue) attempt.getQueue()).charge(capability, 1);
  }
}

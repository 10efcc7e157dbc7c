package org.yarndrf.shim;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The scheduler's side of the {@link SchedulingLoop}: what the loop reads from YARN (the snapshot
 * of a resync, the changes and node offers of a schedule call) and how it commits the core's reply
 * to YARN (queues, placements, assignments through the {@link AssignmentCommitter}, preemptions,
 * the app controls the reply carries). It holds no state of its own: everything it reads and
 * clears is the {@link YarnDrfScheduler}'s, which YARN's events fill.
 *
 * <p>Locking: each method runs under the scheduler's lock (its monitor), taken by the loop, except
 * {@link #mayAllocate} and {@link #hasOutstandingAsks}, which need none.
 */
final class LoopSide implements SchedulingLoop.Yarn {
  private final YarnDrfScheduler scheduler;

  LoopSide(YarnDrfScheduler scheduler) {
    this.scheduler = scheduler;
  }

  @Override
  public boolean mayAllocate() {
    // Not read before serviceStart restarted the wait: YARN latches the first "ready".
    return !scheduler.rmContext().isWorkPreservingRecoveryEnabled()
        || scheduler.coreStarted && scheduler.rmContext().isSchedulerReadyForAllocatingContainers();
  }

  @Override
  public boolean hasOutstandingAsks() {
    return scheduler.askMirror.hasOutstanding();
  }

  @Override
  public boolean hasPendingChanges() {
    return scheduler.hasPendingChanges();
  }

  @Override
  public RequestValues.Snapshot snapshot(long epoch) {
    List<String> types = new ArrayList<>();
    for (ResourceInformation ri : ResourceUtils.getResourceTypesArray()) {
      types.add(ri.getName());
    }
    RequestValues.Snapshot s = new RequestValues.Snapshot(epoch, types);
    scheduler.holds.releaseAll();  // the new core tells its own
    s.preemptionState = scheduler.preemptionStore.latest();
    s.labels.putAll(scheduler.nodeLabels.forSnapshot());
    for (FiCaSchedulerNode n : scheduler.getNodeTracker().getAllNodes()) {
      s.nodes.add(new RequestValues.NodeInfo(YarnDrfScheduler.bridgeName(n.getNodeID()),
          YarnRecords.amounts(n.getTotalResource())).withRack(n.getRackName())
          .withCards(scheduler.nodeCards.of(n.getNodeID())).withLabel(n.getPartition()));
    }
    // The snapshot supersedes everything queued before it; every ask goes in full.
    scheduler.dropQueuedChanges();
    Map<String, List<String>> nodesByName = nodesByName();
    for (Map.Entry<ApplicationId, SchedulerApplication<ShimAppAttempt>> e
        : scheduler.getSchedulerApplications().entrySet()) {
      SchedulerApplication<ShimAppAttempt> app = e.getValue();
      ShimAppAttempt attempt = app.getCurrentAppAttempt();
      s.apps.add(new RequestValues.AppInfo(e.getKey().toString(), app.getUser(),
          app.getQueue().getQueueName()).withGroups(YarnDrfScheduler.groupsOf(app.getUser()))
          .withPriority(app.getPriority() == null ? 0 : app.getPriority().getPriority())
          .withBlacklist(attempt == null
              ? Collections.<String>emptyList() : blacklistOf(attempt, nodesByName)));
      if (attempt == null) {
        continue;
      }
      for (RMContainer c : attempt.getLiveContainers()) {
        s.containers.add(YarnRecords.containerRow(c, null));
      }
      synchronized (attempt) {
        scheduler.askMirror.diff(e.getKey().toString(),
            attempt.getAppSchedulingInfo().getAllResourceRequests(), amPriority(attempt),
            s.asks, s.counts, s.amAsks);
      }
    }
    return s;
  }

  @Override
  public void resynced(List<QueueSettings> tree) {
    scheduler.nodeOffers.coreCarries(0);  // a new core, or none: no node waits in it
    if (tree == null) {
      // The next snapshot carries everything: what was queued meanwhile would only pile up.
      scheduler.nodeLabels.forget();
      scheduler.dropQueuedChanges();
      return;
    }
    scheduler.queues.update(tree);
  }

  @Override
  public void callTook(long ms) {
    scheduler.nodeOffers.callTook(ms, scheduler.callBudgetMs);
  }

  @Override
  public RequestValues.Schedule collect(long epoch, long seq, boolean force) {
    RequestValues.Schedule req = new RequestValues.Schedule(epoch, seq);
    scheduler.tellLabels();  // labels added or removed by rmadmin: no scheduler event says so
    scheduler.readNodeLabels();
    scheduler.events.moveInto(req);
    collectBlacklists(req);
    scheduler.lateAmAsks.collecting();
    collectAsks(req);
    scheduler.submissions.addTo(req);
    offerNodes(req);
    if (!force && !hasChanges(req) && req.nodes.isEmpty()) {
      return null;
    }
    req.heartbeats = scheduler.heartbeats.getAndSet(0);
    return req;
  }

  /** Whether a call carries any change: without one, it could only repeat the last decision. */
  private static boolean hasChanges(RequestValues.Schedule s) {
    return !(s.deltas.isEmpty() && s.started.isEmpty() && s.finished.isEmpty() && s.asks.isEmpty()
        && s.counts.isEmpty() && s.submissions.isEmpty());
  }

  /**
   * The nodes due an offer (NodeOffers) whose free room fits some outstanding ask, or that the
   * core may reserve for a starved ask ({@link #mayHold}, as CapacityScheduler reserves at a
   * heartbeat, and YARN shows the reservation: CoreHolds), into the request; the others due one are passed over until their next heartbeat, as a heartbeat
   * on which CapacityScheduler finds nothing to place is.
   */
  private void offerNodes(RequestValues.Schedule req) {
    if (scheduler.offerBetweenHeartbeats) {
      scheduler.nodeOffers.everyNode(nodeIds());
    }
    List<Resource> floors = mayAllocate() ? placeableFloors() : Collections.emptyList();
    if (floors.isEmpty()) {
      scheduler.nodeOffers.passAll();
      return;
    }
    scheduler.nodeOffers.offer(id -> {
      FiCaSchedulerNode n = scheduler.getNodeTracker().getNode(id);
      Resource free = n == null ? null : n.getUnallocatedResource();
      if (free == null || !fitsAny(floors, free) && !mayHold(n, free, floors)) {
        return false;
      }
      req.nodes.add(new RequestValues.NodeRow(YarnDrfScheduler.bridgeName(id),
          YarnRecords.vector(free)));
      return true;
    });
  }

  /**
   * Whether the core may reserve the node, whose free room fits no ask: it holds nothing yet, could
   * hold one empty, and has some room (a full node waits for a container's end, so a saturated
   * cluster's full nodes are not listed at every heartbeat).
   */
  private boolean mayHold(FiCaSchedulerNode n, Resource free, List<Resource> floors) {
    return n.getReservedContainer() == null
        && Resources.fitsIn(scheduler.getMinimumResourceCapability(), free)
        && fitsAny(floors, n.getTotalResource());
  }

  private List<NodeId> nodeIds() {
    List<NodeId> ids = new ArrayList<>();
    for (FiCaSchedulerNode n : scheduler.getNodeTracker().getAllNodes()) {
      ids.add(n.getNodeID());
    }
    return ids;
  }

  /**
   * What a node's free room must fit one of for the core to place anything on it: each shape of
   * the outstanding asks no other fits inside (collectAsks has just brought the mirror up to
   * date with this call's asks, AM asks included), raised to YARN's minimum allocation; none
   * when no ask waits.
   */
  private List<Resource> placeableFloors() {
    Resource minimum = scheduler.getMinimumResourceCapability();
    List<Resource> out = new ArrayList<>();
    for (long[] wanted : scheduler.askMirror.wantedFloors()) {
      Resource ask = YarnRecords.resource(wanted);
      out.add(ask == null ? minimum : Resources.componentwiseMax(minimum, ask));
    }
    return out;
  }

  private boolean fitsAny(List<Resource> floors, Resource free) {
    for (Resource floor : floors) {
      if (Resources.fitsIn(floor, free)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The asks of apps whose asks may have changed since the last call, as the mirror's diff. The
   * core applies them after the request's events, the order YARN saw them in: an attempt's
   * reset or an app's start is always queued before its asks are collected here. Offered at
   * heartbeats, an app whose asks changed after every due node's heartbeat is left for a later
   * call (NodeOffers), made at once once those nodes were looked at; a held AM ask counts as
   * late for this call's commit (LateAmAsks), as one made while it was out would.
   */
  private void collectAsks(RequestValues.Schedule req) {
    long latestDue = scheduler.offerBetweenHeartbeats ? Long.MAX_VALUE
        : scheduler.nodeOffers.latestDue();
    for (ApplicationId appId : new ArrayList<>(scheduler.dirtyApps)) {
      ShimAppAttempt attempt = scheduler.currentAttempt(appId);
      if (attempt != null && attempt.askedAt() >= latestDue) {
        if (attempt.isWaitingForAMContainer()) {
          scheduler.lateAmAsks.asked((ShimQueue) attempt.getQueue());
        }
        continue;
      }
      scheduler.dirtyApps.remove(appId);
      if (attempt == null) {
        continue;
      }
      synchronized (attempt) {
        scheduler.askMirror.diff(appId.toString(),
            attempt.getAppSchedulingInfo().getAllResourceRequests(), amPriority(attempt),
            req.asks, req.counts, req.amAsks);
      }
    }
  }

  /** The whole blacklist of each app whose blacklist changed since the last call, as a delta. */
  private void collectBlacklists(RequestValues.Schedule req) {
    if (scheduler.blacklistChanged.isEmpty()) {
      return;
    }
    Map<String, List<String>> nodesByName = nodesByName();
    for (ApplicationId appId : new ArrayList<>(scheduler.blacklistChanged)) {
      scheduler.blacklistChanged.remove(appId);
      ShimAppAttempt attempt = scheduler.currentAttempt(appId);
      if (attempt != null) {
        req.deltas.add(RequestValues.Delta.blacklist(appId.toString(),
            blacklistOf(attempt, nodesByName)));
      }
    }
  }

  @Override
  public void commit(ReplyValues.ScheduleReply reply) {
    if (reply.queues != null) {  // the core's tree is new to the shim: a reload, a resync
      scheduler.queues.update(reply.queues);
    }
    if (!reply.queuesBuilt.isEmpty() || !reply.queuesCreated.isEmpty()) {  // placement or a
      scheduler.queues.grow(reply.queuesBuilt, reply.queuesCreated);  // recovered app built queues
    }
    for (ReplyValues.Placement p : reply.placements) {
      scheduler.submissions.placed(p);
    }
    scheduler.committer.commit(reply.assignments);
    scheduler.nodeOffers.coreCarries(reply.carried);
    scheduler.holds.apply(reply.holdsEnded, reply.holds);  // after: a hold served ends with it
    scheduler.preemptions.apply(reply.preempt, reply.kill);
    if (reply.preemptionState != null) {  // after the kills: a saved kill has reached YARN
      scheduler.preemptionStore.update(reply.preemptionState);
    }
    scheduler.controls.headroom(reply.headroom);
    scheduler.controls.amWaits(reply.amDiagnostics);
    Resource available = Resources.componentwiseMax(
        Resources.subtract(scheduler.getClusterResource(), scheduler.usedResource),
        Resources.none());
    scheduler.queues.root().getMetrics().setAvailableResourcesToQueue(available);
  }
  /**
   * The priority of the attempt's AM ask while it waits for its AM container (YARN's
   * RMAppAttemptImpl asks at AM_CONTAINER_PRIORITY for it), else null: its AM runs, or it is
   * unmanaged.
   */
  private static Integer amPriority(ShimAppAttempt attempt) {
    return attempt.isWaitingForAMContainer()
        ? RMAppAttemptImpl.AM_CONTAINER_PRIORITY.getPriority() : null;
  }

  /**
   * Bridge node names (host:port) by YARN's node name (the host, or host:port with
   * yarn.scheduler.include-port-in-node-name), which an AM's blacklist names.
   */
  private Map<String, List<String>> nodesByName() {
    Map<String, List<String>> out = new HashMap<>();
    for (FiCaSchedulerNode n : scheduler.getNodeTracker().getAllNodes()) {
      out.computeIfAbsent(n.getNodeName(), k -> new ArrayList<>())
          .add(YarnDrfScheduler.bridgeName(n.getNodeID()));
    }
    return out;
  }

  /**
   * The attempt's blacklist for the core: each node name as the bridge names of the nodes it
   * names; anything else (a rack, a host not in the cluster) as it is.
   */
  private static List<String> blacklistOf(ShimAppAttempt attempt,
      Map<String, List<String>> nodesByName) {
    List<String> out = new ArrayList<>();
    for (String place : attempt.getBlacklistedNodes()) {
      Collection<String> nodes = nodesByName.get(place);
      if (nodes == null) {
        out.add(place);
      } else {
        out.addAll(nodes);
      }
    }
    Collections.sort(out);
    return out;
  }
}

package org.yarndrf.shim;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.thirdparty.com.google.common.util.concurrent.SettableFuture;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.RejectedSchedulingRequest;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.RMContextImpl;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.records.ApplicationStateData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAttributesUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeLabelsUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ReleaseContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.shim.bridge.CoreChannel;
import org.yarndrf.shim.bridge.CoreDir;
import org.yarndrf.shim.bridge.ServePorts;

/**
 * A YARN ResourceScheduler whose decisions are made by the yarn-drf Python core (weighted DRF):
 * the YARN adapter. It handles YARN's events in one switch, as FifoScheduler does, answers YARN's
 * questions (queues, ACLs, allocate), and keeps what the core must be told (PendingEvents, the
 * asks' mirror, the apps waiting for placement: {@link Submissions}). It decides nothing itself:
 * the {@link SchedulingLoop} thread sends those changes to the core ({@link BridgeClient}) through
 * {@link LoopSide}, which hands the core's assignments to the {@link AssignmentCommitter}, its
 * preemptions to {@link Preemptions} and what it says of each app to {@link AppControls}, which
 * also carries out operators' moves and priority updates. ARCHITECTURE.md walks the whole path.
 *
 * <p>YARN's own bookkeeping stays the truth: SchedulerApplicationAttempt/AppSchedulingInfo hold
 * the asks, SchedulerNode the node usage, RMContainer the container lifecycle.
 *
 * <p>Locking: every event handler holds this scheduler's lock (its monitor), as FifoScheduler's
 * do; the loop takes it only to collect the changes and to commit a reply, never during a call.
 * allocate() holds the app attempt's lock, as YARN's own schedulers do.
 */
public class YarnDrfScheduler extends AbstractYarnScheduler<ShimAppAttempt, FiCaSchedulerNode>
    implements Configurable {
  private static final Logger LOG = LoggerFactory.getLogger(YarnDrfScheduler.class);
  /** How long serviceStop waits for the loop's thread once the core is stopped. */
  private static final long LOOP_STOP_WAIT_MS = 200;

  /** YARN's Fifo calculator drops vcores and custom resources from every ask; DRC keeps them. */
  private final ResourceCalculator calculator = new DominantResourceCalculator();
  private Configuration conf;
  /** This RM's HA id, whose per-RM keys apply (ShimConf.forRm); null without HA. */
  private String rmId;
  /** The queue file the core reads when it (or a restarted child) starts. */
  private QueuesFile queuesFile;
  /** Set once serviceStart has waited for the core; reinitialize before that only remembers. */
  volatile boolean coreStarted;
  private boolean usePortForNodeName;
  QueueTree queues;
  final AskMirror askMirror = new AskMirror();
  /** Apps whose asks may have changed since the last call (allocate() adds from RPC threads). */
  final Set<ApplicationId> dirtyApps = ConcurrentHashMap.newKeySet();
  /**
   * Apps whose blacklist changed since the last call: their AM's allocate() (from RPC threads), or
   * a new attempt.
   */
  final Set<ApplicationId> blacklistChanged = ConcurrentHashMap.newKeySet();
  final PendingEvents events = new PendingEvents();
  final Resource usedResource = Resource.newInstance(0, 0);
  /** The GPU cards the nodes' NodeManagers declare (node attributes). */
  final NodeCards nodeCards = new NodeCards(
      () -> rmContext == null ? null : rmContext.getNodeAttributesManager());
  /** The cluster's node labels, and those the core has (null manager: labels disabled). */
  final NodeLabels nodeLabels = new NodeLabels(() -> rmContext == null
      || !YarnConfiguration.areNodeLabelsEnabled(conf) ? null : rmContext.getNodeLabelManager());
  /** NodeManager heartbeats since the last call, for the service's metrics. */
  final AtomicLong heartbeats = new AtomicLong();
  private BridgeClient bridge;
  AssignmentCommitter committer;
  final Preemptions preemptions = new Preemptions(this);
  /** The core's holds, shown as YARN's reserved containers. */
  final CoreHolds holds = new CoreHolds(this);
  /** Operators' moves and priority updates; the core's headroom and AM diagnostics. */
  final AppControls controls = new AppControls(this);
  /** Apps submitted and not yet placed by the core. */
  final Submissions submissions = new Submissions(this);
  /** The core's preemption state, kept for the next core and the next active RM. */
  volatile PreemptionStore preemptionStore = new PreemptionStore(null);
  /** Set by serviceStart; YARN calls allocate() and handle() before that while an RM recovers. */
  private volatile SchedulingLoop loop;
  /** Which nodes each schedule call offers (NodeOffers); set up at init. */
  NodeOffers<NodeId> nodeOffers;
  /** AMs asked for while a call is out: the committer stops before an assignment above one. */
  final LateAmAsks lateAmAsks = new LateAmAsks();
  /** yarn-drf.bridge.timeout-ms: a call slower than this makes the next ones offer fewer nodes. */
  int callBudgetMs;
  /** yarn-drf.scheduler.offer-between-heartbeats. */
  boolean offerBetweenHeartbeats;
  /** ShimConf.MAX_DEFERRED_SHARE (the committer's DeferralBudget). */
  double maxDeferredShare;

  public final AtomicLong eventErrors = new AtomicLong();

  public YarnDrfScheduler() {
    super(YarnDrfScheduler.class.getName());
  }

  /** For tests: run against a given channel (a fake core) instead of py4j. */
  public void setCoreChannel(CoreChannel channel) {
    this.bridge = CoreLauncher.over(channel, conf);
  }

  // ---------------------------------------------------------------- lifecycle

  @Override
  public synchronized void setConf(Configuration conf) {
    this.conf = conf;
  }

  @Override
  public synchronized Configuration getConf() {
    return conf;
  }

  /**
   * Runs on every scheduler object Hadoop makes: at RM start, and on an HA RM at every transition
   * to standby (the standby's next scheduler, never started until it becomes active). So nothing
   * here starts a process or makes a file: serviceStart does, serviceStop undoes it.
   */
  @Override
  public void serviceInit(Configuration conf) throws Exception {
    this.rmId = ShimConf.rmId(conf);
    this.conf = ShimConf.forRm(conf, rmId);
    // Ordered by ApplicationId so snapshots and logs are stable.
    this.applications = new ConcurrentSkipListMap<>();
    this.minimumAllocation = super.getMinimumAllocation();
    initMaximumResourceCapability(super.getMaximumAllocation());
    this.usePortForNodeName = conf.getBoolean(
        YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
    this.queues = new QueueTree(conf, this::containerRecovered);
    this.nodeOffers = new NodeOffers<>(
        this.conf.getInt(ShimConf.MAX_NODES_PER_CALL, ShimConf.DEFAULT_MAX_NODES_PER_CALL));
    this.callBudgetMs = this.conf.getInt(ShimConf.TIMEOUT_MS, ShimConf.DEFAULT_TIMEOUT_MS);
    this.offerBetweenHeartbeats = this.conf.getBoolean(ShimConf.OFFER_BETWEEN_HEARTBEATS,
        ShimConf.DEFAULT_OFFER_BETWEEN_HEARTBEATS);
    this.maxDeferredShare = this.conf.getDouble(ShimConf.MAX_DEFERRED_SHARE,
        ShimConf.DEFAULT_MAX_DEFERRED_SHARE);
    this.committer = newCommitter(events, dirtyApps);
    this.queuesFile = new QueuesFile(this.conf.getTrimmed(ShimConf.QUEUES_FILE), this.conf,
        rmContext);
    // An RM restarted after a SIGKILL may stay standby for long: its predecessor's token goes now.
    CoreDir.sweepStale();
    super.serviceInit(conf);
  }

  /** The committer of the core's assignments (package-private: tests inject faults). */
  AssignmentCommitter newCommitter(PendingEvents pending, Set<ApplicationId> dirty) {
    return new AssignmentCommitter(this, pending, dirty);
  }

  /**
   * Starts the core (child mode) and the scheduling loop, and returns once the core has answered
   * its first snapshot, so YARN's queue tree is the core's before the RM serves clients. The wait
   * is bounded (yarn-drf.serve.start-timeout-ms) and ends at once if the child exits; either way
   * the RM goes on (a core outage never takes the RM down) and the log says why.
   */
  @Override
  public void serviceStart() throws Exception {
    long started = System.nanoTime();
    if (bridge == null) {
      bridge = CoreLauncher.connect(conf, queuesFile);
    }
    preemptionStore = PreemptionStore.open(conf, rmContext);
    preemptionStore.load();  // before the loop's first snapshot, which gives it to the core
    boolean awaitingNodes = rmContext.isWorkPreservingRecoveryEnabled()
        && !rmContext.isSchedulerReadyForAllocatingContainers();
    loop = new SchedulingLoop(this, new LoopSide(this), bridge, committer,
        conf.getLong(ShimConf.RECHECK_MS, ShimConf.DEFAULT_RECHECK_MS));
    loop.start();
    bridge.awaitFirstAnswer(started,
        conf.getLong(ShimConf.START_TIMEOUT_MS, ShimConf.DEFAULT_START_TIMEOUT_MS));
    if (awaitingNodes && rmContext instanceof RMContextImpl) {
      // YARN starts a restarted RM's wait for its NodeManagers when it recovers, before it starts
      // the scheduler, and they cannot re-register before the scheduler started (the resource
      // tracker starts after it): the wait counts from now, not through the core's start.
      ((RMContextImpl) rmContext).setSchedulerRecoveryStartAndWaitTime(conf.getLong(
          YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS,
          YarnConfiguration.DEFAULT_RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS));
    }
    coreStarted = true;
    super.serviceStart();
  }

  /**
   * Stops the loop and the core within about half a second (ServeSupervisor.stop), the core's
   * private directory (token, port file) with them: an HA RM stops its scheduler at every
   * transition to standby, and the next active one needs nothing of this one's.
   */
  @Override
  public void serviceStop() throws Exception {
    coreStarted = false;
    if (loop != null) {
      loop.stop();
    }
    preemptionStore.close();
    if (bridge != null) {
      bridge.close();
    }
    if (loop != null && !loop.awaitStopped(LOOP_STOP_WAIT_MS)) {
      LOG.warn("yarn-drf: the scheduling loop is still in a call {} ms after the core was stopped; "
          + "it ends at the call's timeout", LOOP_STOP_WAIT_MS);
    }
    super.serviceStop();
  }

  @Override
  public synchronized void setRMContext(RMContext rmContext) {
    this.rmContext = rmContext;
  }

  /**
   * `yarn rmadmin -refreshQueues`: the core re-reads the queue file (the one the new configuration
   * names, else the current one; from the RM's configuration store when it has one: QueuesFile);
   * a bad file is refused whole. The loop's thread makes the call (it is the only one that talks
   * to the core); this waits for it without holding the scheduler's lock, which the loop may
   * need meanwhile.
   *
   * <p>Before serviceStart there is no core to ask: an HA RM refreshes its standby scheduler
   * before starting it (AdminService.transitionToActive: refreshAll, then the active services).
   * Then the file is only remembered, and the core reads it when it starts, as it reads the
   * configured one at an RM's start; an invalid file then keeps that core from starting, which
   * the start's log names. Failing here would fail the transition to active.
   */
  @Override
  public void reinitialize(Configuration newConf, RMContext rmContext) throws IOException {
    synchronized (this) {
      super.reinitialize(newConf, rmContext);
    }
    String file = ShimConf.forRm(newConf, rmId).getTrimmed(ShimConf.QUEUES_FILE,
        queuesFile.name());
    if (!coreStarted) {
      queuesFile.rename(file);
      LOG.info("yarn-drf: the core will read the queue file {} when it starts", file);
      return;
    }
    String path = queuesFile.candidate(file, bridge.privateDir());
    BridgeClient.ReloadOutcome outcome;
    try {
      outcome = loop.reload(path);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("yarn-drf: interrupted while the queues were reloaded", e);
    }
    if (outcome.reply == null && outcome.timedOut) {
      // The session resyncs next, and the snapshot's reply carries the core's queue tree.
      throw new IOException("yarn-drf: outcome unknown: the scheduler core did not answer within "
          + bridge.slowTimeoutMs() + " ms; it may have applied the file. Check `yarn-drf status` "
          + "or the service's log; YARN's queue tree follows the core's with the next call");
    }
    if (outcome.reply == null || !outcome.reply.accepted) {
      queuesFile.refused(bridge.privateDir());  // the file a restarted core reads stays in force
    }
    if (outcome.reply == null) {
      throw new IOException("yarn-drf: the scheduler core is unavailable; queues not reloaded");
    }
    if (!outcome.reply.accepted) {
      StringBuilder sb = new StringBuilder("yarn-drf: queue configuration refused, the old one "
          + "stays in force:");
      for (String e : outcome.reply.errors) {
        sb.append("\n  ").append(e);
      }
      throw new IOException(sb.toString());
    }
    queuesFile.accepted(file);  // a restarted child reads the file in force
    queues.update(outcome.reply.queues);
    LOG.info("yarn-drf: queues reloaded: {}", outcome.reply.changes);
  }

  /**
   * The address of the core's dashboard for the RM's Scheduler page: the operator's
   * yarn-drf.dashboard.url, else the status port the child reported on 127.0.0.1; null when
   * neither is known (external mode, no status server, or the child has not reported yet).
   */
  public String dashboardUrl() {
    String configured = conf == null ? "" : conf.getTrimmed(ShimConf.DASHBOARD_URL, "");
    if (configured.startsWith("http://") || configured.startsWith("https://")) {
      return configured;
    }
    if (!configured.isEmpty()) {
      LOG.warn("yarn-drf: {} must be an http:// or https:// URL, not linked: {}",
          ShimConf.DASHBOARD_URL, configured);
    }
    BridgeClient b = bridge;
    int port = b == null ? ServePorts.UNKNOWN : b.statusPort();
    return port > 0 ? "http://127.0.0.1:" + port + "/ui/" : null;
  }

  // ---------------------------------------------------------------- YARN questions

  @Override
  public ResourceCalculator getResourceCalculator() {
    return calculator;
  }

  /**
   * Every type the core divides by dominant share: memory and CPU (YARN's enum has no others).
   * The MapReduce AM reads it to decide whether its asks' vcores count; AbstractYarnScheduler's
   * MEMORY alone would make it ask for one vcore whatever the job says.
   */
  @Override
  public EnumSet<SchedulerResourceTypes> getSchedulingResourceTypes() {
    return EnumSet.of(SchedulerResourceTypes.MEMORY, SchedulerResourceTypes.CPU);
  }

  /**
   * The largest container an app of this queue may ask for: YARN checks every ask against it, at
   * submission (the AM's, refused with InvalidResourceRequestException) and in each allocate call.
   * A name YARN does not know as a queue yet (placement decides later) gets YARN's maximum.
   */
  @Override
  public Resource getMaximumResourceCapability(String queueName) {
    ShimQueue q = queues.find(queueName);
    Resource cluster = getMaximumResourceCapability();
    return q == null ? cluster : q.maxContainer(cluster);
  }

  @Override
  public int getNumClusterNodes() {
    return nodeTracker.nodeCount();
  }

  /** The root of the queue tree YARN sees (the core's last reply's). */
  public ShimQueue rootQueue() {
    return queues.root();
  }

  @Override
  public QueueMetrics getRootQueueMetrics() {
    return queues.root().getMetrics();
  }

  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive)
      throws IOException {
    ShimQueue q = queues.find(queueName);
    if (q == null) {
      throw new IOException("Unknown queue: " + queueName);
    }
    QueueInfo info = q.queueInfo(includeChildQueues, recursive, getClusterResource());
    return info;
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo() {
    UserGroupInformation user;
    try {
      user = UserGroupInformation.getCurrentUser();
    } catch (IOException e) {
      return Collections.emptyList();
    }
    return queues.root().getQueueUserAclInfo(user);
  }

  @Override
  public boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    ShimQueue q = queues.find(queueName);
    return q != null && q.hasAccess(acl, callerUGI);
  }

  @Override
  public List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    ShimQueue q = queues.find(queueName);
    if (q == null) {
      return null;
    }
    String prefix = q.getQueueName() + ".";
    List<ApplicationAttemptId> out = new ArrayList<>();
    for (SchedulerApplication<ShimAppAttempt> app : applications.values()) {
      String name = app.getQueue().getQueueName();
      ShimAppAttempt attempt = app.getCurrentAppAttempt();
      if (attempt != null && (name.equals(q.getQueueName()) || name.startsWith(prefix))) {
        out.add(attempt.getApplicationAttemptId());
      }
    }
    return out;
  }

  @Override
  public RMContainer getRMContainer(ContainerId containerId) {
    ShimAppAttempt attempt = getCurrentAttemptForContainer(containerId);
    return attempt == null ? null : attempt.getRMContainer(containerId);
  }

  @Override
  public void recover(RMState state) {
    // Apps, attempts and containers come back through APP_ADDED / APP_ATTEMPT_ADDED /
    // NODE_ADDED events (with their recovering flags); there is nothing else to restore.
  }

  // ---------------------------------------------------------------- application priority, moves

  /**
   * The priority an app gets at submission and by `yarn application -updatePriority`: the one
   * asked for (0 if none), capped at the cluster's `yarn.cluster.max-application-priority`, as
   * CapacityScheduler caps it. yarn-drf has no per-queue default priority nor priority ACLs.
   */
  @Override
  public Priority checkAndGetApplicationPriority(Priority requested, UserGroupInformation user,
      String queuePath, ApplicationId applicationId) {
    int asked = requested == null ? 0 : requested.getPriority();
    return Priority.newInstance(Math.min(asked, getMaxClusterLevelAppPriority().getPriority()));
  }

  /** `yarn application -updatePriority` ({@link AppControls}). */
  @Override
  public Priority updateApplicationPriority(Priority newPriority, ApplicationId applicationId,
      SettableFuture<Object> future, UserGroupInformation user) throws YarnException {
    return controls.updatePriority(newPriority, applicationId, future, user);
  }

  /** `yarn application -movetoqueue`, checked before YARN stores the new queue ({@link AppControls}). */
  @Override
  public void preValidateMoveApplication(ApplicationId appId, String newQueue)
      throws YarnException {
    controls.preValidateMove(appId, newQueue);
  }

  /** `yarn application -movetoqueue`, as the core decides it ({@link AppControls}). */
  @Override
  public String moveApplication(ApplicationId appId, String newQueue) throws YarnException {
    return controls.move(appId, newQueue);
  }

  // ---------------------------------------------------------------- AM asks

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release,
      List<String> blacklistAdditions, List<String> blacklistRemovals,
      ContainerUpdates updateRequests) {
    ShimAppAttempt application = getApplicationAttempt(attemptId);
    if (application == null || !application.getApplicationAttemptId().equals(attemptId)) {
      LOG.error("yarn-drf: allocate from unknown or stale attempt {}", attemptId);
      return EMPTY_ALLOCATION;
    }
    UnitlessAmounts.correct(rmContext.getRMApps().get(attemptId.getApplicationId()), ask);
    normalizeResourceRequests(ask);
    releaseContainers(release, application);
    synchronized (application) {
      if (application.isStopped()) {
        return EMPTY_ALLOCATION;
      }
      if (!ask.isEmpty()) {
        application.updateResourceRequests(ask);
        application.asked(nodeOffers.now());
        if (application.isWaitingForAMContainer()) {
          lateAmAsks.asked((ShimQueue) application.getQueue());
        }
        // The core learns the new absolute counts with the loop's next call.
        dirtyApps.add(attemptId.getApplicationId());
        wakeLoop();
      }
      application.updateBlacklist(blacklistAdditions, blacklistRemovals);
      if (!(isEmpty(blacklistAdditions) && isEmpty(blacklistRemovals))) {
        // The core learns the app's whole blacklist with the loop's next call.
        blacklistChanged.add(attemptId.getApplicationId());
        wakeLoop();
      }
      Resource headroom = application.getHeadroom();
      application.setApplicationHeadroomForMetrics(headroom);
      List<Container> allocated = application.pullNewlyAllocatedContainers();
      // Containers of earlier attempts that a restarted RM recovered after this AM registered
      // (their NodeManager came back late): the AM learns of them here, as from YARN's schedulers.
      List<Container> fromEarlierAttempts = application.pullPreviousAttemptContainers();
      List<RejectedSchedulingRequest> rejected = RequestRefusals.rejected(schedulingRequests);
      int updatesRefused = RequestRefusals.refuseUpdates(updateRequests, application::refuseUpdate);
      if (rejected != null || updatesRefused > 0) {
        LOG.warn("yarn-drf: {} asked for what yarn-drf does not serve; rejected {} scheduling"
            + " request(s) ({}) and refused {} container update(s) ({})", attemptId,
            rejected == null ? 0 : rejected.size(), RequestRefusals.CONSTRAINTS_REFUSED,
            updatesRefused, RequestRefusals.UPDATE_REFUSED);
      }
      // Marked containers go as a strict contract (FairScheduler's choice): these are taken.
      return new Allocation(allocated, headroom, application.preemptionMarks(), null, null,
          application.pullUpdatedNMTokens(), null, null, null, null, fromEarlierAttempts,
          rejected);
    }
  }

  /**
   * True so that, under {@code yarn.resourcemanager.placement-constraints.handler=scheduler},
   * YARN hands an AM's scheduling requests to {@link #allocate}, which rejects each in the
   * response and serves the rest of the call (false would make YARN refuse the whole call).
   */
  @Override
  public boolean placementConstraintEnabled() {
    return true;
  }

  private static boolean isEmpty(List<String> list) {
    return list == null || list.isEmpty();
  }

  // ---------------------------------------------------------------- events

  /**
   * YARN's scheduler event thread exits the whole RM on an uncaught exception: a bad event or a
   * bug here is logged and counted instead, and the event dropped. An event that leaves something
   * for the core wakes the scheduling loop.
   */
  @Override
  public void handle(SchedulerEvent event) {
    try {
      dispatch(event);
    } catch (RuntimeException e) {
      eventErrors.incrementAndGet();
      LOG.error("yarn-drf: failed to handle scheduler event {} [event errors={}]", event,
          eventErrors.get(), e);
    }
    boolean changed;
    synchronized (this) {
      changed = hasPendingChanges();
    }
    if (changed) {
      wakeLoop();
    }
  }

  /**
   * Tells the loop something changed. Before serviceStart there is no loop: a recovering RM
   * re-adds apps and their new attempts' AM asks (allocate) before it starts its scheduler, and
   * the loop's first call, once started, collects all of it.
   */
  void wakeLoop() {
    SchedulingLoop l = loop;
    if (l != null) {
      l.wake();
    }
  }

  /** Whether something waits for the loop's next call. Under the scheduler's lock. */
  boolean hasPendingChanges() {
    return !events.isEmpty() || !dirtyApps.isEmpty() || !submissions.isEmpty()
        || !blacklistChanged.isEmpty() || nodesWaiting();
  }

  /** Nodes no call has offered since their heartbeat (or in this round), while asks wait. */
  private boolean nodesWaiting() {
    return nodeOffers.waiting() && askMirror.hasOutstanding();
  }

  private void dispatch(SchedulerEvent event) {
    switch (event.getType()) {
      case NODE_ADDED: {
        NodeAddedSchedulerEvent e = (NodeAddedSchedulerEvent) event;
        addNode(e.getAddedRMNode(), e.getContainerReports());
        break;
      }
      case NODE_REMOVED:
        removeNode(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        break;
      case NODE_RESOURCE_UPDATE: {
        NodeResourceUpdateSchedulerEvent e = (NodeResourceUpdateSchedulerEvent) event;
        resizeNode(e);
        break;
      }
      case NODE_UPDATE:
        nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        break;
      case NODE_LABELS_UPDATE:
        labelsChanged(((NodeLabelsUpdateSchedulerEvent) event).getUpdatedNodeToLabels());
        break;
      case NODE_ATTRIBUTES_UPDATE:
        attributesChanged(((NodeAttributesUpdateSchedulerEvent) event).getUpdatedNodeToAttributes().keySet());
        break;
      case APP_ADDED: {
        AppAddedSchedulerEvent e = (AppAddedSchedulerEvent) event;
        addApplication(e.getApplicationId(), e.getQueue(), e.getUser(), e.getIsAppRecovering(),
            e.isUnmanagedAM(), e.getApplicatonPriority());
        break;
      }
      case APP_REMOVED: {
        AppRemovedSchedulerEvent e = (AppRemovedSchedulerEvent) event;
        doneApplication(e.getApplicationID(), e.getFinalState());
        break;
      }
      case APP_ATTEMPT_ADDED: {
        AppAttemptAddedSchedulerEvent e = (AppAttemptAddedSchedulerEvent) event;
        addApplicationAttempt(e.getApplicationAttemptId(),
            e.getTransferStateFromPreviousAttempt(), e.getIsAttemptRecovering());
        break;
      }
      case APP_ATTEMPT_REMOVED: {
        AppAttemptRemovedSchedulerEvent e = (AppAttemptRemovedSchedulerEvent) event;
        doneApplicationAttempt(e.getApplicationAttemptID(), e.getFinalAttemptState(),
            e.getKeepContainersAcrossAppAttempts());
        break;
      }
      case CONTAINER_EXPIRED: {
        ContainerId id = ((ContainerExpiredSchedulerEvent) event).getContainerId();
        super.completedContainer(getRMContainer(id),
            SchedulerUtils.createAbnormalContainerStatus(id, SchedulerUtils.EXPIRED_CONTAINER),
            RMContainerEventType.EXPIRE);
        break;
      }
      case RELEASE_CONTAINER: {
        RMContainer c = ((ReleaseContainerEvent) event).getContainer();
        super.completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(
            c.getContainerId(), SchedulerUtils.RELEASED_CONTAINER), RMContainerEventType.RELEASED);
        break;
      }
      default:
        // Reservations and the events of YARN's preemption monitor are not
        // used by yarn-drf: it preempts by its core's plan (Preemptions).
        LOG.warn("yarn-drf: ignoring scheduler event {}", event.getType());
    }
  }

  /** The node's name on the bridge: YARN's host:port (NodeId), not Hadoop's host-only getNodeName(). */
  static String bridgeName(NodeId id) {
    return id.toString();
  }

  private synchronized void addNode(RMNode rmNode, List<NMContainerStatus> recovered) {
    FiCaSchedulerNode node = new FiCaSchedulerNode(rmNode, usePortForNodeName,
        rmNode.getNodeLabels());
    nodeTracker.addNode(node);
    tellLabels();  // the core knows the node's label before the node
    events.add(RequestValues.Delta.nodeAdded(new RequestValues.NodeInfo(
        bridgeName(rmNode.getNodeID()), YarnRecords.amounts(rmNode.getTotalCapability()))
        .withRack(rmNode.getRackName()).withCards(nodeCards.added(rmNode.getNodeID()))
        .withLabel(node.getPartition())));
    // Recovered containers reach the core through ShimQueue.recoverContainer.
    recoverContainersOnNode(recovered, rmNode);
  }

  /**
   * Nodes' labels changed (`yarn rmadmin -replaceLabelsOnNode`, or their NodeManagers' own, in
   * distributed configuration): YARN's node records take the new partition, as CapacityScheduler's
   * do, and the core moves each node to its partition's pool; its running containers stay counted
   * where they are.
   */
  private synchronized void labelsChanged(Map<NodeId, Set<String>> update) {
    tellLabels();
    for (Map.Entry<NodeId, Set<String>> e : update.entrySet()) {
      FiCaSchedulerNode node = nodeTracker.getNode(e.getKey());
      if (node == null) {
        continue;
      }
      node.updateLabels(e.getValue());
      events.add(RequestValues.Delta.nodeLabel(bridgeName(e.getKey()),
          NodeLabels.partitionOf(e.getValue())));
    }
  }

  /**
   * Nodes whose label the manager changed (`rmadmin -replaceLabelsOnNode`, a NodeManager's own
   * labels in distributed configuration) since they were last read: handled as NODE_LABELS_UPDATE.
   */
  void readNodeLabels() {
    if (!nodeLabels.due(System.currentTimeMillis())) {
      return;
    }
    Map<NodeId, Set<String>> changed = new HashMap<>();
    for (FiCaSchedulerNode node : nodeTracker.getAllNodes()) {
      String label = nodeLabels.labelOf(node.getNodeID());
      if (!label.equals(node.getPartition())) {
        changed.put(node.getNodeID(), label.isEmpty() ? Collections.<String>emptySet()
            : Collections.singleton(label));
      }
    }
    if (!changed.isEmpty()) {
      labelsChanged(changed);
    }
  }

  /** Queues the cluster's node labels if they changed since the core last had them. */
  void tellLabels() {
    Map<String, Boolean> labels = nodeLabels.changed();
    if (labels != null) {
      events.add(RequestValues.Delta.labels(labels));
    }
  }

  /** The node label expression of the app's AM request (null: none), as RMAppManager set it. */
  private String amLabel(ApplicationId appId) {
    RMApp app = rmContext.getRMApps().get(appId);
    List<ResourceRequest> am = app == null ? null : app.getAMResourceRequests();
    return am == null || am.isEmpty() ? null : am.get(0).getNodeLabelExpression();
  }

  private synchronized void removeNode(RMNode rmNode) {
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    holds.release(node);
    for (RMContainer c : node.getCopiedListOfRunningContainers()) {
      super.completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(
          c.getContainerId(), SchedulerUtils.LOST_CONTAINER), RMContainerEventType.KILL);
    }
    nodeTracker.removeNode(rmNode.getNodeID());
    nodeOffers.removed(rmNode.getNodeID());
    nodeCards.removed(rmNode.getNodeID());
    events.add(RequestValues.Delta.nodeRemoved(bridgeName(rmNode.getNodeID())));
  }

  private synchronized void resizeNode(NodeResourceUpdateSchedulerEvent e) {
    updateNodeResource(e.getRMNode(), e.getResourceOption());
    FiCaSchedulerNode node = (FiCaSchedulerNode) getNode(e.getRMNode().getNodeID());
    if (node != null) {
      events.add(RequestValues.Delta.nodeUpdated(bridgeName(node.getNodeID()),
          YarnRecords.amounts(node.getTotalResource()), null));
    }
  }

  /**
   * The node attributes of these hosts changed (YARN keeps them per host): each of their nodes
   * whose GPU cards changed goes to the core as updated.
   */
  private synchronized void attributesChanged(Set<String> hosts) {
    for (FiCaSchedulerNode node : nodeTracker.getAllNodes()) {
      if (hosts.contains(node.getNodeID().getHost())) {
        List<Long> cards = nodeCards.changed(node.getNodeID());
        if (cards != null) {
          LOG.info("yarn-drf: node {} GPU cards now {}", node.getNodeID(), cards);
          events.add(RequestValues.Delta.nodeUpdated(bridgeName(node.getNodeID()),
              YarnRecords.amounts(node.getTotalResource()), cards));
        }
      }
    }
  }

  /**
   * A NodeManager heartbeat: YARN processes its launched and finished containers (finished ones
   * queue events for the core through completedContainerInternal), and the node is due an offer
   * if some app asks for containers now (YARN's pending count, kept by AppSchedulingInfo): a
   * heartbeat while none does is one on which CapacityScheduler places nothing, so an ask made
   * after it (a new attempt's AM, say) waits for the node's next. YARN's queue metrics count the
   * default partition's asks only, so asks of a labelled partition count as the core was told
   * them (the next heartbeat after the call that carried them). No call to the core here: the
   * scheduling loop decides for every node due an offer at once.
   */
  @Override
  protected synchronized void nodeUpdate(RMNode nm) {
    super.nodeUpdate(nm);
    heartbeats.incrementAndGet();
    if (!offerBetweenHeartbeats && (getRootQueueMetrics().getPendingContainers() > 0
        || askMirror.hasOutstanding())) {
      nodeOffers.heartbeat(nm.getNodeID());
    }
  }

  private synchronized void addApplication(ApplicationId appId, String queueName, String user,
      boolean recovering, boolean unmanagedAM, Priority priority) {
    int p = priority == null ? 0 : priority.getPriority();
    if (!recovering) {
      // The loop asks the core to place it with its next call; it waits in SUBMITTED till then.
      submissions.add(appId, unmanagedAM, new RequestValues.AppInfo(appId.toString(), user,
          queueName).withGroups(groupsOf(user)).withPriority(p).withLabel(amLabel(appId)));
      return;
    }
    // Accepted before the restart and running in this queue: the core takes it there, without
    // placement or ACLs (they may have changed since; its containers run where they run).
    ShimQueue queue = queues.findOrPlaceholder(queueName);
    events.add(RequestValues.Delta.appAdded(new RequestValues.AppInfo(appId.toString(), user,
        queue.getQueueName()).withGroups(groupsOf(user)).withPriority(p)));
    register(appId, queue, user, true, unmanagedAM, p);
  }

  void register(ApplicationId appId, ShimQueue queue, String user, boolean recovering,
      boolean unmanagedAM, int priority) {
    SchedulerApplication<ShimAppAttempt> application = new SchedulerApplication<>(queue, user,
        Priority.newInstance(priority), unmanagedAM);
    applications.put(appId, application);
    queue.getMetrics().submitApp(user, unmanagedAM);
    RMApp rmApp = rmContext.getRMApps().get(appId);
    if (rmApp != null) {
      rmApp.setQueue(queue.getQueueName());
      if (!recovering) {
        storePlacedQueue(rmApp, queue.getQueueName());
      }
    }
    LOG.info("yarn-drf: accepted {} from {} into {}", appId, user, queue.getQueueName());
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler()
          .handle(new RMAppEvent(appId, RMAppEventType.APP_ACCEPTED));
    }
  }

  /**
   * Writes the placed queue's full path into the app's stored submission context, as RMAppManager
   * stores a move. YARN saved the app with the queue it was submitted to (a short name, or what a
   * placement rule read); a restarted RM recovers it into the stored queue before its core has
   * given it the tree, so only a full path finds the queue the app ran in. A name that recovers
   * into the placed queue anyway (a leaf of root by its short name, as most apps are submitted)
   * is left as stored: the write would be an app-state update neither of YARN's schedulers makes
   * (Hadoop's TestRMRestart counts them). The app is not told of the write (as RMAppImpl's own
   * launch-time update does not): a SUBMITTED app has no transition for APP_UPDATE_SAVED and
   * would log it as invalid at every submission.
   */
  private void storePlacedQueue(RMApp rmApp, String path) {
    ApplicationSubmissionContext context = rmApp.getApplicationSubmissionContext();
    if (context.getQueue() != null && QueueTree.recoveredPath(context.getQueue()).equals(path)) {
      return;
    }
    context.setQueue(path);
    ApplicationStateData state = ApplicationStateData.newInstance(rmApp.getSubmitTime(),
        rmApp.getStartTime(), context, rmApp.getUser(), rmApp.getCallerContext());
    state.setApplicationTimeouts(rmApp.getApplicationTimeouts());
    state.setLaunchTime(rmApp.getLaunchTime());
    rmContext.getStateStore().updateApplicationState(state, false);
  }

  static ApplicationId applicationIdOf(String text) {
    try {
      return ApplicationId.fromString(text);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** The user's groups by Hadoop's group mapping on the RM host, for ACLs and placement. */
  static List<String> groupsOf(String user) {
    try {
      return new ArrayList<>(UserGroupInformation.createRemoteUser(user).getGroups());
    } catch (RuntimeException e) {
      LOG.warn("yarn-drf: cannot resolve groups of {}: {}", user, e.toString());
      return new ArrayList<>();
    }
  }

  private synchronized void addApplicationAttempt(ApplicationAttemptId attemptId,
      boolean transferState, boolean recovering) {
    SchedulerApplication<ShimAppAttempt> application =
        applications.get(attemptId.getApplicationId());
    if (application == null) {
      LOG.warn("yarn-drf: attempt {} of unknown application", attemptId);
      return;
    }
    ShimQueue queue = (ShimQueue) application.getQueue();
    ShimAppAttempt attempt = new ShimAppAttempt(attemptId, application.getUser(), queue,
        queue.getAbstractUsersManager(), rmContext);
    ShimAppAttempt previous = application.getCurrentAppAttempt();
    if (transferState) {
      attempt.transferStateFromPreviousAttempt(previous);
    }
    application.setCurrentAppAttempt(attempt);
    queue.getMetrics().submitAppAttempt(application.getUser(), application.isUnmanagedAM());
    askMirror.forget(attemptId.getApplicationId().toString());
    events.add(RequestValues.Delta.attemptAdded(attemptId.getApplicationId().toString()));
    if (previous != null) {
      // YARN's blacklist belongs to the attempt: a new one starts empty, or with the previous
      // one's when it keeps its containers. The core still holds the previous attempt's, so it
      // gets the new attempt's whole blacklist after its attempt_added.
      blacklistChanged.add(attemptId.getApplicationId());
    }
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler()
          .handle(new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  private synchronized void doneApplicationAttempt(ApplicationAttemptId attemptId,
      RMAppAttemptState finalState, boolean keepContainers) {
    ShimAppAttempt attempt = getApplicationAttempt(attemptId);
    if (attempt == null) {
      LOG.warn("yarn-drf: unknown attempt {} finished", attemptId);
      return;
    }
    for (RMContainer c : attempt.getLiveContainers()) {
      if (keepContainers && c.getState().equals(RMContainerState.RUNNING)) {
        continue;
      }
      super.completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(
          c.getContainerId(), SchedulerUtils.COMPLETED_APPLICATION), RMContainerEventType.KILL);
    }
    holds.attemptEnded(attempt);
    attempt.stop(finalState);
    dirtyApps.add(attemptId.getApplicationId());
  }

  private synchronized void doneApplication(ApplicationId appId, RMAppState finalState) {
    submissions.remove(appId);
    SchedulerApplication<ShimAppAttempt> application = applications.get(appId);
    if (application == null) {
      return;
    }
    ((ShimQueue) application.getQueue()).getAbstractUsersManager()
        .deactivateApplication(application.getUser(), appId);
    application.stop(finalState);
    applications.remove(appId);
    askMirror.forget(appId.toString());
    dirtyApps.remove(appId);
    blacklistChanged.remove(appId);
    events.add(RequestValues.Delta.appRemoved(appId.toString()));
  }

  @Override
  protected synchronized void completedContainerInternal(RMContainer rmContainer,
      ContainerStatus status, RMContainerEventType event) {
    if (rmContainer.getState() == RMContainerState.RESERVED) {
      holds.killed(rmContainer, status);  // a hold shown in YARN: nothing ran, the core is not told
      return;
    }
    Container container = rmContainer.getContainer();
    ShimAppAttempt application = getCurrentAttemptForContainer(container.getId());
    FiCaSchedulerNode node = (FiCaSchedulerNode) getNode(container.getNodeId());
    events.finished(container.getId().toString(), finishState(status, event));
    if (application == null) {
      LOG.info("yarn-drf: container {} of an unknown application finished", container.getId());
      return;
    }
    // Counted before the attempt hears of the end: its AM may read the metrics once it has.
    if (status != null && status.getExitStatus() == ContainerExitStatus.PREEMPTED) {
      application.getQueue().getMetrics().preemptContainer();  // as FSAppAttempt counts it
    }
    application.containerCompleted(rmContainer, status, event, "");
    application.preemptionEnded(container.getId());
    if (node != null) {
      node.releaseContainer(rmContainer.getContainerId(), false);
    }
    Resources.subtractFrom(usedResource, container.getResource());
    ((ShimQueue) application.getQueue()).charge(container.getResource(), -1);
    // YARN may put the ask back (killed before the AM pulled it): re-diff this app's asks.
    dirtyApps.add(application.getApplicationId());
  }

  static String finishState(ContainerStatus status, RMContainerEventType event) {
    switch (event) {
      case FINISHED:
        return "completed";
      case RELEASED:
        return "released";
      case EXPIRE:
        return "expired";
      default:
        if (status != null && status.getExitStatus() == ContainerExitStatus.ABORTED
            && SchedulerUtils.LOST_CONTAINER.equals(status.getDiagnostics())) {
          return "lost";
        }
        if (status != null && status.getExitStatus() == ContainerExitStatus.PREEMPTED) {
          return "preempted";
        }
        return "killed";
    }
  }

  /** ShimQueue.recoverContainer: a container YARN recovered after an RM restart. */
  private void containerRecovered(ShimQueue queue, SchedulerApplicationAttempt attempt,
      RMContainer c) {
    synchronized (this) {
      Resources.addTo(usedResource, c.getAllocatedResource());
      events.started(c, null);
    }
  }

  @Override
  public void killContainer(RMContainer container) {
    ContainerStatus status = SchedulerUtils.createKilledContainerStatus(
        container.getContainerId(), "Killed by the ResourceManager");
    completedContainer(container, status, RMContainerEventType.KILL);
  }

  @Override
  public synchronized void recoverContainersOnNode(List<NMContainerStatus> reports, RMNode nm) {
    super.recoverContainersOnNode(reports, nm);
  }

  // ---------------------------------------------------------------- what its collaborators use

  /** A node whose assignment was given back: the next call offers it again, heartbeat or not. */
  void offerAgain(NodeId node) {
    nodeOffers.heartbeat(node);
  }

  /** The node a bridge message names (host:port), or null. */
  FiCaSchedulerNode nodeNamed(String name) {
    try {
      return (FiCaSchedulerNode) getNode(NodeId.fromString(name));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  ShimAppAttempt currentAttempt(ApplicationId appId) {
    SchedulerApplication<ShimAppAttempt> app = applications.get(appId);
    return app == null ? null : app.getCurrentAppAttempt();
  }

  void addUsed(Resource r) {
    Resources.addTo(usedResource, r);
  }

  void resyncNext(String why) {
    bridge.resyncNext(why);
  }

  RMContext rmContext() {
    return rmContext;
  }

  /** Drops every change queued for the core: the next snapshot carries the whole state. */
  void dropQueuedChanges() {
    events.clear();
    dirtyApps.clear();
    blacklistChanged.clear();
    askMirror.clear();
  }

  // ---------------------------------------------------------------- counters

  /** Bridge and loop counters, for logs, tests and benchmarks. */
  public String bridgeCounters() {
    return bridge == null ? "no bridge" : bridge.counters() + " applied=" + committer.applied.get()
        + " refused=" + committer.refused.get() + " " + preemptions.counters() + " "
        + preemptionStore.counters()
        + (loop == null ? "" : " " + loop.counters());
  }

  /** The core's private directory (token, port file, queue file copies), or null: for tests. */
  Path corePrivateDir() {
    BridgeClient b = bridge;
    return b == null || b.privateDir() == null ? null : b.privateDir().path();
  }

  /** The scheduling loop, for whoever times it (its counters and per-call observer). */
  public SchedulingLoop schedulingLoop() {
    return loop;
  }
}

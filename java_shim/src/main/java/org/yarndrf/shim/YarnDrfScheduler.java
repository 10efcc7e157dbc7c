package org.yarndrf.shim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
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
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ReleaseContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.shim.bridge.Backoff;
import org.yarndrf.shim.bridge.CoreChannel;
import org.yarndrf.shim.bridge.CoreSession;
import org.yarndrf.shim.bridge.MalformedReplyException;
import org.yarndrf.shim.bridge.Protocol;
import org.yarndrf.shim.bridge.Py4jChannel;
import org.yarndrf.shim.bridge.ServeSupervisor;
import org.yarndrf.shim.bridge.TokenFile;

/**
 * A YARN ResourceScheduler whose decisions are made by the yarn-drf Python core (weighted DRF).
 *
 * YARN's own bookkeeping stays the truth: SchedulerApplicationAttempt/AppSchedulingInfo hold the
 * asks, SchedulerNode the node usage, RMContainer the container lifecycle. Every NODE_UPDATE
 * makes one bridge call carrying YARN's events since the previous call plus the node's free
 * resources; the reply lists that node's assignments, each re-checked here before YARN allocates
 * it. Any bridge failure means "allocate nothing now, send a full snapshot next".
 */
@SuppressWarnings("unchecked")
public class YarnDrfScheduler extends AbstractYarnScheduler<ShimAppAttempt, FiCaSchedulerNode>
    implements Configurable {
  private static final Logger LOG = LoggerFactory.getLogger(YarnDrfScheduler.class);

  /** YARN's Fifo calculator drops vcores and custom resources from every ask; DRC keeps them. */
  private final ResourceCalculator calculator = new DominantResourceCalculator();
  private Configuration conf;
  private boolean usePortForNodeName;
  private QueueTree queues;
  private final AskMirror askMirror = new AskMirror();
  private final Set<ApplicationId> dirtyApps = ConcurrentHashMap.newKeySet();
  private final PendingEvents events = new PendingEvents();
  /**
   * Apps submitted while the core was unreachable, in submission order: they wait in SUBMITTED
   * (YARN has no timeout there) and are placed once the core is back, instead of being rejected
   * for an outage that is not theirs.
   */
  private final Map<ApplicationId, Submission> awaitingPlacement = new java.util.LinkedHashMap<>();

  private static final class Submission {
    final String user;
    final String queue;
    final boolean unmanagedAM;

    Submission(String user, String queue, boolean unmanagedAM) {
      this.user = user;
      this.queue = queue;
      this.unmanagedAM = unmanagedAM;
    }
  }
  private final Resource usedResource = Resource.newInstance(0, 0);
  private CoreSession session;
  /** The channel of snapshots and reloads, sized by each snapshot; null with a test channel. */
  private SizedTimeoutChannel snapshotChannel;
  private ServeSupervisor supervisor;
  private long heartbeatSeq;
  /** The last successful heartbeat call, encoding and decoding included; sent with the next. */
  private long lastRoundTripNanos;
  /**
   * Incremented by every snapshot and sent with every request: the core refuses requests of an
   * older epoch, so a request that timed out here but reaches Python late cannot change the
   * state rebuilt from a newer snapshot.
   */
  private long epoch;

  public final AtomicLong assignmentsApplied = new AtomicLong();
  public final AtomicLong assignmentsRefused = new AtomicLong();
  public final AtomicLong eventErrors = new AtomicLong();

  public YarnDrfScheduler() {
    super(YarnDrfScheduler.class.getName());
  }

  /** For tests: run against a given channel instead of py4j. */
  public void setCoreChannel(CoreChannel channel) {
    this.session = newSession(channel, channel);
  }

  private CoreSession newSession(CoreChannel channel, CoreChannel slowChannel) {
    return new CoreSession(channel, slowChannel, new Backoff(
        conf.getLong(ShimConf.BACKOFF_INITIAL_MS, ShimConf.DEFAULT_BACKOFF_INITIAL_MS),
        conf.getLong(ShimConf.BACKOFF_MAX_MS, ShimConf.DEFAULT_BACKOFF_MAX_MS)),
        System::currentTimeMillis);
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

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    this.conf = conf;
    // Ordered by ApplicationId so snapshots and logs are stable.
    this.applications = new ConcurrentSkipListMap<>();
    this.minimumAllocation = super.getMinimumAllocation();
    initMaximumResourceCapability(super.getMaximumAllocation());
    this.usePortForNodeName = conf.getBoolean(
        YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
    this.queues = new QueueTree(conf, this::containerRecovered);
    super.serviceInit(conf);
  }

  @Override
  public void serviceStart() throws Exception {
    if (session == null) {
      startBridge();
    }
    super.serviceStart();
  }

  @Override
  public void serviceStop() throws Exception {
    if (supervisor != null) {
      supervisor.stop();
    }
    if (session != null) {
      LOG.info("yarn-drf bridge stopping: {}", session.counters());
      session.close();
    }
    super.serviceStop();
  }

  private void startBridge() throws IOException {
    String mode = conf.get(ShimConf.SERVE_MODE, "child");
    int port = conf.getInt(ShimConf.PORT, ShimConf.DEFAULT_PORT);
    int timeoutMs = conf.getInt(ShimConf.TIMEOUT_MS, ShimConf.DEFAULT_TIMEOUT_MS);
    String tokenFile = conf.get(ShimConf.TOKEN_FILE);
    String token;
    if (tokenFile == null || tokenFile.isEmpty()) {
      if (!"child".equals(mode)) {
        throw new IOException("yarn-drf: " + ShimConf.TOKEN_FILE + " must be set when "
            + ShimConf.SERVE_MODE + "=" + mode + " (the py4j auth token is required)");
      }
      token = newToken();
      tokenFile = writePrivateToken(token).toString();
    } else {
      token = TokenFile.read(new File(tokenFile).toPath(), ShimConf.TOKEN_FILE);
    }
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    snapshotChannel = new SizedTimeoutChannel(
        ms -> new Py4jChannel(loopback, port, token, ms), snapshotTimeoutMs(),
        conf.getInt(ShimConf.SNAPSHOT_TIMEOUT_PER_1000_ITEMS_MS,
            ShimConf.DEFAULT_SNAPSHOT_TIMEOUT_PER_1000_ITEMS_MS));
    session = newSession(new Py4jChannel(loopback, port, token, timeoutMs), snapshotChannel);
    if ("child".equals(mode)) {
      List<String> command = new ArrayList<>(Arrays.asList(
          conf.getTrimmed(ShimConf.SERVE_COMMAND, ShimConf.DEFAULT_SERVE_COMMAND).split("\\s+")));
      String queuesFile = conf.getTrimmed(ShimConf.QUEUES_FILE);
      if (queuesFile != null && !queuesFile.isEmpty()) {
        command.add("--queues");
        command.add(queuesFile);
      }
      command.addAll(Arrays.asList("--port", String.valueOf(port), "--token-file", tokenFile,
          "--parent-pid", currentPid()));
      String log = conf.getTrimmed(ShimConf.SERVE_LOG);
      supervisor = new ServeSupervisor(command, port,
          log == null || log.isEmpty() ? null : new File(log),
          new Backoff(500, conf.getLong(ShimConf.BACKOFF_MAX_MS,
              ShimConf.DEFAULT_BACKOFF_MAX_MS)));
      restartWhenUnresponsive(supervisor);
      supervisor.start();
    } else if (!"external".equals(mode)) {
      throw new IOException("yarn-drf: " + ShimConf.SERVE_MODE + " must be child or external, got "
          + mode);
    }
    LOG.info("yarn-drf bridge: mode={} port={} timeout={}ms", mode, port, timeoutMs);
  }

  private int snapshotTimeoutMs() {
    return Math.max(conf.getInt(ShimConf.TIMEOUT_MS, ShimConf.DEFAULT_TIMEOUT_MS),
        conf.getInt(ShimConf.SNAPSHOT_TIMEOUT_MS, ShimConf.DEFAULT_SNAPSHOT_TIMEOUT_MS));
  }

  private void restartWhenUnresponsive(ServeSupervisor child) {
    long afterMs = conf.getLong(ShimConf.RESTART_AFTER_MS, ShimConf.DEFAULT_RESTART_AFTER_MS);
    if (afterMs > 0) {
      session.whenUnresponsive(
          conf.getInt(ShimConf.RESTART_AFTER_FAILURES, ShimConf.DEFAULT_RESTART_AFTER_FAILURES),
          afterMs, why -> child.restartUnresponsive(why, afterMs));
    }
  }

  private static String newToken() {
    byte[] b = new byte[24];
    new SecureRandom().nextBytes(b);
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      sb.append(String.format("%02x", x));
    }
    return sb.toString();
  }

  private static Path writePrivateToken(String token) throws IOException {
    Path dir = Files.createTempDirectory("yarn-drf-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path file = dir.resolve("token");
    Files.write(file, token.getBytes(StandardCharsets.UTF_8));
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    file.toFile().deleteOnExit();
    dir.toFile().deleteOnExit();
    return file;
  }

  private static String currentPid() {
    String name = ManagementFactory.getRuntimeMXBean().getName();
    return name.substring(0, name.indexOf('@'));
  }

  @Override
  public synchronized void setRMContext(RMContext rmContext) {
    this.rmContext = rmContext;
  }

  /** `yarn rmadmin -refreshQueues`: the core re-reads queues.yaml; a bad file is refused whole. */
  @Override
  public synchronized void reinitialize(Configuration newConf, RMContext rmContext)
      throws IOException {
    super.reinitialize(newConf, rmContext);
    if (session.needsResync() && !resync()) {
      throw new IOException("yarn-drf: the scheduler core is unavailable; queues not reloaded");
    }
    ObjectNode req = request("reload", epoch);
    String file = newConf.getTrimmed(ShimConf.QUEUES_FILE, conf.getTrimmed(ShimConf.QUEUES_FILE));
    if (file != null) {
      req.put("path", file);
    }
    JsonNode reply = session.exchangeSlow("reload", Protocol.encode(req));
    if (reply == null && session.lastCallTimedOut()) {
      // The session resyncs next, and the snapshot's reply carries the core's queue tree.
      throw new IOException("yarn-drf: outcome unknown: the scheduler core did not answer within "
          + (snapshotChannel == null ? snapshotTimeoutMs() : snapshotChannel.timeoutMs())
          + " ms; it may have applied the file. Check `yarn-drf status` or "
          + "the service's log; YARN's queue tree follows the core's with the next heartbeat");
    }
    if (reply == null) {
      throw new IOException("yarn-drf: the scheduler core is unavailable; queues not reloaded");
    }
    if (!reply.path("accepted").asBoolean(false)) {
      StringBuilder sb = new StringBuilder("yarn-drf: queue configuration refused, the old one "
          + "stays in force:");
      for (JsonNode e : reply.path("errors")) {
        sb.append("\n  ").append(e.asText());
      }
      throw new IOException(sb.toString());
    }
    try {
      queues.update(reply.get("queues"));
    } catch (MalformedReplyException e) {
      throw new IOException("yarn-drf: core returned a bad queue list: " + e.getMessage());
    }
    LOG.info("yarn-drf: queues reloaded: {}", reply.path("changes"));
  }

  // ---------------------------------------------------------------- YARN questions

  @Override
  public ResourceCalculator getResourceCalculator() {
    return calculator;
  }

  @Override
  public int getNumClusterNodes() {
    return nodeTracker.nodeCount();
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
        // The core learns the new absolute counts with the next heartbeat's batch.
        dirtyApps.add(attemptId.getApplicationId());
      }
      application.updateBlacklist(blacklistAdditions, blacklistRemovals);
      Resource headroom = application.getHeadroom();
      application.setApplicationHeadroomForMetrics(headroom);
      return new Allocation(application.pullNewlyAllocatedContainers(), headroom, null, null,
          null, application.pullUpdatedNMTokens());
    }
  }

  // ---------------------------------------------------------------- events

  /**
   * YARN's scheduler event thread exits the whole RM on an uncaught exception: a bad event or a
   * bug here is logged and counted instead, and the event dropped.
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
        synchronized (this) {
          updateNodeResource(e.getRMNode(), e.getResourceOption());
          FiCaSchedulerNode node = (FiCaSchedulerNode) getNode(e.getRMNode().getNodeID());
          if (node != null) {
            ObjectNode d = Protocol.delta("node_updated");
            d.put("node", nodeName(e.getRMNode().getNodeID()));
            d.set("capacity", Protocol.amounts(AskMirror.amounts(node.getTotalResource())));
            events.add(d);
          }
        }
        break;
      }
      case NODE_UPDATE:
        nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        break;
      case APP_ADDED: {
        AppAddedSchedulerEvent e = (AppAddedSchedulerEvent) event;
        addApplication(e.getApplicationId(), e.getQueue(), e.getUser(), e.getIsAppRecovering(),
            e.isUnmanagedAM());
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
        // Labels, attributes, reservations and preemption marks are not used by yarn-drf.
        LOG.warn("yarn-drf: ignoring scheduler event {}", event.getType());
    }
  }

  private String nodeName(NodeId id) {
    return id.toString();
  }

  private synchronized void addNode(RMNode rmNode, List<NMContainerStatus> recovered) {
    FiCaSchedulerNode node = new FiCaSchedulerNode(rmNode, usePortForNodeName);
    nodeTracker.addNode(node);
    ObjectNode d = Protocol.delta("node_added");
    d.put("node", nodeName(rmNode.getNodeID()));
    d.set("capacity", Protocol.amounts(AskMirror.amounts(rmNode.getTotalCapability())));
    d.put("rack", rmNode.getRackName());
    events.add(d);
    // Recovered containers reach the core through ShimQueue.recoverContainer.
    recoverContainersOnNode(recovered, rmNode);
  }

  private synchronized void removeNode(RMNode rmNode) {
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    for (RMContainer c : node.getCopiedListOfRunningContainers()) {
      super.completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(
          c.getContainerId(), SchedulerUtils.LOST_CONTAINER), RMContainerEventType.KILL);
    }
    nodeTracker.removeNode(rmNode.getNodeID());
    ObjectNode d = Protocol.delta("node_removed");
    d.put("node", nodeName(rmNode.getNodeID()));
    events.add(d);
  }

  private synchronized void addApplication(ApplicationId appId, String queueName, String user,
      boolean recovering, boolean unmanagedAM) {
    ShimQueue queue;
    if (recovering) {
      // Accepted before the restart and running in this queue: the core takes it there, without
      // placement or ACLs (they may have changed since; its containers run where they run).
      queue = queues.findOrPlaceholder(queueName);
      ObjectNode d = Protocol.delta("app_added");
      d.put("app", appId.toString());
      d.put("user", user);
      d.put("queue", queue.getQueueName());
      d.set("groups", groupsOf(user));
      events.add(d);
    } else {
      JsonNode reply = place(appId, user, queueName);
      if (reply == null) {
        LOG.warn("yarn-drf: the scheduler core is unavailable; {} waits in SUBMITTED until it "
            + "can be placed", appId);
        awaitingPlacement.put(appId, new Submission(user, queueName, unmanagedAM));
        return;
      }
      queue = placed(appId, user, queueName, reply);
      if (queue == null) {
        return;
      }
    }
    register(appId, queue, user, recovering, unmanagedAM);
  }

  private void register(ApplicationId appId, ShimQueue queue, String user, boolean recovering,
      boolean unmanagedAM) {
    SchedulerApplication<ShimAppAttempt> application =
        new SchedulerApplication<>(queue, user, unmanagedAM);
    applications.put(appId, application);
    queue.getMetrics().submitApp(user, unmanagedAM);
    RMApp rmApp = rmContext.getRMApps().get(appId);
    if (rmApp != null) {
      rmApp.setQueue(queue.getQueueName());
    }
    LOG.info("yarn-drf: accepted {} from {} into {}", appId, user, queue.getQueueName());
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler()
          .handle(new RMAppEvent(appId, RMAppEventType.APP_ACCEPTED));
    }
  }

  /**
   * Applies the core's placement: returns the queue, or rejects the app (APP_REJECTED with the
   * core's reason, shown by `yarn application -status`) and returns null.
   */
  private ShimQueue placed(ApplicationId appId, String user, String queueName, JsonNode reply) {
    String refusal;
    ShimQueue queue = null;
    if (!reply.path("accepted").asBoolean(false)) {
      refusal = reply.path("reason").asText("refused by placement");
    } else {
      if (reply.has("queues")) {
        try {
          queues.update(reply.get("queues"));
        } catch (MalformedReplyException e) {
          LOG.warn("yarn-drf: bad queue list with placement of {}: {}", appId, e.getMessage());
        }
      }
      queue = queues.find(reply.path("queue").asText(""));
      refusal = queue == null ? "placed in unknown queue " + reply.path("queue") : null;
    }
    if (refusal != null) {
      String msg = "yarn-drf rejected application " + appId + " (user " + user + ", queue "
          + queueName + "): " + refusal;
      LOG.info(msg);
      rmContext.getDispatcher().getEventHandler()
          .handle(new RMAppEvent(appId, RMAppEventType.APP_REJECTED, msg));
      return null;
    }
    return queue;
  }

  /** Places the apps that were submitted while the core was unreachable, oldest first. */
  private void placeAwaiting() {
    for (java.util.Iterator<Map.Entry<ApplicationId, Submission>> it =
        awaitingPlacement.entrySet().iterator(); it.hasNext();) {
      Map.Entry<ApplicationId, Submission> e = it.next();
      Submission sub = e.getValue();
      JsonNode reply = place(e.getKey(), sub.user, sub.queue);
      if (reply == null) {
        return;
      }
      it.remove();
      ShimQueue queue = placed(e.getKey(), sub.user, sub.queue, reply);
      if (queue != null) {
        register(e.getKey(), queue, sub.user, false, sub.unmanagedAM);
      }
    }
  }

  /** Asks the core to place an app; it registers the app when it accepts. Null if no answer. */
  private JsonNode place(ApplicationId appId, String user, String queueName) {
    if (!session.mayCall()) {
      return null;  // backing off after a failure: do not stall the event thread again
    }
    if (session.needsResync() && !resync()) {
      return null;
    }
    // Built after the resync: a resync starts a new epoch, and the core refuses older ones.
    ObjectNode req = request("submit", epoch);
    req.put("app", appId.toString());
    req.put("user", user);
    req.put("queue", queueName);
    req.set("groups", groupsOf(user));
    flushEvents();
    return session.exchange("submit " + appId, Protocol.encode(req), true);
  }

  /** The user's groups by Hadoop's group mapping on the RM host, for ACLs and placement. */
  private static ArrayNode groupsOf(String user) {
    ArrayNode groups = Protocol.JSON.createArrayNode();
    try {
      for (String g : UserGroupInformation.createRemoteUser(user).getGroups()) {
        groups.add(g);
      }
    } catch (RuntimeException e) {
      LOG.warn("yarn-drf: cannot resolve groups of {}: {}", user, e.toString());
    }
    return groups;
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
    if (transferState) {
      attempt.transferStateFromPreviousAttempt(application.getCurrentAppAttempt());
    }
    application.setCurrentAppAttempt(attempt);
    queue.getMetrics().submitAppAttempt(application.getUser(), application.isUnmanagedAM());
    askMirror.forget(attemptId.getApplicationId().toString());
    ObjectNode d = Protocol.delta("attempt_added");
    d.put("app", attemptId.getApplicationId().toString());
    events.add(d);
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
    attempt.stop(finalState);
    dirtyApps.add(attemptId.getApplicationId());
  }

  private synchronized void doneApplication(ApplicationId appId, RMAppState finalState) {
    awaitingPlacement.remove(appId);
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
    ObjectNode d = Protocol.delta("app_removed");
    d.put("app", appId.toString());
    events.add(d);
  }

  @Override
  protected synchronized void completedContainerInternal(RMContainer rmContainer,
      ContainerStatus status, RMContainerEventType event) {
    Container container = rmContainer.getContainer();
    ShimAppAttempt application = getCurrentAttemptForContainer(container.getId());
    FiCaSchedulerNode node = (FiCaSchedulerNode) getNode(container.getNodeId());
    events.finished(container.getId().toString(), finishState(status, event));
    if (application == null) {
      LOG.info("yarn-drf: container {} of an unknown application finished", container.getId());
      return;
    }
    application.containerCompleted(rmContainer, status, event, "");
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

  // ---------------------------------------------------------------- the heartbeat

  @Override
  protected synchronized void nodeUpdate(RMNode nm) {
    // YARN first processes launched/finished containers (events queue up via
    // completedContainerInternal), then the core decides for this node.
    super.nodeUpdate(nm);
    FiCaSchedulerNode node = (FiCaSchedulerNode) getNode(nm.getNodeID());
    if (node == null) {
      return;
    }
    if (rmContext.isWorkPreservingRecoveryEnabled()
        && !rmContext.isSchedulerReadyForAllocatingContainers()) {
      return;
    }
    decide(node);
    for (SchedulerApplication<ShimAppAttempt> app : applications.values()) {
      ShimAppAttempt attempt = app.getCurrentAppAttempt();
      if (attempt != null) {
        attempt.setHeadroom(Resources.componentwiseMax(
            Resources.subtract(getClusterResource(), usedResource), Resources.none()));
      }
    }
    queues.root().getMetrics().setAvailableResourcesToQueue(
        Resources.subtract(getClusterResource(), usedResource));
  }

  /** One bridge round trip for this node: deltas out, assignments back, each re-checked. */
  private void decide(FiCaSchedulerNode node) {
    if (!session.mayCall()) {
      session.skipped.incrementAndGet();
      return;
    }
    if (session.needsResync() && !resync()) {
      return;
    }
    if (!awaitingPlacement.isEmpty()) {
      placeAwaiting();
    }
    ObjectNode req = request("heartbeat", epoch);
    long seq = ++heartbeatSeq;
    req.put("seq", seq);
    req.put("node", nodeName(node.getNodeID()));
    req.set("free", Protocol.amounts(AskMirror.amounts(node.getUnallocatedResource())));
    events.putInto(req);
    collectAsks(req);
    if (lastRoundTripNanos > 0) {
      req.put("rtt_ms", lastRoundTripNanos / 1e6);
    }
    String what = "heartbeat " + node.getNodeID();
    long start = System.nanoTime();
    JsonNode reply = session.exchange(what, Protocol.encode(req), false);
    events.clear();
    if (reply == null) {
      lastRoundTripNanos = 0;
      return;
    }
    lastRoundTripNanos = System.nanoTime() - start;
    ArrayNode assignments;
    try {
      if (Protocol.integer(reply, "seq") != seq) {
        throw new MalformedReplyException("reply seq " + reply.get("seq") + " for request " + seq);
      }
      assignments = Protocol.array(reply, "assignments");
      for (JsonNode a : assignments) {
        Protocol.text(a, "assignment_id");
        Protocol.text(a, "app");
        Protocol.integer(a, "priority");
        if (!a.path("resources").isObject()) {
          throw new MalformedReplyException("assignment without resources: " + a);
        }
      }
    } catch (MalformedReplyException e) {
      session.malformedContent(what, e.getMessage());
      return;
    }
    if (reply.has("queues")) {  // the queue file was reloaded on the Python side
      try {
        queues.update(reply.get("queues"));
      } catch (MalformedReplyException e) {
        LOG.warn("yarn-drf: bad queue list with heartbeat {}: {}", seq, e.getMessage());
      }
    }
    for (JsonNode a : assignments) {
      apply(node, a);
    }
  }

  /** Sends YARN's full state; the core rebuilds itself from it. */
  private boolean resync() {
    // Milliseconds since 1970 keep epochs increasing across RM restarts, which matters when the
    // service outlives the RM (external mode).
    epoch = Math.max(epoch + 1, System.currentTimeMillis());
    ObjectNode req = request("snapshot", epoch);
    ArrayNode types = req.putArray("resources");
    for (org.apache.hadoop.yarn.api.records.ResourceInformation ri
        : org.apache.hadoop.yarn.util.resource.ResourceUtils.getResourceTypesArray()) {
      types.add(ri.getName());
    }
    ArrayNode nodes = req.putArray("nodes");
    for (FiCaSchedulerNode n : nodeTracker.getAllNodes()) {
      ObjectNode o = nodes.addObject();
      o.put("node", nodeName(n.getNodeID()));
      o.set("capacity", Protocol.amounts(AskMirror.amounts(n.getTotalResource())));
      o.put("rack", n.getRackName());
    }
    ArrayNode apps = req.putArray("apps");
    ArrayNode containers = req.putArray("containers");
    ArrayNode asks = req.putArray("asks");
    ArrayNode counts = req.putArray("counts");  // stays empty: after clear() every ask is new
    askMirror.clear();
    for (Map.Entry<ApplicationId, SchedulerApplication<ShimAppAttempt>> e
        : applications.entrySet()) {
      ObjectNode o = apps.addObject();
      o.put("app", e.getKey().toString());
      o.put("user", e.getValue().getUser());
      o.put("queue", e.getValue().getQueue().getQueueName());
      o.set("groups", groupsOf(e.getValue().getUser()));
      ShimAppAttempt attempt = e.getValue().getCurrentAppAttempt();
      if (attempt == null) {
        continue;
      }
      for (RMContainer c : attempt.getLiveContainers()) {
        containers.add(PendingEvents.row(c, null));
      }
      synchronized (attempt) {
        askMirror.diff(e.getKey().toString(),
            attempt.getAppSchedulingInfo().getAllResourceRequests(), asks, counts);
      }
    }
    dirtyApps.clear();
    long items = nodes.size() + apps.size() + containers.size() + asks.size();
    int timeoutMs = snapshotChannel == null ? 0 : snapshotChannel.sizeFor(items);
    JsonNode reply = session.exchangeSlow("snapshot", Protocol.encode(req));
    if (reply == null) {
      askMirror.clear();
      // The next snapshot will carry everything: queued events would only pile up meanwhile.
      events.clear();
      return false;
    }
    try {
      queues.update(reply.get("queues"));
    } catch (MalformedReplyException e) {
      session.malformedContent("snapshot", e.getMessage());
      return false;
    }
    // The snapshot supersedes every delta queued before it.
    events.clear();
    session.resynced();
    LOG.info("yarn-drf bridge: core resynchronised ({} nodes, {} apps, {} containers, {} asks; "
        + "timeout {} ms) [{}]", nodes.size(), apps.size(), containers.size(), asks.size(),
        timeoutMs, session.counters());
    return true;
  }

  private static ObjectNode request(String type, long epoch) {
    ObjectNode req = Protocol.request(type);
    req.put("epoch", epoch);
    return req;
  }

  /** Sends queued events with no decision (before a submit, so the core sees them in order). */
  private void flushEvents() {
    ObjectNode req = request("events", epoch);
    events.putInto(req);
    if (!collectAsks(req) && events.isEmpty()) {
      return;
    }
    events.clear();
    session.exchange("events", Protocol.encode(req), true);
  }

  /**
   * Puts in `req` the asks of apps whose asks may have changed since the last call, as the
   * mirror's diff: "asks" in full and "counts". The core applies them after the request's
   * events, the order YARN saw them in: an attempt's reset or an app's start is always queued
   * before its asks are collected here. Returns whether there were any.
   */
  private boolean collectAsks(ObjectNode req) {
    ArrayNode asks = req.putArray("asks");
    ArrayNode counts = req.putArray("counts");
    for (ApplicationId appId : new ArrayList<>(dirtyApps)) {
      dirtyApps.remove(appId);
      SchedulerApplication<ShimAppAttempt> app = applications.get(appId);
      ShimAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
      if (attempt == null) {
        continue;
      }
      synchronized (attempt) {
        askMirror.diff(appId.toString(), attempt.getAppSchedulingInfo().getAllResourceRequests(),
            asks, counts);
      }
    }
    return !asks.isEmpty() || !counts.isEmpty();
  }

  /**
   * Re-checks one assignment and allocates it through YARN, or tells the core why not. Whatever
   * goes wrong with one assignment stays with it: the rest of the reply is still applied.
   */
  private void apply(FiCaSchedulerNode node, JsonNode a) {
    String assignmentId = a.get("assignment_id").asText();
    String refusal = null;
    RMContainer allocated = null;
    ShimAppAttempt attempt = null;
    try {
      ApplicationId appId = applicationId(a.get("app").asText());
      SchedulerApplication<ShimAppAttempt> app = appId == null ? null : applications.get(appId);
      attempt = app == null ? null : app.getCurrentAppAttempt();
      String assignedNode = a.path("node").asText(nodeName(node.getNodeID()));
      if (appId == null) {
        refusal = "bad application id " + a.get("app");
      } else if (attempt == null) {
        refusal = "application " + appId + " is not running";
      } else if (!assignedNode.equals(nodeName(node.getNodeID()))) {
        refusal = "assigned to " + assignedNode + " in the heartbeat of " + node.getNodeID();
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
      LOG.error("yarn-drf: applying assignment {} on {} failed", assignmentId, node.getNodeID(), e);
      if (allocated != null) {
        // YARN holds the container, our books may not: a snapshot tells the core what YARN runs.
        session.resyncNext("assignment " + assignmentId + " failed after YARN allocated "
            + allocated.getContainerId() + " (" + e + ")");
        return;
      }
      refusal = "the shim failed to apply it: " + e;
    }
    if (refusal != null) {
      assignmentsRefused.incrementAndGet();
      LOG.info("yarn-drf: refused assignment {} on {}: {}", assignmentId, node.getNodeID(),
          refusal);
      ObjectNode d = Protocol.delta("assignment_refused");
      d.put("assignment_id", assignmentId);
      d.put("reason", refusal);
      events.add(d);
      return;
    }
    assignmentsApplied.incrementAndGet();
    events.started(allocated, assignmentId);
    dirtyApps.add(attempt.getApplicationId());
  }

  private static ApplicationId applicationId(String text) {
    try {
      return ApplicationId.fromString(text);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private SchedulerRequestKey keyFor(ShimAppAttempt attempt, JsonNode a) {
    int priority = a.get("priority").asInt();
    long allocationId = a.path("allocation_id").asLong(0);
    for (SchedulerRequestKey k : attempt.getSchedulerKeys()) {
      if (k.getPriority().getPriority() == priority && k.getAllocationRequestId() == allocationId) {
        return k;
      }
    }
    return null;
  }

  private String check(FiCaSchedulerNode node, ShimAppAttempt attempt, JsonNode a) {
    if (attempt.isStopped()) {
      return "application attempt stopped";
    }
    SchedulerRequestKey key = keyFor(attempt, a);
    PendingAsk ask = key == null ? null : attempt.getPendingAsk(key, ResourceRequest.ANY);
    if (ask == null || ask.getCount() <= 0) {
      return "request (priority " + a.get("priority") + ", allocation " + a.path("allocation_id")
          + ") is no longer outstanding";
    }
    Resource capability = ask.getPerAllocationResource();
    Map<String, Long> asked = AskMirror.amounts(capability);
    for (Map.Entry<String, Long> e : asked.entrySet()) {
      JsonNode v = a.get("resources").get(e.getKey());
      long given = v == null ? 0 : v.asLong();
      if (given != e.getValue()) {
        return "resources " + a.get("resources") + " differ from the request " + asked;
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
    return ((ShimQueue) attempt.getQueue()).checkLimits(capability, getClusterResource());
  }

  private boolean locationAllowed(ShimAppAttempt attempt, SchedulerRequestKey key,
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
  RMContainer allocateOn(FiCaSchedulerNode node, ShimAppAttempt attempt, JsonNode a) {
    SchedulerRequestKey key = keyFor(attempt, a);
    Resource capability = attempt.getPendingAsk(key, ResourceRequest.ANY)
        .getPerAllocationResource();
    NodeType type = NodeType.OFF_SWITCH;
    if (attempt.getOutstandingAsksCount(key, node.getNodeName()) > 0) {
      type = NodeType.NODE_LOCAL;
    } else if (attempt.getOutstandingAsksCount(key, node.getRackName()) > 0) {
      type = NodeType.RACK_LOCAL;
    }
    ContainerId containerId = BuilderUtils.newContainerId(attempt.getApplicationAttemptId(),
        attempt.getNewContainerId());
    Container container = BuilderUtils.newContainer(containerId, node.getNodeID(),
        node.getRMNode().getHttpAddress(), capability, key.getPriority(), null,
        key.getAllocationRequestId());
    return attempt.allocate(type, node, key, container);
  }

  /** Charges a container YARN allocated to its node, the cluster and its queue (tests inject faults). */
  void account(FiCaSchedulerNode node, ShimAppAttempt attempt, RMContainer container) {
    Resource capability = container.getAllocatedResource();
    node.allocateContainer(container);
    Resources.addTo(usedResource, capability);
    ((ShimQueue) attempt.getQueue()).charge(capability, 1);
  }

  /** Bridge counters, for logs and tests. */
  public String bridgeCounters() {
    return session == null ? "no bridge" : session.counters() + " applied="
        + assignmentsApplied.get() + " refused=" + assignmentsRefused.get();
  }
}

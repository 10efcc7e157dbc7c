package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The scheduler class inside an in-process ResourceManager (MockRM), deciding via a fake core:
 * assignments committed or refused with the reason, failures of the core, placement, queues.
 */
class YarnDrfSchedulerTest {
  private MockRM rm;
  private FakeCore core;
  private YarnDrfScheduler scheduler;
  private MockNM nm;

  @BeforeEach
  void start() throws Exception {
    start(YarnDrfScheduler.class);
  }

  private void start(Class<? extends YarnDrfScheduler> schedulerClass) throws Exception {
    core = new FakeCore();
    rm = FakeCore.startRm(schedulerClass, new YarnConfiguration(), core);
    scheduler = (YarnDrfScheduler) rm.getResourceScheduler();
    nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
  }

  @AfterEach
  void stop() {
    if (rm != null) {
      rm.stop();
    }
  }

  /** The scheduler with faults injected into YARN's allocation of chosen assignments. */
  public static class FaultyScheduler extends YarnDrfScheduler {
    static volatile int failAllocations;
    static volatile int failAccounting;
    /** A bug in the scheduling thread itself: committing a whole reply throws. */
    static volatile int failCommits;

    @Override
    AssignmentCommitter newCommitter(PendingEvents pending, java.util.Set<ApplicationId> dirty) {
      return new AssignmentCommitter(this, pending, dirty) {
        @Override
        void commit(List<ReplyValues.Assignment> assignments) {
          if (failCommits > 0 && !assignments.isEmpty()) {
            failCommits--;
            throw new IllegalStateException("injected bug in the scheduling thread");
          }
          super.commit(assignments);
        }

        @Override
        RMContainer allocateOn(FiCaSchedulerNode node, ShimAppAttempt attempt,
            ReplyValues.Assignment a) {
          if (failAllocations > 0) {
            failAllocations--;
            throw new IllegalStateException("injected fault in " + a.id);
          }
          return super.allocateOn(node, attempt, a);
        }

        @Override
        void account(FiCaSchedulerNode node, ShimAppAttempt attempt, RMContainer container) {
          if (failAccounting > 0) {
            failAccounting--;
            throw new NullPointerException("injected after allocating " + container.getContainerId());
          }
          super.account(node, attempt, container);
        }
      };
    }
  }

  private void restartWithFaults() throws Exception {
    stop();
    FaultyScheduler.failAllocations = 0;
    FaultyScheduler.failAccounting = 0;
    FaultyScheduler.failCommits = 0;
    start(FaultyScheduler.class);
  }

  private RMApp submit(String user, String queue) throws Exception {
    return submit(user, queue, true);
  }

  private RMApp submit(String user, String queue, boolean waitAccepted) throws Exception {
    MockRMAppSubmissionData.Builder data = MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
        .withUser(user).withQueue(queue);
    return waitAccepted ? AsyncApps.submit(rm, data)
        : MockRMAppSubmitter.submit(rm, data.withWaitForAppAcceptedState(false).build());
  }

  private List<Container> allocate(MockAM am, int count, int memory, int vcores) throws Exception {
    List<Container> got = new ArrayList<>(am.allocate("*", memory, count, new ArrayList<>())
        .getAllocatedContainers());
    for (int i = 0; i < 10 && got.size() < count; i++) {
      nm.nodeHeartbeat(true);
      Thread.sleep(50);
      got.addAll(am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<>())
          .getAllocatedContainers());
    }
    return got;
  }

  /** Pulls what the AM is given, heartbeating meanwhile, until it has `count` containers. */
  private List<Container> pull(MockAM am, int count) throws Exception {
    List<Container> got = new ArrayList<>();
    heartbeatUntil(() -> {
      try {
        got.addAll(am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<>())
            .getAllocatedContainers());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      return got.size() >= count;
    });
    return got;
  }

  /** Heartbeats until `done` holds: NODE_UPDATE events reach the scheduler asynchronously. */
  private void heartbeatUntil(java.util.function.BooleanSupplier done) throws Exception {
    for (int i = 0; i < 200 && !done.getAsBoolean(); i++) {
      nm.nodeHeartbeat(true);
      Thread.sleep(20);
    }
    assertTrue(done.getAsBoolean(), "condition not reached after 200 heartbeats");
  }

  @Test
  void usesAMultiResourceCalculator() {
    assertTrue(scheduler.getResourceCalculator() instanceof DominantResourceCalculator);
  }

  @Test
  void anAmLearnsAtRegistrationThatMemoryAndCpuAreBothScheduled() throws Exception {
    MockAM am = MockRM.launchAMWhenAsyncSchedulingEnabled(submit("alice", "a"), rm);
    assertEquals(EnumSet.of(SchedulerResourceTypes.MEMORY, SchedulerResourceTypes.CPU),
        am.registerAppAttempt().getSchedulerResourceTypes());
  }

  @Test
  void theAmAndTaskContainersAreAllocatedFromTheCoresAssignments() throws Exception {
    RMApp app = submit("alice", "a");
    MockAM am = AsyncApps.launch(rm, app);
    assertEquals("root.a", app.getQueue());
    List<Container> got = allocate(am, 3, 1024, 1);
    assertEquals(3, got.size());
    // AM + 3 tasks: each started container names the core's assignment it applied.
    heartbeatUntil(() -> core.startedRows().size() == 4);
    List<RequestValues.ContainerRow> started = core.startedRows();
    assertEquals(4, started.size());
    for (RequestValues.ContainerRow s : started) {
      assertEquals(app.getApplicationId().toString(), s.app);
      assertTrue(s.assignmentId.startsWith("fake-"), s.assignmentId);
      // amounts in the snapshot's resource order: memory-mb, vcores, ...
      assertTrue(s.amounts[0] >= 1024 && s.amounts[1] == 1, java.util.Arrays.toString(s.amounts));
    }
    // A container the AM gives back reaches the core as a finished pair.
    String gone = got.get(0).getId().toString();
    am.allocate(new ArrayList<ResourceRequest>(), java.util.Collections.singletonList(got.get(0).getId()));
    heartbeatUntil(() -> core.finishedPairs().contains(gone + "=released"));
    assertTrue(scheduler.bridgeCounters().contains("refused=0"), scheduler.bridgeCounters());
    // Every call after the first reports the previous call's round trip for the metrics.
    List<RequestValues.Schedule> calls = core.requestsOf(RequestValues.Schedule.class);
    assertTrue(calls.size() > 1);
    assertEquals(null, calls.get(0).rttMs);
    for (RequestValues.Schedule c : calls.subList(1, calls.size())) {
      assertTrue(c.rttMs != null && c.rttMs > 0, "rtt of call " + c.seq);
    }
  }

  @Test
  void aCallOffersAtMostTheConfiguredNodesAndTheNextCallsOfferTheRest() throws Exception {
    stop();
    core = new FakeCore();
    YarnConfiguration conf = new YarnConfiguration();
    conf.setInt(ShimConf.MAX_NODES_PER_CALL, 1);
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
    scheduler = (YarnDrfScheduler) rm.getResourceScheduler();
    nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    rm.registerNode("127.0.0.1:1235", 8192, 8);
    rm.registerNode("127.0.0.1:1236", 8192, 8);
    MockAM am = AsyncApps.launch(rm, submit("alice", "a"));
    // Two 3072 MB containers fit a node: the asks stay outstanding until all three took theirs.
    assertEquals(6, allocate(am, 6, 3072, 1).size());
    java.util.Set<String> offered = new java.util.HashSet<>();
    for (RequestValues.Schedule c : core.requestsOf(RequestValues.Schedule.class)) {
      assertTrue(c.nodes.size() <= 1, "call " + c.seq + " offered " + c.nodes.size() + " nodes");
      c.nodes.forEach(n -> offered.add(n.node));
    }
    assertEquals(3, offered.size(), "every node is offered by some call: " + offered);
  }

  @Test
  void aCallListsOnlyNodesWhoseRoomFitsAnOutstandingAsk() throws Exception {
    MockNM small = rm.registerNode("127.0.0.1:1235", 2048, 8);
    MockAM am = AsyncApps.launch(rm, submit("alice", "a"));
    int before = core.requestsOf(RequestValues.Schedule.class).size();
    // The small node has room for YARN's minimum allocation (1024 MB), not for a 3072 MB ask.
    assertEquals(2, allocate(am, 2, 3072, 1).size());
    List<RequestValues.Schedule> calls = core.requestsOf(RequestValues.Schedule.class);
    int big = firstCallAsking(calls, before, 3072);
    boolean bigListed = false;
    for (RequestValues.Schedule c : calls.subList(big, calls.size())) {
      assertFalse(lists(c, small), "call " + c.seq + " lists the 2048 MB node for 3072 MB asks");
      bigListed |= lists(c, nm);
    }
    assertTrue(bigListed, "the node with room for the ask is listed");
    // A 1024 MB ask fits the small node: from the call that carries it, the node is offered.
    before = calls.size();
    assertEquals(1, allocate(am, 1, 1024, 1).size());
    calls = core.requestsOf(RequestValues.Schedule.class);
    assertTrue(lists(calls.get(firstCallAsking(calls, before, 1024)), small));
    // Once that ask is served no ask waits, and a call lists no node at all.
    heartbeatUntil(() -> {
      List<RequestValues.Schedule> now = core.requestsOf(RequestValues.Schedule.class);
      RequestValues.Schedule last = now.get(now.size() - 1);
      return last.counts.contains(0L) && last.nodes.isEmpty();
    });
  }

  /** The index of the first call from `from` on that sends an ask of `memory` MB in full. */
  private static int firstCallAsking(List<RequestValues.Schedule> calls, int from, long memory) {
    for (int i = from; i < calls.size(); i++) {
      for (RequestValues.AskRow a : calls.get(i).asks) {
        if (a.amounts[0] == memory && a.count > 0) {
          return i;
        }
      }
    }
    throw new AssertionError("no call asked for " + memory + " MB");
  }

  private static boolean lists(RequestValues.Schedule call, MockNM node) {
    String name = node.getNodeId().toString();
    return call.nodes.stream().anyMatch(n -> n.node.equals(name));
  }

  @Test
  void assignmentsBeyondTheOutstandingAskAreRefusedWithTheReason() throws Exception {
    RMApp app = submit("alice", "a");
    MockAM am = AsyncApps.launch(rm, app);
    core.extra = 2;
    List<Container> got = allocate(am, 2, 1024, 1);
    assertEquals(2, got.size(), "YARN hands out exactly what was asked");
    heartbeatUntil(() -> !core.deltasOf("assignment_refused").isEmpty());
    List<RequestValues.Delta> refused = core.deltasOf("assignment_refused");
    assertTrue(refused.get(refused.size() - 1).reason.contains("no longer outstanding"));
    assertEquals(4, rm.getResourceScheduler().getNodeReport(nm.getNodeId()).getNumContainers() + 1,
        "AM + 2 tasks on the node; refused assignments allocate nothing");
  }

  /** The scheduler whose committer a test calls by hand. */
  public static class HandCommitted extends YarnDrfScheduler {
    static volatile AssignmentCommitter committer;

    @Override
    AssignmentCommitter newCommitter(PendingEvents pending, java.util.Set<ApplicationId> dirty) {
      committer = super.newCommitter(pending, dirty);
      return committer;
    }
  }

  @Test
  void assignmentsToAQueueAboveOneWhoseAmWasAskedForSinceTheCollectionGoBackToTheCore()
      throws Exception {
    stop();
    start(HandCommitted.class);
    RMApp app = submit("alice", "a");
    assertEquals(2, allocate(AsyncApps.launch(rm, app), 2, 1024, 1).size());
    RMApp other = submit("alice", "a");
    AsyncApps.launch(rm, other);
    scheduler.moveApplication(other.getApplicationId(), "b");
    // root.a (weight 2) holds an AM and two tasks, root.b (weight 1) an AM: b is below a
    String appId = app.getApplicationId().toString();
    String otherId = other.getApplicationId().toString();
    String node = nm.getNodeId().toString();
    java.util.Map<String, Long> task = oneVcoreTask();
    AssignmentCommitter committer = HandCommitted.committer;
    synchronized (scheduler) {  // the lock the loop collects under: no collection in between
      amAskedSinceTheCollection(app, "root.b");
      committer.commit(java.util.Arrays.asList(
          new ReplyValues.Assignment("late-1", appId, node, "root.a", 5, 0, task),
          new ReplyValues.Assignment("below-1", otherId, node, "root.b", 5, 0, task),
          new ReplyValues.Assignment("late-2", appId, node, "root.a", 5, 0, task)));
      assertEquals(2, committer.deferred.get(), "only the assignments to the queue above");
      scheduler.lateAmAsks.collecting();  // the next call has seen b's AM ask
      committer.commit(java.util.Collections.singletonList(
          new ReplyValues.Assignment("seen-1", appId, node, "root.a", 5, 0, task)));
    }
    assertEquals(2, committer.deferred.get(), "once the AM ask is collected, nothing is deferred");
    heartbeatUntil(() -> core.deltasOf("assignment_refused").size() >= 4);
    java.util.Map<String, String> reasons = new java.util.HashMap<>();
    for (RequestValues.Delta d : core.deltasOf("assignment_refused")) {
      reasons.put(d.assignmentId, d.reason);
    }
    assertEquals(AssignmentCommitter.DEFERRED, reasons.get("late-1"));
    assertEquals(AssignmentCommitter.DEFERRED, reasons.get("late-2"));
    // committed, not deferred: re-checked against YARN, which holds no such ask of b's app
    assertTrue(reasons.get("below-1").contains("no longer outstanding"), reasons.get("below-1"));
    assertTrue(reasons.get("seen-1").contains("no longer outstanding"), reasons.get("seen-1"));
  }

  /** yarn-drf.scheduler.max-deferred-share 0. */
  public static class NeverDeferring extends HandCommitted {
    @Override
    AssignmentCommitter newCommitter(PendingEvents pending, java.util.Set<ApplicationId> dirty) {
      maxDeferredShare = 0;
      return super.newCommitter(pending, dirty);
    }
  }

  @Test
  void withAMaxDeferredShareOfZeroAReplyIsCommittedWholeThoughAQueueBelowAskedForAnAm()
      throws Exception {
    stop();
    start(NeverDeferring.class);
    RMApp app = submit("alice", "a");
    assertEquals(1, allocate(AsyncApps.launch(rm, app), 1, 1024, 1).size());
    String appId = app.getApplicationId().toString();
    AssignmentCommitter committer = HandCommitted.committer;
    synchronized (scheduler) {
      amAskedSinceTheCollection(app, "root.b");  // root.b (empty) is below root.a
      committer.commit(java.util.Collections.singletonList(new ReplyValues.Assignment(
          "late-1", appId, nm.getNodeId().toString(), "root.a", 5, 0, oneVcoreTask())));
    }
    assertEquals(0, committer.deferred.get());
    heartbeatUntil(() -> refusalOf("late-1") != null);
    // committed: re-checked against YARN, which holds no such ask any more
    assertTrue(refusalOf("late-1").contains("no longer outstanding"), refusalOf("late-1"));
  }

  private static java.util.Map<String, Long> oneVcoreTask() {
    java.util.Map<String, Long> task = new java.util.HashMap<>();
    task.put("memory-mb", 1024L);
    task.put("vcores", 1L);
    return task;
  }

  /** An app of `leaf`, a sibling of `app`'s queue, asked for its AM since the collection. */
  private void amAskedSinceTheCollection(RMApp app, String leaf) {
    ShimQueue queue = (ShimQueue) scheduler.currentAttempt(app.getApplicationId()).getQueue();
    for (ShimQueue q : queue.getParent().getChildren()) {
      if (q.getQueueName().equals(leaf)) {
        scheduler.lateAmAsks.asked(q);
      }
    }
  }

  private String refusalOf(String assignmentId) {
    for (RequestValues.Delta d : core.deltasOf("assignment_refused")) {
      if (assignmentId.equals(d.assignmentId)) {
        return d.reason;
      }
    }
    return null;
  }

  @Test
  void assignmentsThatDoNotFitTheNodeAreRefused() throws Exception {
    RMApp app = submit("alice", "a");
    MockAM am = AsyncApps.launch(rm, app);
    List<Container> got = allocate(am, 10, 2048, 1);
    // 8192 MB: the AM's 1024 + three 2048 containers fit; the rest are refused.
    assertEquals(3, got.size());
    heartbeatUntil(() -> !core.deltasOf("assignment_refused").isEmpty());
    boolean sawFit = false;
    for (RequestValues.Delta r : core.deltasOf("assignment_refused")) {
      sawFit |= r.reason.contains("does not fit node");
    }
    assertTrue(sawFit);
  }

  @Test
  void aMalformedReplyAssignsNothingAndAResyncFollowsOnceTheCoreAnswers() throws Exception {
    RMApp app = submit("alice", "a");
    MockAM am = AsyncApps.launch(rm, app);
    core.settle();  // no reply from before the fault still on its way
    core.mode = FakeCore.Mode.MALFORMED;
    am.allocate("*", 1024, 2, new ArrayList<>());
    heartbeatUntil(() -> !scheduler.bridgeCounters().contains("malformed=0"));
    nm.nodeHeartbeat(true);
    Thread.sleep(50);
    assertEquals(0, am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<>())
        .getAllocatedContainers().size());
    long snapshots = core.count("snapshot");
    core.mode = FakeCore.Mode.OK;
    List<Container> got = pull(am, 2);
    assertEquals(2, got.size());
    assertTrue(core.count("snapshot") > snapshots, "a full snapshot after the failure");
  }

  @Test
  void aReplyOfAnotherVersionIsRefused() throws Exception {
    RMApp app = submit("alice", "a");
    MockAM am = AsyncApps.launch(rm, app);
    core.mode = FakeCore.Mode.WRONG_VERSION;
    am.allocate("*", 1024, 1, new ArrayList<>());
    heartbeatUntil(() -> !scheduler.bridgeCounters().contains("malformed=0"));
    assertEquals(0, am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<>())
        .getAllocatedContainers().size());
  }

  @Test
  void whileTheCoreIsDownNothingIsAllocatedAndTheSnapshotCarriesRunningContainers()
      throws Exception {
    RMApp app = submit("alice", "a");
    MockAM am = AsyncApps.launch(rm, app);
    assertEquals(1, allocate(am, 1, 1024, 1).size());
    core.mode = FakeCore.Mode.DOWN;
    am.allocate("*", 1024, 2, new ArrayList<>());
    // NODE_UPDATEs are handled asynchronously: wait until one has met the dead core.
    heartbeatUntil(() -> !scheduler.bridgeCounters().contains("failures=0"));
    assertEquals(0, am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<>())
        .getAllocatedContainers().size());
    long before = core.count("snapshot");
    core.mode = FakeCore.Mode.OK;
    heartbeatUntil(() -> core.count("snapshot") > before);
    List<RequestValues.Snapshot> snapshots = core.requestsOf(RequestValues.Snapshot.class);
    RequestValues.Snapshot snapshot = snapshots.get(snapshots.size() - 1);
    assertEquals(2, snapshot.containers.size(), "AM + 1 task, as YARN runs them");
    assertTrue(snapshot.asks.stream().anyMatch(a -> "*".equals(a.location) && a.count == 2));
    assertEquals(2, allocate(am, 0, 1024, 1).size() + am.allocate(
        new ArrayList<ResourceRequest>(), new ArrayList<>()).getAllocatedContainers().size());
  }

  @Test
  void anAppSubmittedWhileTheCoreIsDownWaitsAndIsPlacedWhenItIsBack() throws Exception {
    heartbeatUntil(() -> core.count("snapshot") > 0);
    core.mode = FakeCore.Mode.DOWN;
    RMApp app = submit("alice", "a", false);
    for (int i = 0; i < 5; i++) {
      nm.nodeHeartbeat(true);
      Thread.sleep(20);
    }
    assertEquals(RMAppState.SUBMITTED, app.getState(), "neither accepted nor rejected");
    core.mode = FakeCore.Mode.OK;
    heartbeatUntil(() -> app.getState() == RMAppState.ACCEPTED);
    assertEquals("root.a", app.getQueue());
  }

  @Test
  void aSubmissionTheCoreRefusesIsRejectedWithTheReason() throws Exception {
    RMApp app = submit("mallory", "a", false);
    rm.waitForState(app.getApplicationId(), RMAppState.FAILED);
    assertTrue(app.getDiagnostics().toString().contains("may not submit to queue 'root.a'"),
        app.getDiagnostics().toString());
  }

  @Test
  void queueInfoAndAclsComeFromTheCoresQueueTree() throws Exception {
    heartbeatUntil(() -> core.count("snapshot") > 0);
    QueueInfo root = scheduler.getQueueInfo("root", true, true);
    assertEquals(2, root.getChildQueues().size());
    QueueInfo a = scheduler.getQueueInfo("a", false, false);
    assertEquals("root.a", a.getQueuePath());
    assertTrue(scheduler.checkAccess(UserGroupInformation.createRemoteUser("bob"),
        QueueACL.SUBMIT_APPLICATIONS, "root.a"));
    assertFalse(scheduler.checkAccess(UserGroupInformation.createRemoteUser("bob"),
        QueueACL.SUBMIT_APPLICATIONS, "root.b"));
    assertTrue(scheduler.checkAccess(UserGroupInformation.createRemoteUser("alice"),
        QueueACL.SUBMIT_APPLICATIONS, "b"));
  }

  @Test
  void aQueueListInAScheduleReplyReplacesTheTree() throws Exception {
    heartbeatUntil(() -> core.count("snapshot") > 0);
    ArrayNode reloaded = FakeCore.queues();
    reloaded.addObject().put("name", "root.c").put("leaf", true).put("submit_acl", "*");
    core.pushQueues = reloaded;
    submit("alice", "a");  // something for the next call to carry
    heartbeatUntil(() -> core.pushQueues == null);
    heartbeatUntil(() -> scheduler.checkAccess(UserGroupInformation.createRemoteUser("zed"),
        QueueACL.SUBMIT_APPLICATIONS, "root.c"));
    assertEquals(3, scheduler.getQueueInfo("root", true, false).getChildQueues().size());
    assertEquals("root.c", scheduler.getQueueInfo("c", false, false).getQueuePath());
  }

  @Test
  void aRuntimeErrorInOneAssignmentRefusesItAndTheRestOfTheReplyIsApplied() throws Exception {
    restartWithFaults();
    RMApp app = submit("alice", "a");
    MockAM am = AsyncApps.launch(rm, app);
    FaultyScheduler.failAllocations = 1;
    List<Container> got = allocate(am, 3, 1024, 1);
    assertEquals(3, got.size(), "the refused one is asked for again and allocated later");
    List<RequestValues.Delta> refused = core.deltasOf("assignment_refused");
    assertEquals(1, refused.size());
    String reason = refused.get(0).reason;
    assertTrue(reason.startsWith("the shim failed to apply it: java.lang.IllegalStateException: "
        + "injected fault in fake-"), reason);
    // The request that reports the refusal also starts the other two of the same reply.
    RequestValues.Schedule report = null;
    for (RequestValues.Schedule r : core.requestsOf(RequestValues.Schedule.class)) {
      for (RequestValues.Delta d : r.deltas) {
        report = "assignment_refused".equals(d.op) ? r : report;
      }
    }
    assertEquals(2, report.started.size());
    heartbeatUntil(() -> core.startedRows().size() == 4);
    assertEquals(0, core.count("snapshot") - 1, "no resync: nothing was allocated for the failure");
  }

  @Test
  void aBugInTheSchedulingThreadIsSurvivedAndSchedulingResumesFromASnapshot() throws Exception {
    restartWithFaults();
    RMApp app = submit("alice", "a");
    MockAM am = AsyncApps.launch(rm, app);
    long snapshots = core.count("snapshot");
    FaultyScheduler.failCommits = 1;
    List<Container> got = new ArrayList<>(am.allocate("*", 1024, 2, new ArrayList<>())
        .getAllocatedContainers());
    got.addAll(pull(am, 2 - got.size()));
    assertEquals(0, FaultyScheduler.failCommits, "the injected bug was hit");
    assertEquals(2, got.size(), "both containers, once each");
    assertTrue(core.count("snapshot") > snapshots, "the thread started over from a snapshot");
  }

  @Test
  void aFailureAfterYarnAllocatedTheContainerResyncsTheCoreFromYarn() throws Exception {
    restartWithFaults();
    RMApp app = submit("alice", "a");
    MockAM am = AsyncApps.launch(rm, app);
    long snapshots = core.count("snapshot");
    FaultyScheduler.failAccounting = 1;
    List<Container> got = allocate(am, 2, 1024, 1);
    assertEquals(2, got.size(), "YARN gave both to the AM");
    heartbeatUntil(() -> core.count("snapshot") > snapshots);
    List<RequestValues.Snapshot> all = core.requestsOf(RequestValues.Snapshot.class);
    RequestValues.Snapshot snapshot = all.get(all.size() - 1);
    assertEquals(3, snapshot.containers.size(), "AM + 2: the snapshot carries YARN's live "
        + "containers, the failed one included");
    assertTrue(core.deltasOf("assignment_refused").isEmpty(), "not refused: YARN holds it");
  }

  @Test
  void aRefreshQueuesThatTimesOutIsReportedAsUnknownAndYarnsTreeCatchesUp() throws Exception {
    heartbeatUntil(() -> core.count("snapshot") > 0);
    ArrayNode reloaded = FakeCore.queues();
    reloaded.addObject().put("name", "root.c").put("leaf", true).put("submit_acl", "*");
    core.reloadThenTimeOut = reloaded;
    long snapshots = core.count("snapshot");  // the resync may follow before reinitialize returns
    java.io.IOException e = assertThrows(java.io.IOException.class,
        () -> scheduler.reinitialize(scheduler.getConf(), rm.getRMContext()));
    assertTrue(e.getMessage().startsWith("yarn-drf: outcome unknown: the scheduler core did not "
        + "answer within 1000 ms; it may have applied the file"), e.getMessage());
    assertFalse(e.getMessage().contains("refused"), e.getMessage());
    heartbeatUntil(() -> core.count("snapshot") > snapshots);
    heartbeatUntil(() -> scheduler.checkAccess(UserGroupInformation.createRemoteUser("zed"),
        QueueACL.SUBMIT_APPLICATIONS, "root.c"));
    assertEquals("root.c", scheduler.getQueueInfo("c", false, false).getQueuePath());
  }

  @Test
  void anExternalServiceTokenFileOthersCanReadStopsTheRmWithTheFix(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    stop();
    rm = null;
    java.nio.file.Path token = dir.resolve("token");
    java.nio.file.Files.write(token, "t0ken".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    java.nio.file.Files.setPosixFilePermissions(token,
        java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, YarnDrfScheduler.class.getName());
    conf.set(ShimConf.SERVE_MODE, "external");
    conf.set(ShimConf.TOKEN_FILE, token.toString());
    MockRM external = new MockRM(conf);
    try {
      Exception e = assertThrows(Exception.class, external::start);
      Throwable root = e;
      while (root.getCause() != null && !root.getMessage().contains("chmod")) {
        root = root.getCause();
      }
      assertTrue(root.getMessage().contains("is readable or writable by other users")
          && root.getMessage().contains("chmod 600 " + token), root.getMessage());
    } finally {
      external.stop();
    }
  }
}

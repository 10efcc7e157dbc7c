package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.yarndrf.shim.Waits.until;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The scheduling loop inside an in-process ResourceManager (MockRM) with a fake core: calls only
 * when something changed (or, while asks wait, at the recheck interval), every node with room in
 * each call, heartbeats piling up while a call runs, and placements that race with a kill.
 */
class SchedulingLoopTest {
  private MockRM rm;
  private FakeCore core;
  private YarnDrfScheduler scheduler;
  private final List<MockNM> nms = new ArrayList<>();
  /** NodeManager heartbeats {@link #allocate} sent. */
  private long beats;

  private void start(int nodes, long recheckMs) throws Exception {
    start(nodes, recheckMs, Messages.NO_CALL_DUE);
  }

  /** `callInMs`: what every schedule reply of the fake core asks for ("call_in_ms"). */
  private void start(int nodes, long recheckMs, long callInMs) throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setLong(ShimConf.RECHECK_MS, recheckMs);
    core = new FakeCore();
    core.callInMs = callInMs;
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
    scheduler = (YarnDrfScheduler) rm.getResourceScheduler();
    for (int i = 0; i < nodes; i++) {
      nms.add(rm.registerNode("127.0.0.1:" + (2000 + i), 8192, 8));
    }
  }

  @AfterEach
  void stop() {
    if (rm != null) {
      rm.stop();
    }
  }


  private void heartbeatAll() throws Exception {
    for (MockNM nm : nms) {
      nm.nodeHeartbeat(true);
    }
  }

  private long calls() {
    return core.count("schedule");
  }

  @Test
  void anIdleClusterMakesNoCallsWhateverTheHeartbeats() throws Exception {
    start(3, 0);
    until(() -> core.count("snapshot") == 1 && calls() >= 1, "the first snapshot and call");
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(1024, rm).withUser("alice").withQueue("a"));
    AsyncApps.launch(rm, app);
    core.settle();
    long before = calls();
    for (int i = 0; i < 20; i++) {
      heartbeatAll();
    }
    Thread.sleep(300);
    assertEquals(before, calls(), "60 heartbeats of an idle cluster: no call");
    assertEquals(1, core.count("snapshot"));
  }

  @Test
  void whileAsksWaitForRoomTheLoopRechecksAtTheIntervalAndNotBetween() throws Exception {
    start(1, 200);
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(1024, rm).withUser("alice").withQueue("a"));
    MockAM am = AsyncApps.launch(rm, app);
    // The AM's 1024 MB and seven 1024 MB containers fill the node; the eighth waits for room.
    am.allocate("*", 1024, 8, new ArrayList<ContainerId>());
    until(() -> !core.startedRows().isEmpty() && core.startedRows().size() == 8, "7 tasks + AM");
    long before = calls();
    Thread.sleep(1000);
    long during = calls() - before;
    assertTrue(during >= 2 && during <= 8, during + " calls in 1 s at a 200 ms recheck: no spinning");
    List<RequestValues.Schedule> recent = core.requestsOf(RequestValues.Schedule.class);
    RequestValues.Schedule last = recent.get(recent.size() - 1);
    assertTrue(last.nodes.isEmpty(), "the full node is not offered");
    // The ask withdrawn, nothing waits: no more calls.
    am.allocate("*", 1024, 0, new ArrayList<ContainerId>());
    core.settle();
    long after = calls();
    Thread.sleep(700);
    assertEquals(after, calls());
  }

  /** The gaps (ms) between the schedule calls that came in the `ms` from now. */
  private List<Long> callGapsDuring(long ms) throws Exception {
    int from = core.scheduleTimes().size();
    Thread.sleep(ms);
    List<Long> times = core.scheduleTimes();
    List<Long> gaps = new ArrayList<>();
    for (int i = Math.max(1, from); i < times.size(); i++) {
      gaps.add((times.get(i) - times.get(i - 1)) / 1_000_000);
    }
    return gaps;
  }

  @Test
  void whenTheCoreAsksForACallByATimeTheLoopCallsThenThoughNothingChanged() throws Exception {
    start(1, 0, 300);  // no recheck, an idle cluster: only the core's request brings a call
    until(() -> calls() >= 2, "the first calls");
    Thread.sleep(300);
    List<Long> gaps = callGapsDuring(2000);
    assertTrue(gaps.size() >= 4 && gaps.size() <= 8, gaps + ": a call about every 300 ms");
    assertTrue(gaps.stream().allMatch(g -> g >= 250), gaps + ": none before it was due");
  }

  @Test
  void aCoreAskingForACallAtOnceGetsOneEveryFewMillisecondsNotASpinningLoop() throws Exception {
    start(1, 0, 0);
    until(() -> calls() >= 2, "the first calls");
    List<Long> gaps = callGapsDuring(1000);
    assertTrue(gaps.size() >= 5, gaps.size() + " calls in 1 s: the core's request is honoured");
    assertTrue(gaps.size() <= 1000 / SchedulingLoop.MIN_CALL_WAIT_MS + 1,
        gaps.size() + " calls in 1 s: at least " + SchedulingLoop.MIN_CALL_WAIT_MS + " ms apart");
  }

  @Test
  void oneCallCoversEveryNodeWithRoomAndHeartbeatsPileUpWhileACallRuns() throws Exception {
    start(20, 0);
    MockAM am = settledAm();
    core.delayMs = 100;
    long callsBefore = calls();
    List<org.apache.hadoop.yarn.api.records.Container> got = allocate(am, 40);
    assertEquals(40, got.size());
    long calls = calls() - callsBefore;
    assertTrue(calls * 5 < beats, calls + " calls for " + beats + " heartbeats");
    int widest = core.requestsOf(RequestValues.Schedule.class).stream().mapToInt(s -> s.nodes.size()).max().orElse(0);
    assertEquals(20, widest, "a call lists every node with room");
    java.util.Set<org.apache.hadoop.yarn.api.records.NodeId> used = new java.util.HashSet<>();
    got.forEach(c -> used.add(c.getNodeId()));
    assertTrue(used.size() > 10, "spread over the nodes of the calls: " + used.size());
    // Heartbeats that came after the last call are counted by the next one, whenever the RM's
    // dispatcher delivered them: one more ask brings a call, and the core asks for more.
    core.callInMs = 50;
    am.allocate("*", 512, 1, new ArrayList<ContainerId>());
    long sent = beats;
    until(() -> reportedHeartbeats() >= sent, "every heartbeat counted by some call");
    assertTrue(reportedHeartbeats() <= beats + 20 * 2, reportedHeartbeats() + " of " + beats);
  }

  /** Alice's app in root.a with its AM running, once the loop has done what there was to do. */
  private MockAM settledAm() throws Exception {
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(1024, rm).withUser("alice").withQueue("a"));
    MockAM am = AsyncApps.launch(rm, app);
    core.settle();
    return am;
  }

  /**
   * Asks for `count` containers and heartbeats every node (counted in {@link #beats}) until they
   * came, or 30 rounds in a row brought none: the budget follows progress, however slowly a loaded
   * machine lets the calls come. Returns what came, each time it came.
   */
  private List<org.apache.hadoop.yarn.api.records.Container> allocate(MockAM am, int count)
      throws Exception {
    List<org.apache.hadoop.yarn.api.records.Container> got = new ArrayList<>(
        am.allocate("*", 512, count, new ArrayList<ContainerId>()).getAllocatedContainers());
    for (int idle = 0; idle < 30 && got.size() < count; idle++) {
      heartbeatAll();
      beats += nms.size();
      Thread.sleep(20);
      List<org.apache.hadoop.yarn.api.records.Container> more = am.allocate(
          new ArrayList<ResourceRequest>(), new ArrayList<ContainerId>()).getAllocatedContainers();
      if (!more.isEmpty()) {
        got.addAll(more);
        idle = -1;
      }
    }
    return got;
  }

  /** Heartbeats once more and waits for the loop to settle: what the AM got meanwhile. */
  private List<org.apache.hadoop.yarn.api.records.Container> thenSettled(MockAM am)
      throws Exception {
    heartbeatAll();
    core.settle();
    return am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<ContainerId>())
        .getAllocatedContainers();
  }

  private static long distinct(List<org.apache.hadoop.yarn.api.records.Container> got) {
    return got.stream().map(org.apache.hadoop.yarn.api.records.Container::getId).distinct()
        .count();
  }

  @Test
  void aCallThatTimedOutAfterTheCoreAppliedItIsAskedAgainNotResyncedAndCommittedOnce()
      throws Exception {
    start(3, 0);
    MockAM am = settledAm();
    long snapshots = core.count("snapshot");
    core.scheduleThenTimeOut = 1;
    List<org.apache.hadoop.yarn.api.records.Container> got = allocate(am, 6);
    got.addAll(thenSettled(am));
    assertEquals(6, got.size(), "each assignment of the answered retry committed once");
    assertEquals(6, distinct(got));
    assertEquals(1, core.repeats, "the same request went again");
    assertEquals(snapshots, core.count("snapshot"), "no resync: " + scheduler.bridgeCounters());
    assertTrue(scheduler.bridgeCounters().contains(" failures=0 ")
        && scheduler.bridgeCounters().contains(" timeouts=1 ")
        && scheduler.bridgeCounters().contains(" retried=1 "), scheduler.bridgeCounters());
  }

  @Test
  void aCoreThatAnswersNoneOfTheAttemptsIsResyncedAndNothingIsAllocatedTwice() throws Exception {
    start(3, 0);
    MockAM am = settledAm();
    long snapshots = core.count("snapshot");
    core.scheduleThenTimeOut = 1 + CallTimeouts.RETRIES;
    List<org.apache.hadoop.yarn.api.records.Container> got = allocate(am, 6);
    got.addAll(thenSettled(am));
    assertEquals(6, got.size(), "allocated after the resync, once");
    assertEquals(6, distinct(got));
    assertEquals(CallTimeouts.RETRIES, core.repeats);
    assertEquals(snapshots + 1, core.count("snapshot"), scheduler.bridgeCounters());
  }

  private long reportedHeartbeats() {
    return core.requestsOf(RequestValues.Schedule.class).stream().mapToLong(s -> s.heartbeats).sum();
  }

  @Test
  void aPlacementThatArrivesAfterTheAppWasKilledTakesTheAppOutOfTheCoreAgain() throws Exception {
    start(1, 0);
    until(() -> core.count("snapshot") == 1, "the first snapshot");
    core.delayMs = 500;
    RMApp app = MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(1024, rm).withUser("alice").withQueue("a")
        .withWaitForAppAcceptedState(false).build());
    String id = app.getApplicationId().toString();
    until(() -> core.requestsOf(RequestValues.Schedule.class).stream()
        .anyMatch(s -> s.submissions.stream().anyMatch(sub -> sub.app.equals(id))),
        "the submission on its way");
    rm.killApp(app.getApplicationId());
    rm.waitForState(app.getApplicationId(), RMAppState.KILLED);
    core.delayMs = 0;
    until(() -> core.deltasOf("app_removed").stream().anyMatch(d -> d.app.app.equals(id)),
        "the core told the app is gone");
    assertEquals(RMAppState.KILLED, app.getState());
    assertTrue(scheduler.getSchedulerApplications().get(app.getApplicationId()) == null);
  }
}

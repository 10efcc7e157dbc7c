package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.yarndrf.shim.Waits.until;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.PreemptionContainer;
import org.apache.hadoop.yarn.api.records.PreemptionMessage;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The shim's side of preemption, in an in-process ResourceManager (MockRM) whose fake core sends
 * a plan: a container in "preempt" is named to its AM in a PreemptionMessage (a strict contract)
 * of every allocate response until it ends, across a resync too; one in "kill" ends with exit
 * status PREEMPTED and counts in the queue's and the attempt's preemption metrics; an entry for a
 * container no longer running (a repeated kill, one YARN never had) changes nothing.
 */
class PreemptionTest {
  private MockRM rm;
  private FakeCore core;
  private YarnDrfScheduler scheduler;
  private RMApp app;
  private MockAM am;
  private final List<Container> tasks = new ArrayList<>();

  /** One node of 8 GB: the AM and seven 1 GB tasks fill it; an eighth task waits (recheck calls). */
  @BeforeEach
  void fill() throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setLong(ShimConf.RECHECK_MS, 50);
    core = new FakeCore();
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
    scheduler = (YarnDrfScheduler) rm.getResourceScheduler();
    rm.registerNode("127.0.0.1:2000", 8192, 8);
    app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(1024, rm).withUser("alice").withQueue("a"));
    am = AsyncApps.launch(rm, app);
    tasks.addAll(am.allocate("*", 1024, 8, new ArrayList<ContainerId>()).getAllocatedContainers());
    until(() -> {
      tasks.addAll(poll().getAllocatedContainers());
      return tasks.size() == 7;
    }, "seven tasks");
  }

  @AfterEach
  void stop() {
    if (rm != null) {
      rm.stop();
    }
  }

  private AllocateResponse poll() {
    try {
      return am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<ContainerId>());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }


  private ReplyValues.Preemption planned(ContainerId id, long killInMs) {
    return new ReplyValues.Preemption(id.toString(), app.getApplicationId().toString(),
        "127.0.0.1:2000", "root.a", "root.b", "fair-share", killInMs);
  }

  private static Set<ContainerId> strict(AllocateResponse r) {
    PreemptionMessage m = r.getPreemptionMessage();
    if (m == null || m.getStrictContract() == null) {
      return Collections.emptySet();
    }
    Set<ContainerId> out = new java.util.HashSet<>();
    for (PreemptionContainer c : m.getStrictContract().getContainers()) {
      out.add(c.getId());
    }
    return out;
  }

  private QueueMetrics queueMetrics() {
    return scheduler.getApplicationAttempt(am.getApplicationAttemptId()).getQueue().getMetrics();
  }

  private int liveContainers() {
    return scheduler.getApplicationAttempt(am.getApplicationAttemptId()).getLiveContainers().size();
  }

  private RMAppAttemptMetrics attemptMetrics() {
    return app.getCurrentAppAttempt().getRMAppAttemptMetrics();
  }

  @Test
  void aMarkedContainerIsNamedToItsAmInEveryAllocateUntilItIsKilledAsPreempted() throws Exception {
    ContainerId victim = tasks.get(2).getId();
    assertNull(poll().getPreemptionMessage(), "nothing marked: no message");
    core.preemptNext = Collections.singletonList(planned(victim, 3000));
    until(() -> scheduler.bridgeCounters().contains("told=1"), "the mark applied");
    assertEquals(Collections.singleton(victim), strict(poll()));
    assertEquals(Collections.singleton(victim), strict(poll()), "told again with each allocate, as FairScheduler does");

    core.killNext = Collections.singletonList(planned(victim, 0));
    List<ContainerStatus> ended = new ArrayList<>();
    List<Container> eighth = new ArrayList<>();
    until(() -> {
      AllocateResponse r = poll();
      ended.addAll(r.getCompletedContainersStatuses());
      eighth.addAll(r.getAllocatedContainers());
      return !ended.isEmpty();
    }, "the victim ends");
    assertEquals(victim, ended.get(0).getContainerId());
    assertEquals(ContainerExitStatus.PREEMPTED, ended.get(0).getExitStatus());
    assertEquals(1, queueMetrics().getAggregatePreemptedContainers());
    assertEquals(1, attemptMetrics().getNumNonAMContainersPreempted());
    until(() -> core.finishedPairs().contains(victim + "=preempted"), "the core told: preempted");
    // The waiting task may be placed already: an allocate hands a new container out once.
    AllocateResponse afterKill = poll();
    eighth.addAll(afterKill.getAllocatedContainers());
    assertTrue(strict(afterKill).isEmpty(), "an ended container is no longer named");
    until(() -> {
      eighth.addAll(poll().getAllocatedContainers());
      return !eighth.isEmpty();
    }, "the waiting task gets the room");
  }

  @Test
  void aKillRepeatedOrForAContainerNoLongerRunningEndsNothing() throws Exception {
    ContainerId victim = tasks.get(0).getId();
    core.killNext = Collections.singletonList(planned(victim, 0));
    until(() -> queueMetrics().getAggregatePreemptedContainers() == 1, "killed once");
    // The waiting eighth task takes the victim's room before the AM's next ask replaces its count.
    until(() -> liveContainers() == 8, "the waiting task placed");
    ContainerId released = tasks.get(1).getId();
    am.allocate(new ArrayList<ResourceRequest>(), Collections.singletonList(released));
    until(() -> scheduler.getRMContainer(released) == null, "a task released by its AM");
    ContainerId unknown = ContainerId.newContainerId(am.getApplicationAttemptId(), 99);
    core.killNext = Arrays.asList(planned(victim, 0), planned(released, 0), planned(unknown, 0));
    core.preemptNext = Collections.singletonList(planned(released, 3000));
    am.allocate("*", 1024, 1, new ArrayList<ContainerId>());  // a change: the loop calls
    until(() -> scheduler.bridgeCounters().contains("ignored=4"), "all four ignored");
    assertEquals(1, queueMetrics().getAggregatePreemptedContainers());
    assertEquals(1, attemptMetrics().getNumNonAMContainersPreempted());
    until(() -> liveContainers() == 8, "the new task placed");
    core.settle();
    assertEquals(8, liveContainers(), "the AM, the seven tasks left and the new one run on");
    assertNull(poll().getPreemptionMessage());
  }

  @Test
  void aMarkSurvivesAResyncOfTheCore() throws Exception {
    ContainerId victim = tasks.get(4).getId();
    core.preemptNext = Collections.singletonList(planned(victim, 3000));
    until(() -> scheduler.bridgeCounters().contains("told=1"), "the mark applied");
    long snapshots = core.count("snapshot");
    core.mode = FakeCore.Mode.MALFORMED;
    until(() -> !scheduler.bridgeCounters().contains("malformed=0 "), "a malformed reply");
    core.mode = FakeCore.Mode.OK;
    until(() -> core.count("snapshot") > snapshots, "a resync");
    AllocateResponse r = poll();
    assertNotNull(r.getPreemptionMessage());
    assertEquals(Collections.singleton(victim), strict(r));
  }
}

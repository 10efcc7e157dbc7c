package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.yarndrf.shim.Waits.until;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.PreemptionContainer;
import org.apache.hadoop.yarn.api.records.PreemptionMessage;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.MemoryRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A work-preserving ResourceManager restart while a preemption mark is pending (issue 27, item 4),
 * in-process (MockRM, its state in a MemoryRMStateStore) with a fake core before and after. The
 * old RM saves the preemption state its core reported (yarn-drf.preemption.state-dir); the
 * restarted RM reads it and gives it to its new core with the first snapshot; the new core (the
 * fake, taking marks back as the real one does, on a clock the test sets) tells the AM of the
 * pending mark again through the new RM, which kills it at the deadline the old core gave, not
 * before, once; the mark the old RM already carried out is never carried out again, and the
 * restarted RM's preemption metrics count its one kill once. (When the real core kills is
 * tested against its clock in tests/bridge/test_preemption_restart.py.)
 */
class PreemptionRestartTest {
  private static final String NODE = "127.0.0.1:2000";
  private static final long GRACE_MS = 15_000;
  private MockRM rm;
  private MockRM restarted;

  @TempDir
  Path stateDir;

  @AfterEach
  void stop() {
    for (MockRM r : Arrays.asList(restarted, rm)) {
      if (r != null) {
        r.stop();
      }
    }
  }

  @Test
  void theRestartedRmKnowsThePendingMarkTellsItsAmAgainAndKillsAtTheOriginalDeadlineOnce()
      throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setLong(ShimConf.RECHECK_MS, 50);
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, MemoryRMStateStore.class.getName());
    conf.set(ShimConf.PREEMPTION_STATE_DIR, stateDir.toUri().toString());
    FakeCore core = new FakeCore();
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
    MockNM nm = rm.registerNode(NODE, 8192, 8);
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(1024, rm).withUser("alice").withQueue("a"));
    MockAM am = AsyncApps.launch(rm, app);
    // Seven tasks fill the node; an eighth waits, so the shim calls the core on its recheck.
    List<Container> tasks = new ArrayList<>(
        am.allocate("*", 1024, 8, new ArrayList<ContainerId>()).getAllocatedContainers());
    until(() -> {
      tasks.addAll(poll(am).getAllocatedContainers());
      return tasks.size() >= 7;
    }, "seven tasks fill the node");

    // The old core kills one task and marks another, and reports its state: both marks (the
    // killed one until its container ends), the pending one due GRACE_MS from now.
    ContainerId killedBefore = tasks.get(0).getId();
    ContainerId marked = tasks.get(1).getId();
    long deadline = System.currentTimeMillis() + GRACE_MS;  // (the old core's reckoning)
    String state = "{\"v\":1,\"marks\":[" + mark(killedBefore, deadline - GRACE_MS) + ","
        + mark(marked, deadline) + "],\"leaves\":[{\"queue\":\"root.b\",\"below_fair_since_ms\":"
        + (deadline - GRACE_MS - 30_000) + ",\"starved\":\"fair-share\"}]}";
    YarnDrfScheduler before = (YarnDrfScheduler) rm.getResourceScheduler();
    core.killNext = Collections.singletonList(planned(app, killedBefore, 0));
    core.preemptNext = Collections.singletonList(planned(app, marked, GRACE_MS));
    core.stateNext = state;
    until(() -> before.bridgeCounters().contains("killed=1") && strict(poll(am)).contains(marked),
        "the old RM killed one task and told the AM of the mark: " + before.bridgeCounters());
    Path saved = stateDir.resolve("preemption-state.json");
    until(() -> before.bridgeCounters().contains("preemption-state saves=1") && Files.exists(saved),
        "the old RM saved its core's state: " + before.bridgeCounters());
    assertEquals(state, new String(Files.readAllBytes(saved), StandardCharsets.UTF_8));

    // The RM restarts; the NodeManager reports what still runs (not the killed task), the AM
    // registers again and asks again for the task it still wants.
    FakeCore newCore = new FakeCore();
    newCore.nowMs = deadline - 1000;  // the new core's clock stands within the grace meanwhile
    restarted = new MockRM(conf, rm.getRMStateStore());
    YarnDrfScheduler after = (YarnDrfScheduler) restarted.getResourceScheduler();
    after.setCoreChannel(newCore);
    restarted.start();
    until(() -> newCore.count("snapshot") >= 1, "the new core's first snapshot");
    assertEquals(state, newCore.requestsOf(RequestValues.Snapshot.class).get(0).preemptionState,
        "the restarted RM gives its new core the state the old one saved");
    nm.setResourceTrackerService(restarted.getResourceTrackerService());
    List<NMContainerStatus> running = new ArrayList<>();
    running.add(runningStatus(ContainerId.newContainerId(am.getApplicationAttemptId(), 1), 0));
    for (Container t : tasks.subList(1, tasks.size())) {
      running.add(runningStatus(t.getId(), t.getPriority().getPriority()));
    }
    nm.registerNode(running, null);
    am.setAMRMProtocol(restarted.getApplicationMasterService(), restarted.getRMContext());
    am.registerAppAttempt(false);
    am.allocate("*", 1024, 1, new ArrayList<ContainerId>());

    // The new RM tells the AM of the pending mark (no new mark: the old one, its deadline kept).
    List<ContainerStatus> ended = new ArrayList<>();
    until(() -> {
      AllocateResponse r = poll(am);
      ended.addAll(r.getCompletedContainersStatuses());
      return strict(r).contains(marked);
    }, "the restarted RM tells the AM of the pending mark: " + after.bridgeCounters());
    for (int i = 0; i < 5; i++) {  // within the grace: nothing ends
      Thread.sleep(100);
      ended.addAll(poll(am).getCompletedContainersStatuses());
    }
    assertEquals(Collections.emptyList(), ended, "nothing ends before the deadline");
    QueueMetrics metrics = after.getApplicationAttempt(am.getApplicationAttemptId()).getQueue().getMetrics();
    long queuePreempted = metrics.getAggregatePreemptedContainers();
    RMAppAttemptMetrics attempt = restartedApp(app.getApplicationId()).getCurrentAppAttempt()
        .getRMAppAttemptMetrics();
    int attemptPreempted = attempt.getNumNonAMContainersPreempted();

    newCore.nowMs = deadline;  // the deadline the old core gave
    until(() -> {
      ended.addAll(poll(am).getCompletedContainersStatuses());
      return !ended.isEmpty();
    }, "the marked task ends at its deadline");
    for (int i = 0; i < 5; i++) {  // the AM's next responses: nothing else ends
      Thread.sleep(100);
      ended.addAll(poll(am).getCompletedContainersStatuses());
    }
    assertEquals(1, ended.size(), "one container ended after the restart: " + ended);
    assertEquals(marked, ended.get(0).getContainerId());
    assertEquals(ContainerExitStatus.PREEMPTED, ended.get(0).getExitStatus());
    assertNotNull(after.getRMContainer(tasks.get(2).getId()), "the other tasks still run");
    assertEquals(queuePreempted + 1, metrics.getAggregatePreemptedContainers(), "the kill counted once");
    assertEquals(attemptPreempted + 1, attempt.getNumNonAMContainersPreempted(), "the kill counted once");
    assertTrue(after.bridgeCounters().contains("told=1 killed=1 ignored=0"), after.bridgeCounters());
    until(() -> newCore.finishedPairs().contains(marked + "=preempted"), "the new core told: preempted");
    assertEquals(Collections.singletonList(marked + "=preempted"), preempted(newCore));
  }

  /** A mark as the core saves it, for the starved app's request (priority 1). */
  private static String mark(ContainerId id, long deadlineMs) {
    return "{\"container\":\"" + id + "\",\"node\":\"" + NODE + "\",\"app\":\""
        + id.getApplicationAttemptId().getApplicationId() + "\",\"priority\":1,\"allocation_id\":0,"
        + "\"reason\":\"fair-share\",\"marked_at_ms\":" + (deadlineMs - GRACE_MS)
        + ",\"deadline_ms\":" + deadlineMs + "}";
  }

  private RMApp restartedApp(ApplicationId id) {
    return restarted.getRMContext().getRMApps().get(id);
  }

  private static List<String> preempted(FakeCore core) {
    List<String> out = new ArrayList<>();
    for (String pair : core.finishedPairs()) {
      if (pair.endsWith("=preempted")) {
        out.add(pair);
      }
    }
    return out;
  }

  private static NMContainerStatus runningStatus(ContainerId id, int priority) {
    return NMContainerStatus.newInstance(id, 0, ContainerState.RUNNING, Resource.newInstance(1024, 1),
        "", 0, Priority.newInstance(priority), 0);
  }

  private static ReplyValues.Preemption planned(RMApp app, ContainerId id, long killInMs) {
    return new ReplyValues.Preemption(id.toString(), app.getApplicationId().toString(), NODE, "root.a",
        "root.b", "fair-share", killInMs);
  }

  private static AllocateResponse poll(MockAM am) {
    try {
      return am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<ContainerId>());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static Set<ContainerId> strict(AllocateResponse r) {
    PreemptionMessage m = r.getPreemptionMessage();
    Set<ContainerId> out = new HashSet<>();
    if (m != null && m.getStrictContract() != null) {
      for (PreemptionContainer c : m.getStrictContract().getContainers()) {
        out.add(c.getId());
      }
    }
    return out;
  }

  /** Polls `done` until it holds, for up to a minute (the machine may be loaded). */
}

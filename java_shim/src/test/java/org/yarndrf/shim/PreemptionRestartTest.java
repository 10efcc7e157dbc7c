package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
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

/**
 * A work-preserving ResourceManager restart while preemption marks are pending (issue 15, item
 * 4), in-process (MockRM, its state in a MemoryRMStateStore) with a fake core before and after:
 * the shim keeps no mark and no deadline of its own, so the restarted RM tells no AM of a
 * preemption and kills nothing until the new core (rebuilt from what the NodeManagers report)
 * sends a fresh plan; that plan's kill of a container the old RM already killed ends nothing, and
 * the restarted RM's preemption metrics count each kill it made once.
 */
class PreemptionRestartTest {
  private static final String NODE = "127.0.0.1:2000";
  private MockRM rm;
  private MockRM restarted;

  @AfterEach
  void stop() {
    for (MockRM r : Arrays.asList(restarted, rm)) {
      if (r != null) {
        r.stop();
      }
    }
  }

  @Test
  void marksPendingAtARestartAreNotCarriedOverAndNothingIsKilledTwice() throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setLong(ShimConf.RECHECK_MS, 50);
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, MemoryRMStateStore.class.getName());
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

    // The old core kills one task and marks another, whose grace is still running at the restart.
    ContainerId killedBefore = tasks.get(0).getId();
    ContainerId marked = tasks.get(1).getId();
    YarnDrfScheduler before = (YarnDrfScheduler) rm.getResourceScheduler();
    core.killNext = Collections.singletonList(planned(app, killedBefore, 0));
    core.preemptNext = Collections.singletonList(planned(app, marked, 1000));
    until(() -> before.bridgeCounters().contains("killed=1") && strict(poll(am)).contains(marked),
        "the old RM killed one task and told the AM of the mark: " + before.bridgeCounters());

    // The RM restarts; the NodeManager reports what still runs (not the killed task), the AM
    // registers again.
    FakeCore newCore = new FakeCore();
    restarted = new MockRM(conf, rm.getRMStateStore());
    YarnDrfScheduler after = (YarnDrfScheduler) restarted.getResourceScheduler();
    after.setCoreChannel(newCore);
    restarted.start();
    nm.setResourceTrackerService(restarted.getResourceTrackerService());
    List<NMContainerStatus> running = new ArrayList<>();
    running.add(runningStatus(ContainerId.newContainerId(am.getApplicationAttemptId(), 1), 0));
    for (Container t : tasks.subList(1, tasks.size())) {
      running.add(runningStatus(t.getId(), t.getPriority().getPriority()));
    }
    nm.registerNode(running, null);
    am.setAMRMProtocol(restarted.getApplicationMasterService(), restarted.getRMContext());
    am.registerAppAttempt(false);
    until(() -> newCore.startedRows().size() == running.size(),
        "the new core learns the running containers: " + newCore.startedRows().size());
    // Two tasks asked for again: one fits, one waits (the shim keeps calling the new core).
    am.allocate("*", 1024, 2, new ArrayList<ContainerId>());

    // Past the old mark's grace, with no plan from the new core: no message, no kill.
    Thread.sleep(1500);
    List<ContainerStatus> ended = new ArrayList<>();
    AllocateResponse quiet = poll(am);
    ended.addAll(quiet.getCompletedContainersStatuses());
    assertTrue(strict(quiet).isEmpty(), "the restarted RM names no container before the new core marks one");
    assertNotNull(after.getRMContainer(marked), "the marked task still runs");
    assertEquals(Collections.emptyList(), ended, "nothing ended after the restart");
    assertTrue(after.bridgeCounters().contains("told=0 killed=0 ignored=0"), after.bridgeCounters());
    QueueMetrics metrics = after.getApplicationAttempt(am.getApplicationAttemptId()).getQueue().getMetrics();
    long queuePreempted = metrics.getAggregatePreemptedContainers();
    RMAppAttemptMetrics attempt = restartedApp(app.getApplicationId()).getCurrentAppAttempt()
        .getRMAppAttemptMetrics();
    int attemptPreempted = attempt.getNumNonAMContainersPreempted();

    // The new core's fresh plan: mark and kill the task, and (a repeat the old plan's state could
    // make) kill the task the old RM already killed.
    newCore.preemptNext = Collections.singletonList(planned(app, marked, 1000));
    until(() -> strict(poll(am)).contains(marked), "the new core's mark reaches the AM");
    newCore.killNext = Arrays.asList(planned(app, killedBefore, 0), planned(app, marked, 0));
    until(() -> {
      ended.addAll(poll(am).getCompletedContainersStatuses());
      return !ended.isEmpty();
    }, "the marked task ends");
    until(() -> after.bridgeCounters().contains("killed=1 ignored=1"), after.bridgeCounters());
    for (int i = 0; i < 5; i++) {  // the AM's next responses: nothing else ends
      Thread.sleep(100);
      ended.addAll(poll(am).getCompletedContainersStatuses());
    }
    assertEquals(1, ended.size(), "one container ended after the restart: " + ended);
    assertEquals(marked, ended.get(0).getContainerId());
    assertEquals(ContainerExitStatus.PREEMPTED, ended.get(0).getExitStatus());
    assertEquals(queuePreempted + 1, metrics.getAggregatePreemptedContainers(), "the kill counted once");
    assertEquals(attemptPreempted + 1, attempt.getNumNonAMContainersPreempted(), "the kill counted once");
    until(() -> newCore.finishedPairs().contains(marked + "=preempted"), "the new core told: preempted");
    assertEquals(Collections.singletonList(marked + "=preempted"), preempted(newCore));
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

  private static Messages.Preemption planned(RMApp app, ContainerId id, long killInMs) {
    return new Messages.Preemption(id.toString(), app.getApplicationId().toString(), NODE, "root.a",
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

  private static void until(BooleanSupplier done, String what) throws Exception {
    for (int i = 0; i < 500 && !done.getAsBoolean(); i++) {
      Thread.sleep(10);
    }
    assertTrue(done.getAsBoolean(), what);
  }
}

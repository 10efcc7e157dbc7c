package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.yarndrf.shim.Waits.until;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.RMContextImpl;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.MemoryRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.records.ApplicationStateData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.util.ControlledClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.yarndrf.shim.bridge.CapturedLog;
import org.yarndrf.shim.bridge.CoreChannel;
import org.yarndrf.shim.bridge.CoreUnavailableException;

/**
 * What a restarted ResourceManager gives the apps it recovers. It recovers them before it starts
 * its scheduler: an app whose attempt had not got its AM container gets a new attempt then, and
 * YARN asks the scheduler for its AM (allocate) before yarn-drf's scheduling loop exists; the
 * attempt must still be scheduled and get its AM (Hadoop's TestRMRestart saw it stuck in
 * SUBMITTED). A container of an earlier attempt whose NodeManager comes back after the new AM
 * registered reaches that AM in an allocate response (Hadoop's TestAMRestart waited for it).
 */
class RecoveringRmTest {
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

  private static YarnConfiguration recovering() {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, MemoryRMStateStore.class.getName());
    conf.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 3);
    return conf;
  }

  private MockRM restart(YarnConfiguration conf) {
    restarted = new MockRM(conf, rm.getRMStateStore());
    ((YarnDrfScheduler) restarted.getResourceScheduler()).setCoreChannel(new FakeCore());
    restarted.start();
    return restarted;
  }

  @Test
  void anAttemptMadeWhileTheRmRecoversIsScheduledAndGetsItsAm() throws Exception {
    YarnConfiguration conf = recovering();
    FakeCore core = new FakeCore();
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
        .withUser("alice").withQueue("a"));
    AsyncApps.launch(rm, app);
    // The first attempt fails; the core holds the second one's AM ask, so at the restart the
    // second attempt has no AM container and is not in the store.
    core.amWaits = "held for the test";
    ApplicationAttemptId first = app.getCurrentAppAttempt().getAppAttemptId();
    rm.failApplicationAttempt(first);
    rm.waitForState(first, RMAppAttemptState.FAILED);
    ApplicationAttemptId second = app.getCurrentAppAttempt().getAppAttemptId();
    rm.waitForState(second, RMAppAttemptState.SCHEDULED);

    restart(conf);
    restarted.waitForState(app.getApplicationId(), RMAppState.ACCEPTED);
    RMApp recovered = restarted.getRMContext().getRMApps().get(app.getApplicationId());
    ApplicationAttemptId again = recovered.getCurrentAppAttempt().getAppAttemptId();
    assertEquals(second, again, "the recovered app's new attempt has the next number");
    nm.setResourceTrackerService(restarted.getResourceTrackerService());
    nm.registerNode();
    restarted.waitForState(again, RMAppAttemptState.ALLOCATED);
  }

  @Test
  void aContainerOfAnEarlierAttemptReportedAfterTheNewAmRegisteredReachesItsNextAllocate()
      throws Exception {
    YarnConfiguration conf = recovering();
    FakeCore core = new FakeCore();
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 8192, 8);
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
        .withUser("alice").withQueue("a").withKeepContainers(true));
    MockAM am1 = AsyncApps.launch(rm, app);
    // A task of 7.5 GB fits the second node only (the AM holds 1 GB of the first).
    MockNM nm2 = rm.registerNode("127.0.0.1:2345", 8192, 8);
    List<Container> tasks = new ArrayList<>(
        am1.allocate("*", 7680, 1, new ArrayList<ContainerId>()).getAllocatedContainers());
    until(() -> tasks.addAll(poll(am1).getAllocatedContainers()) || !tasks.isEmpty(), "the task");
    ContainerId task = tasks.get(0).getId();
    assertEquals(nm2.getNodeId(), tasks.get(0).getNodeId());
    nm2.nodeHeartbeat(am1.getApplicationAttemptId(), task.getContainerId(), ContainerState.RUNNING);
    rm.waitForState(nm2, task, RMContainerState.RUNNING);

    // The AM dies (its task lives on); the next attempt's AM waits when the RM restarts.
    core.amWaits = "held for the test";
    nm1.nodeHeartbeat(am1.getApplicationAttemptId(), 1, ContainerState.COMPLETE);
    rm.waitForState(am1.getApplicationAttemptId(), RMAppAttemptState.FAILED);

    restart(conf);
    nm1.setResourceTrackerService(restarted.getResourceTrackerService());
    nm1.registerNode();
    RMApp recovered = restarted.getRMContext().getRMApps().get(app.getApplicationId());
    MockAM am2 = MockRM.launchAMWhenAsyncSchedulingEnabled(recovered, restarted);
    RegisterApplicationMasterResponse registered = am2.registerAppAttempt();
    assertTrue(registered.getContainersFromPreviousAttempts().isEmpty(),
        "the task's NodeManager is not back yet");

    nm2.setResourceTrackerService(restarted.getResourceTrackerService());
    nm2.registerNode(Collections.singletonList(NMContainerStatus.newInstance(task, 0,
        ContainerState.RUNNING, Resource.newInstance(7680, 1), "", 0, Priority.newInstance(1), 0)),
        null);
    List<Container> earlier = new ArrayList<>();
    until(() -> earlier.addAll(poll(am2).getContainersFromPreviousAttempts()) || !earlier.isEmpty(),
        "the AM is told of its earlier attempt's task");
    assertEquals(task, earlier.get(0).getId());
  }

  /**
   * FakeCore places every submission in root.a, as a placement rule would. The placed path is
   * stored with the app only where the name it was submitted with would not recover into it
   * (QueueTree.recoveredPath): YARN's schedulers write no app-state update at placement, and
   * Hadoop's TestRMRestart counts them (here the one left is RMAppImpl's, at the AM's launch).
   */
  @ParameterizedTest
  @CsvSource({"by-rule, root.a, 2", "a, a, 1", "root.a, root.a, 1"})
  void aRestartedRmRecoversAnAppIntoTheQueueTheCorePlacedItInStoringItsPathOnlyIfTheNameWouldNot(
      String submitted, String stored, int appUpdates) throws Exception {
    YarnConfiguration conf = recovering();
    conf.set(YarnConfiguration.RM_STORE, CountingStore.class.getName());
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, new FakeCore());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    RMApp app;
    try (CapturedLog apps = CapturedLog.of(RMAppImpl.class)) {
      app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
          .withUser("alice").withQueue(submitted));
      AsyncApps.launch(rm, app);
      assertFalse(apps.has("can't handle this event"),
          "storing the placed queue sends the app no event its state cannot take: " + apps.lines);
    }
    ApplicationId id = app.getApplicationId();
    CountingStore store = (CountingStore) rm.getRMStateStore();
    until(() -> store.getState().getApplicationState().get(id).getLaunchTime() != 0,
        "the AM's launch stored with the app");
    assertEquals(stored, store.getState().getApplicationState().get(id)
        .getApplicationSubmissionContext().getQueue());
    assertEquals(appUpdates, store.appUpdates.get(), "app-state updates up to the AM's launch");

    restart(conf);
    nm.setResourceTrackerService(restarted.getResourceTrackerService());
    nm.registerNode();
    YarnDrfScheduler after = (YarnDrfScheduler) restarted.getResourceScheduler();
    assertEquals("root.a", after.getSchedulerApplications().get(id).getQueue().getQueueName(),
        "recovered into its queue, not a placeholder named as submitted");
    assertEquals("root.a", restarted.getRMContext().getRMApps().get(id).getQueue());
  }

  /** A MemoryRMStateStore that counts the app-state updates it writes. */
  public static final class CountingStore extends MemoryRMStateStore {
    final AtomicInteger appUpdates = new AtomicInteger();

    @Override
    public synchronized void updateApplicationStateInternal(ApplicationId appId,
        ApplicationStateData appState) throws Exception {
      appUpdates.incrementAndGet();
      super.updateApplicationStateInternal(appId, appState);
    }
  }

  /**
   * A restarted RM waits yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms for its
   * NodeManagers before it allocates; YARN starts that wait before the scheduler, and they cannot
   * come back before the scheduler started, so a core slower to start than the wait must not use
   * it up (Hadoop's TestWorkPreservingRMRestart saw a container allocated during recovery).
   */
  @Test
  void theWaitForNodesAfterARestartCountsFromWhenTheCoreAnswered() throws Exception {
    YarnConfiguration conf = recovering();
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, new FakeCore());
    rm.registerNode("127.0.0.1:1234", 8192, 8);
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
        .withUser("alice").withQueue("a"));
    AsyncApps.launch(rm, app);  // the restarted RM recovers an app: it waits for its nodes

    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 4000);
    ControlledClock clock = new ControlledClock();
    clock.setTime(1000);
    restarted = new MockRM(conf, rm.getRMStateStore());
    ((RMContextImpl) restarted.getRMContext()).setSystemClock(clock);
    FakeCore core = new FakeCore();
    AtomicBoolean answered = new AtomicBoolean();
    ((YarnDrfScheduler) restarted.getResourceScheduler()).setCoreChannel(new CoreChannel() {
      @Override
      public String call(String message) throws CoreUnavailableException {
        if (answered.compareAndSet(false, true)) {
          clock.tickMsec(5000);  // the core's start outlasts the wait
        }
        return core.call(message);
      }

      @Override
      public void close() {
        core.close();
      }
    });
    restarted.start();
    assertTrue(answered.get());
    assertFalse(restarted.getRMContext().isSchedulerReadyForAllocatingContainers(),
        "the wait starts when the core has answered");
    clock.tickMsec(4001);
    assertTrue(restarted.getRMContext().isSchedulerReadyForAllocatingContainers());
  }

  private static AllocateResponse poll(MockAM am) {
    try {
      return am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<ContainerId>());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

}

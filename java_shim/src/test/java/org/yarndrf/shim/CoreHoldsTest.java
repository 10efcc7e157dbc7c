package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.yarndrf.shim.Waits.until;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The core's holds shown in YARN (CoreHolds), in an in-process ResourceManager whose fake core
 * sends them: a hold is a RESERVED container on the attempt and the node, counted in the queue's
 * reservedMB/reservedVCores/reservedContainers, with the node's free room unchanged; it is gone,
 * and the counts back to 0, when the hold ends, the app is killed, the node is lost, or the shim
 * resyncs; a failed attempt's reservation is among the finished containers its successor hears of.
 */
class CoreHoldsTest {
  private static final String NODE = "127.0.0.1:2000";
  private MockRM rm;
  private FakeCore core;
  private YarnDrfScheduler scheduler;
  private MockNM nm;
  private RMApp app;
  private MockAM am;

  /** One node of 8 GB with the AM on it; the AM asks for 7.5 GB, which does not fit. */
  @BeforeEach
  void start() throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setLong(ShimConf.RECHECK_MS, 50);
    conf.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 2);
    core = new FakeCore();
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
    scheduler = (YarnDrfScheduler) rm.getResourceScheduler();
    nm = rm.registerNode(NODE, 8192, 8);
    app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
        .withUser("alice").withQueue("a").withKeepContainers(true));
    am = AsyncApps.launch(rm, app);
    am.allocate("*", 7680, 1, new ArrayList<ContainerId>());
    until(() -> key() != null, "the ask in YARN");
  }

  @AfterEach
  void stop() {
    if (rm != null) {
      rm.stop();
    }
  }

  private SchedulerRequestKey key() {
    ShimAppAttempt attempt = scheduler.getApplicationAttempt(am.getApplicationAttemptId());
    for (SchedulerRequestKey k : attempt.getSchedulerKeys()) {
      if (attempt.getPendingAsk(k, "*").getCount() > 0) {
        return k;
      }
    }
    return null;
  }

  private void hold() throws Exception {
    SchedulerRequestKey k = key();
    core.holdsNext = Collections.singletonList(new Messages.Hold(NODE,
        app.getApplicationId().toString(), k.getPriority().getPriority(),
        k.getAllocationRequestId(), new long[] {7680, 1}));
    until(() -> node().getReservedContainer() != null, "the hold reserved in YARN");
  }

  private FiCaSchedulerNode node() {
    return scheduler.getNodeTracker().getNode(NodeId.fromString(NODE));
  }

  private QueueMetrics metrics() {
    return scheduler.queues.find("root.a").getMetrics();
  }

  private void assertNoReservation() {
    assertNull(node().getReservedContainer());
    assertEquals(0, metrics().getReservedMB());
    assertEquals(0, metrics().getReservedVirtualCores());
    assertEquals(0, metrics().getReservedContainers());
  }

  @Test
  void aHoldIsAReservedContainerOnTheAttemptAndTheNodeCountedInTheQueueUntilItEnds()
      throws Exception {
    long freeBefore = node().getUnallocatedResource().getMemorySize();
    hold();
    ShimAppAttempt attempt = scheduler.getApplicationAttempt(am.getApplicationAttemptId());
    List<RMContainer> reserved = attempt.getReservedContainers();
    assertEquals(1, reserved.size());
    RMContainer c = reserved.get(0);
    assertSame(c, node().getReservedContainer());
    assertEquals(RMContainerState.RESERVED, c.getState());
    assertEquals(NodeId.fromString(NODE), c.getReservedNode());
    assertEquals(7680, c.getReservedResource().getMemorySize());
    assertEquals(7680, metrics().getReservedMB());
    assertEquals(1, metrics().getReservedVirtualCores());
    assertEquals(1, metrics().getReservedContainers());
    assertEquals(7680, attempt.getCurrentReservation().getMemorySize());
    assertEquals(freeBefore, node().getUnallocatedResource().getMemorySize(),
        "a hold takes no room in YARN: the core decides who gets it");

    core.holdsEndedNext = Collections.singletonList(NODE);
    until(() -> node().getReservedContainer() == null, "the hold's end in YARN");
    assertNoReservation();
    assertEquals(0, attempt.getReservedContainers().size());
    assertEquals(0, attempt.getCurrentReservation().getMemorySize());
  }

  @Test
  void aKilledAppsHoldEnds() throws Exception {
    hold();
    rm.killApp(app.getApplicationId());
    until(() -> node().getReservedContainer() == null, "the killed app's reservation gone");
    assertNoReservation();
  }

  @Test
  void aLostNodesHoldEnds() throws Exception {
    hold();
    FiCaSchedulerNode held = node();
    rm.sendNodeLost(nm);
    until(() -> scheduler.getNodeTracker().getNode(NodeId.fromString(NODE)) == null, "the node gone");
    assertNull(held.getReservedContainer());
    assertEquals(0, metrics().getReservedMB());
    assertEquals(0, metrics().getReservedContainers());
  }

  @Test
  void aResyncDropsEveryHoldTheNewCoreDoesNotTellAgain() throws Exception {
    hold();
    long snapshots = core.count("snapshot");
    core.mode = FakeCore.Mode.MALFORMED;
    until(() -> !scheduler.bridgeCounters().contains("malformed=0"), "a malformed reply");
    core.mode = FakeCore.Mode.OK;
    until(() -> core.count("snapshot") > snapshots, "a resync");
    assertNoReservation();
  }

  @Test
  void aFailedAttemptsReservationIsFinishedIntoItsSuccessorsFinishedContainers() throws Exception {
    hold();
    ContainerId reservedId = node().getReservedContainer().getContainerId();
    nm.nodeHeartbeat(am.getApplicationAttemptId(), 1,
        org.apache.hadoop.yarn.api.records.ContainerState.COMPLETE);
    until(() -> app.getCurrentAppAttempt().getAppAttemptId() != am.getApplicationAttemptId()
        && node().getReservedContainer() == null, "a new attempt, the old one's hold gone");
    assertNoReservation();
    RMAppAttempt next = app.getCurrentAppAttempt();
    until(() -> {
      for (ContainerStatus s : next.getJustFinishedContainers()) {
        if (s.getContainerId().equals(reservedId)) {
          return true;
        }
      }
      return false;
    }, "the reservation among the new attempt's finished containers");
  }
}

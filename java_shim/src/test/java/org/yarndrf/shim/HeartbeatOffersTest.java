package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.yarndrf.shim.Waits.until;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * By default a node is offered to the core once per NodeManager heartbeat, as CapacityScheduler
 * and FairScheduler decide for a node at its heartbeat: an AM is not placed on a node that has not
 * heartbeated since it registered, and an ask made after a node's heartbeat waits for the next one
 * however often the loop calls the core meanwhile (Hadoop's own RM tests rely on both:
 * java_shim/HADOOP_TESTS.md).
 */
class HeartbeatOffersTest {
  private static final String NODE = "127.0.0.1:1234";
  private FakeCore core;
  private MockRM rm;
  private MockNM nm;

  @BeforeEach
  void start() throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setBoolean(ShimConf.OFFER_BETWEEN_HEARTBEATS, false);
    // While asks wait the loop calls the core every 20 ms: calls that must offer no node.
    conf.setLong(ShimConf.RECHECK_MS, 20);
    core = new FakeCore();
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
    nm = rm.registerNode(NODE, 8192, 8);
  }

  @AfterEach
  void stop() {
    rm.stop();
  }

  @Test
  void anAmIsNotPlacedOnANodeThatHasNotHeartbeatedAndItsFirstHeartbeatPlacesIt() throws Exception {
    RMApp app = submit();
    RMAppAttempt attempt = app.getCurrentAppAttempt();
    rm.waitForState(attempt.getAppAttemptId(), RMAppAttemptState.SCHEDULED);
    int told = callsSoFar();
    until(() -> callsSoFar() >= told + 3
        || attempt.getAppAttemptState() != RMAppAttemptState.SCHEDULED,
        "three calls after the AM's ask");
    assertEquals(RMAppAttemptState.SCHEDULED, attempt.getAppAttemptState());
    assertEquals(0, offersOf(NODE), "no call offered the node");

    nm.nodeHeartbeat(true);
    rm.waitForState(attempt.getAppAttemptId(), RMAppAttemptState.ALLOCATED);
    assertEquals(1, offersOf(NODE), "the heartbeat's call offered it");
  }

  @Test
  void anAskMadeAfterTheNodesHeartbeatWaitsForItsNextHeartbeat() throws Exception {
    RMApp app = submit();
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    int offered = offersOf(NODE);
    List<ContainerId> none = new ArrayList<>();
    List<Container> got = new ArrayList<>(am.allocate("*", 1024, 2, none).getAllocatedContainers());
    int asked = callsSoFar();
    until(() -> pull(am, got) > 0 || callsSoFar() >= asked + 3, "three calls after the ask");
    assertEquals(0, got.size(), "nothing placed before the node's next heartbeat");
    assertEquals(offered, offersOf(NODE), "no call offered the node since its last heartbeat");

    nm.nodeHeartbeat(true);
    until(() -> pull(am, got) == 2, "both tasks placed after the heartbeat");
    assertEquals(offered + 1, offersOf(NODE), "one offer for one heartbeat");
  }

  /**
   * The node heartbeats while a call is out, and the AM asks after that heartbeat: the next call
   * offers the node (it is due) but not for that ask, which waits for the node's next heartbeat
   * as on CapacityScheduler (Hadoop's TestAMRestart.testNMTokensRebindOnAMRestart).
   */
  @Test
  void anAskMadeAfterAHeartbeatNoCallHasLookedAtYetWaitsForTheNextHeartbeat() throws Exception {
    RMApp app = submit();
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    List<ContainerId> none = new ArrayList<>();
    List<Container> got = new ArrayList<>();
    core.delayMs = 1000;
    int before = callsSoFar();
    am.allocate("*", 8192, 1, none);  // fits no node: it keeps the node due at every heartbeat
    until(() -> callsSoFar() > before, "a call out for a second");
    core.delayMs = 0;
    long beats = scheduler().nodeOffers.now();
    nm.nodeHeartbeat(true);  // due, but the call out has not looked at it
    // The RM hands the heartbeat to the scheduler on its event thread: the ask must come after it.
    until(() -> scheduler().nodeOffers.now() > beats, "the scheduler to take the heartbeat");
    am.allocate("*", 1024, 1, none);
    int asked = callsSoFar();
    until(() -> pull(am, got) > 0 || callsSoFar() >= asked + 3, "three calls after the ask");
    assertEquals(0, got.size(), "nothing placed before the node's next heartbeat");

    nm.nodeHeartbeat(true);
    until(() -> pull(am, got) == 1, "the task placed after the heartbeat");
  }

  /** Adds the containers the AM is given now to `got`; returns how many it holds. */
  private static int pull(MockAM am, List<Container> got) {
    try {
      got.addAll(am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<ContainerId>())
          .getAllocatedContainers());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return got.size();
  }

  /**
   * A full node's heartbeats wake the loop without bringing a call; the recheck must still call the
   * core while an ask waits (a starved queue's preemption round rides on those calls: without them
   * the demo's late queue never got its AM).
   */
  @Test
  void heartbeatsOfAFullNodeDoNotPutOffTheRecheckWhileAnAskWaits() throws Exception {
    RMApp app = submit();
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    List<Container> got = new ArrayList<>();
    am.allocate("*", 1024, 8, new ArrayList<ContainerId>());  // seven fit beside the AM
    nm.nodeHeartbeat(true);
    until(() -> pull(am, got) == 7, "the node full");
    int before = callsSoFar();
    long end = System.nanoTime() + 2_000_000_000L;  // 100 rechecks of 20 ms
    while (System.nanoTime() < end) {
      nm.nodeHeartbeat(true);  // every 5 ms: always sooner than the recheck
      Thread.sleep(5);
    }
    int calls = callsSoFar() - before;
    assertTrue(calls >= 5, calls + " calls in 2 s of heartbeats with an ask waiting (recheck 20 ms)");
  }

  private RMApp submit() throws Exception {
    return AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
        .withUser("alice").withQueue("a"));
  }

  private YarnDrfScheduler scheduler() {
    return (YarnDrfScheduler) rm.getResourceScheduler();
  }

  private int callsSoFar() {
    return core.requestsOf(RequestValues.Schedule.class).size();
  }

  /** How many schedule calls so far listed the node. */
  private int offersOf(String node) {
    int n = 0;
    for (RequestValues.Schedule s : core.requestsOf(RequestValues.Schedule.class)) {
      for (RequestValues.NodeRow row : s.nodes) {
        if (row.node.equals(node)) {
          n++;
        }
      }
    }
    return n;
  }

}

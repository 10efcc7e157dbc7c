package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.MoveApplicationAcrossQueuesRequest;
import org.apache.hadoop.yarn.api.protocolrecords.UpdateApplicationPriorityRequest;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceBlacklistRequest;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An app's controls through the shim in an in-process ResourceManager, the core faked: the AM ask
 * named as one, an AM held back with its reason in the app's diagnostics, the core's headroom in
 * the AM's allocate response, the AM's blacklist sent to the core by node (and a new attempt's,
 * empty or transferred, after it), and application
 * priority (capped at the cluster's max) at submission and by -updatePriority, and moves the core
 * accepts (usage and all) or refuses (its reason to the caller).
 */
class ControlsTest {
  private static final String WHY = "AM share of root.a reached: 1024 of 1024 MiB (max-am-share 0.5)";
  private MockRM rm;
  private FakeCore core;
  private MockNM nm;

  @BeforeEach
  void start() throws Exception {
    core = new FakeCore();
    YarnConfiguration conf = new YarnConfiguration();
    conf.setInt(YarnConfiguration.MAX_CLUSTER_LEVEL_APPLICATION_PRIORITY, 5);
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
    nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
  }

  @AfterEach
  void stop() {
    rm.stop();
  }

  private RMApp submit() throws Exception {
    return AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
        .withUser("alice").withQueue("a"));
  }

  private void heartbeatUntil(Callable<Boolean> done) throws Exception {
    for (int i = 0; i < 200 && !done.call(); i++) {
      nm.nodeHeartbeat(true);
      Thread.sleep(25);
    }
    assertTrue(done.call(), () -> "condition not reached; " + state());
  }

  private String state() {
    StringBuilder sb = new StringBuilder();
    for (RMApp a : rm.getRMContext().getRMApps().values()) {
      sb.append(a.getApplicationId()).append(" diag=[").append(a.getDiagnostics()).append("] attempt=")
          .append(a.getCurrentAppAttempt() == null ? null : a.getCurrentAppAttempt().getDiagnostics());
    }
    for (RequestValues.Schedule s : core.requestsOf(RequestValues.Schedule.class)) {
      for (RequestValues.AskRow r : s.asks) {
        sb.append(" ask ").append(r.id).append(" p").append(r.priority).append(" ").append(r.location);
      }
      sb.append(" am=").append(s.amAsks);
    }
    return sb.toString();
  }

  @Test
  void theAmAskIsSentAsOneAndAnAmHeldBackSaysWhyInTheAppsDiagnosticsUntilItStarts()
      throws Exception {
    core.amWaits = WHY;
    RMApp app = submit();
    heartbeatUntil(() -> app.getDiagnostics().toString().contains(WHY));
    List<Long> named = new ArrayList<>();
    List<RequestValues.AskRow> amRows = new ArrayList<>();
    for (RequestValues.Schedule s : core.requestsOf(RequestValues.Schedule.class)) {
      named.addAll(s.amAsks);
      for (RequestValues.AskRow a : s.asks) {
        if (s.amAsks.contains(a.id)) {
          amRows.add(a);
        }
      }
    }
    assertFalse(amRows.isEmpty(), "the AM ask is named in am_asks");
    for (RequestValues.AskRow a : amRows) {
      assertEquals(0, a.priority);
      assertEquals(1024, a.amounts[0]);
    }
    assertEquals(null, app.getCurrentAppAttempt().getMasterContainer());
    core.amWaits = null;
    heartbeatUntil(() -> app.getCurrentAppAttempt().getMasterContainer() != null);
    assertFalse(app.getDiagnostics().toString().contains(WHY), app.getDiagnostics().toString());
  }

  @Test
  void theCoresHeadroomIsWhatTheAmIsToldInItsAllocateResponse() throws Exception {
    RMApp app = submit();
    MockAM am = AsyncApps.launch(rm, app);
    core.headroom = Collections.singletonMap(app.getApplicationId().toString(),
        new long[] {2048, 3});
    am.allocate("*", 1024, 1, new ArrayList<>());  // a change: the loop calls the core
    heartbeatUntil(() -> Resource.newInstance(2048, 3).equals(
        am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<>()).getAvailableResources()));
  }

  @Test
  void anAmsBlacklistReachesTheCoreAsTheNodesItNamesAndRacksAsTheyAre() throws Exception {
    RMApp app = submit();
    MockAM am = AsyncApps.launch(rm, app);
    AllocateRequest req = AllocateRequest.newInstance(0, 0f, new ArrayList<>(), new ArrayList<>(),
        ResourceBlacklistRequest.newInstance(java.util.Arrays.asList("127.0.0.1", "/rack9"),
            new ArrayList<>()));
    am.allocate(req);
    heartbeatUntil(() -> !core.deltasOf("blacklist").isEmpty());
    RequestValues.Delta d = core.deltasOf("blacklist").get(0);
    assertEquals(app.getApplicationId().toString(), d.app.app);
    assertEquals(java.util.Arrays.asList("/rack9", "127.0.0.1:1234"), d.places);
    am.allocate(AllocateRequest.newInstance(0, 0f, new ArrayList<>(), new ArrayList<>(),
        ResourceBlacklistRequest.newInstance(new ArrayList<>(),
            Collections.singletonList("127.0.0.1"))));
    heartbeatUntil(() -> core.deltasOf("blacklist").size() == 2);
    assertEquals(Collections.singletonList("/rack9"), core.deltasOf("blacklist").get(1).places);
  }

  /**
   * Blacklists 127.0.0.1 from the app's first attempt, fails its AM and returns the deltas about
   * the app the core got from then on: the second attempt's attempt_added and what follows.
   */
  private List<RequestValues.Delta> blacklistThenFailTheAm(RMApp app) throws Exception {
    MockAM am = AsyncApps.launch(rm, app);
    am.allocate(AllocateRequest.newInstance(0, 0f, new ArrayList<>(), new ArrayList<>(),
        ResourceBlacklistRequest.newInstance(Collections.singletonList("127.0.0.1"),
            new ArrayList<>())));
    heartbeatUntil(() -> core.deltasOf("blacklist").size() == 1);
    int before = core.deltasOf("attempt_added", "blacklist").size();
    nm.nodeHeartbeat(am.getApplicationAttemptId(), 1, ContainerState.COMPLETE);
    heartbeatUntil(() -> core.deltasOf("blacklist").size() == 2);
    assertEquals(2, app.getCurrentAppAttempt().getAppAttemptId().getAttemptId());
    List<RequestValues.Delta> seen = core.deltasOf("attempt_added", "blacklist");
    return seen.subList(before, seen.size());
  }

  @Test
  void aNewAttemptAfterAnAmFailureStartsWithAnEmptyBlacklistAndTheCoreIsToldSo() throws Exception {
    RMApp app = submit();
    List<RequestValues.Delta> after = blacklistThenFailTheAm(app);
    assertEquals(java.util.Arrays.asList("attempt_added", "blacklist"), opsOf(after));
    assertEquals(app.getApplicationId().toString(), after.get(1).app.app);
    assertEquals(Collections.emptyList(), after.get(1).places);
  }

  @Test
  void aNewAttemptThatKeepsItsContainersKeepsTheBlacklistYarnTransfersToIt() throws Exception {
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
        .withUser("alice").withQueue("a").withKeepContainers(true));
    List<RequestValues.Delta> after = blacklistThenFailTheAm(app);
    assertEquals(java.util.Arrays.asList("attempt_added", "blacklist"), opsOf(after));
    assertEquals(Collections.singletonList("127.0.0.1:1234"), after.get(1).places);
  }

  private static List<String> opsOf(List<RequestValues.Delta> deltas) {
    List<String> ops = new ArrayList<>();
    for (RequestValues.Delta d : deltas) {
      ops.add(d.op);
    }
    return ops;
  }

  @Test
  void aPriorityAtSubmissionAndByUpdatePriorityIsCappedAtTheClustersMaxAndSentToTheCore()
      throws Exception {
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
        .withUser("alice").withQueue("a").withAppPriority(Priority.newInstance(3)));
    RequestValues.AppInfo submitted = null;
    for (RequestValues.Schedule s : core.requestsOf(RequestValues.Schedule.class)) {
      for (RequestValues.AppInfo a : s.submissions) {
        submitted = a;
      }
    }
    assertEquals(3, submitted.priority);
    UserGroupInformation alice = UserGroupInformation.createRemoteUser("alice");
    alice.doAs((java.security.PrivilegedExceptionAction<Object>) () ->
        rm.getClientRMService().updateApplicationPriority(UpdateApplicationPriorityRequest
            .newInstance(app.getApplicationId(), Priority.newInstance(9))));
    assertEquals(5, app.getApplicationPriority().getPriority(), "capped at the cluster's max");
    heartbeatUntil(() -> !core.deltasOf("app_priority").isEmpty());
    RequestValues.Delta d = core.deltasOf("app_priority").get(0);
    assertEquals(app.getApplicationId().toString(), d.app.app);
    assertEquals(5, d.priority);
  }

  private void moveAs(String user, RMApp app, String queue) throws Exception {
    UserGroupInformation.createRemoteUser(user).doAs(
        (java.security.PrivilegedExceptionAction<Object>) () ->
            rm.getClientRMService().moveApplicationAcrossQueues(
                MoveApplicationAcrossQueuesRequest.newInstance(app.getApplicationId(), queue)));
  }

  @Test
  void aMoveTheCoreAcceptsTakesTheAppAndItsUsageAlongAndARefusalSaysTheCoresReason()
      throws Exception {
    RMApp app = submit();
    AsyncApps.launch(rm, app);
    heartbeatUntil(() -> share("a") > 0);
    float before = share("a");
    moveAs("alice", app, "b");
    assertEquals("root.b", app.getQueue());
    assertEquals(0f, share("a"), "root.a's usage left with the app");
    assertEquals(before, share("b"), 1e-6f, "root.b has it");
    RequestValues.Move asked = core.requestsOf(RequestValues.Move.class).get(0);
    assertEquals(app.getApplicationId().toString(), asked.app);
    assertEquals("alice", asked.user);
    Exception refused = assertThrows(Exception.class, () -> moveAs("alice", app, "a"));
    StringBuilder said = new StringBuilder();  // doAs wraps the caller's exception
    for (Throwable t = refused; t != null; t = t.getCause()) {
      said.append(t.getMessage()).append('\n');
    }
    assertTrue(said.toString().contains("yarn-drf refused to move " + app.getApplicationId()
        + " to a: fake core: queue a takes no moves"), said.toString());
    assertEquals("root.b", app.getQueue());
  }

  /** The queue's dominant share of the cluster, as `yarn queue -status` shows it. */
  private float share(String queue) throws Exception {
    return rm.getResourceScheduler().getQueueInfo(queue, false, false).getCurrentCapacity();
  }
}

package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.yarndrf.shim.Waits.until;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.NodeAttribute;
import org.apache.hadoop.yarn.api.records.NodeAttributeType;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.security.ContainerTokenIdentifier;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.MemoryRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GPU cards in an in-process ResourceManager (MockRM) with a fake core: a node's cards come from
 * the attribute its NodeManager reports (applied through the RM's NodeAttributesManager, as the
 * RM's ResourceTrackerService does with what a NodeManager sends), go to the core with the node,
 * and the cards the core chose ride on the container, in its token, for the NodeManager.
 */
class NodeCardsTest {
  @TempDir
  Path attributeStore;
  private MockRM rm;
  private FakeCore core;

  @BeforeEach
  void start() {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.FS_NODE_ATTRIBUTE_STORE_ROOT_DIR, attributeStore.toUri().toString());
    core = new FakeCore();
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
  }

  @AfterEach
  void stop() {
    rm.stop();
  }

  /** What a NodeManager with this attribute value reports for its host. */
  private void declare(String host, String cards) throws Exception {
    rm.getRMContext().getNodeAttributesManager().replaceNodeAttributes(NodeAttribute.PREFIX_DISTRIBUTED,
        Collections.singletonMap(host, Collections.singleton(NodeAttribute.newInstance(
            NodeAttribute.PREFIX_DISTRIBUTED, "yarn-drf-gpu-cards", NodeAttributeType.STRING, cards))));
  }


  private List<List<Long>> updatedCards() {
    List<List<Long>> out = new ArrayList<>();
    for (RequestValues.Delta d : core.deltasOf("node_updated")) {
      out.add(d.node.cards);
    }
    return out;
  }

  @Test
  void aNodeHasTheCardsItsNodeManagerDeclaresAndNoneOnceTheyAreNoCardList() throws Exception {
    rm.registerNode("gpuhost:1234", 8192, 8);
    until(() -> core.deltasOf("node_added").size() == 1, "node added");
    assertNull(core.deltasOf("node_added").get(0).node.cards, "no attribute yet: no cards");
    declare("gpuhost", "10240_10240");
    until(() -> updatedCards().contains(Arrays.asList(10240L, 10240L)), "cards sent as node_updated");
    declare("gpuhost", "10240-10240");  // a valid attribute value, but no card list: logged
    until(() -> updatedCards().contains(Collections.<Long>emptyList()), "the cards withdrawn: []");
    declare("otherhost", "81920");
    Thread.sleep(200);
    assertEquals(2, updatedCards().size(), "another host's attributes change nothing here: " + updatedCards());
  }

  @Test
  void theCoresCardsRideOnTheContainerTokenAndACardTheNodeLacksIsRefused() throws Exception {
    declare("localhost", "10240_10240");  // a host that resolves: YARN builds the container token for it
    rm.registerNode("localhost:1234", 8192, 8);
    until(() -> core.deltasOf("node_added").size() == 1, "node added");
    assertEquals(Arrays.asList(10240L, 10240L), core.deltasOf("node_added").get(0).node.cards);
    core.cards = Collections.singletonList(1);
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(1024, rm).withUser("alice").withQueue("a"));
    MockAM am = AsyncApps.launch(rm, app);
    List<Container> got = AsyncApps.collect(am, new ArrayList<>(am.allocate("*", 1024, 1,
        new ArrayList<ContainerId>()).getAllocatedContainers()), 1);
    assertEquals(1, got.size());
    ContainerTokenIdentifier token = BuilderUtils.newContainerTokenIdentifier(got.get(0).getContainerToken());
    assertEquals(Collections.singleton("yarn-drf.gpu-cards=1"), token.getAllcationTags());

    // the started row names the cards of the container's tag (the core ignores them for its own assignments)
    String id = got.get(0).getId().toString();
    until(() -> core.startedRows().stream().anyMatch(r -> r.container.equals(id)), "the container started");
    assertEquals(Collections.singletonList(1), core.startedRows().stream()
        .filter(r -> r.container.equals(id)).findFirst().get().cards);

    core.cards = Collections.singletonList(5);
    am.allocate("*", 1024, 1, new ArrayList<ContainerId>());
    until(() -> !core.deltasOf("assignment_refused").isEmpty(), "the assignment refused");
    assertTrue(core.deltasOf("assignment_refused").get(0).reason
        .contains("has 2 GPU cards; card 5 is not one of them"), core.deltasOf("assignment_refused").get(0).reason);
  }

  @Test
  void aSnapshotAfterABadReplyNamesEachRunningContainersCardsAsItsTagHasThem() throws Exception {
    declare("localhost", "10240_10240");
    rm.registerNode("localhost:1234", 8192, 8);
    until(() -> core.deltasOf("node_added").size() == 1, "node added");
    core.cards = Arrays.asList(0, 1);
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(1024, rm).withUser("alice").withQueue("a"));
    MockAM am = AsyncApps.launch(rm, app);
    core.cards = Collections.singletonList(1);
    List<Container> got = AsyncApps.collect(am, new ArrayList<>(am.allocate("*", 1024, 1,
        new ArrayList<ContainerId>()).getAllocatedContainers()), 1);
    assertEquals(1, got.size());

    long before = core.count("snapshot");
    long calls = core.count("schedule");  // before the ask: the loop may call at once
    core.mode = FakeCore.Mode.MALFORMED;  // the next call's reply is cut short: the shim resyncs
    am.allocate("*", 1024, 2, new ArrayList<ContainerId>());
    until(() -> core.count("schedule") > calls, "a schedule call met the malformed reply");
    core.mode = FakeCore.Mode.OK;
    until(() -> core.count("snapshot") > before, "the resync's snapshot");
    List<RequestValues.Snapshot> snapshots = core.requestsOf(RequestValues.Snapshot.class);
    Map<String, List<Integer>> cards = new HashMap<>();
    for (RequestValues.ContainerRow r : snapshots.get(snapshots.size() - 1).containers) {
      cards.put(r.container, r.cards);
    }
    String amContainer = ContainerId.newContainerId(am.getApplicationAttemptId(), 1).toString();
    assertEquals(Arrays.asList(0, 1), cards.get(amContainer), "the AM's two cards: " + cards);
    assertEquals(Collections.singletonList(1), cards.get(got.get(0).getId().toString()), "the task's card: " + cards);
  }

  @Test
  void aContainerARestartedRmRecoversKeepsItsTagsCardsOnItsStartedRow() throws Exception {
    rm.stop();
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.FS_NODE_ATTRIBUTE_STORE_ROOT_DIR, attributeStore.toUri().toString());
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, MemoryRMStateStore.class.getName());
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, core);
    declare("localhost", "10240_10240");
    MockNM nm = rm.registerNode("localhost:1234", 8192, 8);
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(1024, rm).withUser("alice").withQueue("a"));
    MockAM am = AsyncApps.launch(rm, app);

    // The restarted RM learns the running containers from the NodeManager's report, tags included
    // (the NodeManager reads them from the container token).
    FakeCore restartedCore = new FakeCore();
    MockRM restarted = new MockRM(conf, rm.getRMStateStore());
    ((YarnDrfScheduler) restarted.getResourceScheduler()).setCoreChannel(restartedCore);
    restarted.start();
    try {
      nm.setResourceTrackerService(restarted.getResourceTrackerService());
      ContainerId amId = ContainerId.newContainerId(am.getApplicationAttemptId(), 1);
      ContainerId taskId = ContainerId.newContainerId(am.getApplicationAttemptId(), 2);
      NMContainerStatus amStatus = NMContainerStatus.newInstance(amId, 0, ContainerState.RUNNING,
          Resource.newInstance(1024, 1), "", 0, Priority.newInstance(0), 0);
      NMContainerStatus task = NMContainerStatus.newInstance(taskId, 0, ContainerState.RUNNING,
          Resource.newInstance(1024, 1), "", 0, Priority.newInstance(1), 0);
      task.setAllocationTags(Collections.singleton("yarn-drf.gpu-cards=1"));
      nm.registerNode(Arrays.asList(amStatus, task), null);
      until(() -> restartedCore.startedRows().size() == 2, "both containers recovered: "
          + restartedCore.startedRows().size());
      Map<String, List<Integer>> cards = new HashMap<>();
      for (RequestValues.ContainerRow r : restartedCore.startedRows()) {
        assertNull(r.assignmentId, "recovered, not the core's");
        cards.put(r.container, r.cards);
      }
      assertEquals(Collections.singletonList(1), cards.get(taskId.toString()), "the tag's card: " + cards);
      assertNull(cards.get(amId.toString()), "no tag, no cards: " + cards);
    } finally {
      restarted.stop();
    }
  }
}

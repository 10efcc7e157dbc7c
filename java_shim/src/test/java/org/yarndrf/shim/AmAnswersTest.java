package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerUpdateType;
import org.apache.hadoop.yarn.api.records.ExecutionTypeRequest;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.RejectedSchedulingRequest;
import org.apache.hadoop.yarn.api.records.RejectionReason;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.ResourceSizing;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.api.records.UpdateContainerError;
import org.apache.hadoop.yarn.api.records.UpdateContainerRequest;
import org.apache.hadoop.yarn.api.resource.PlacementConstraints;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every part of an AM's allocate call is answered in an in-process ResourceManager (MockRM, fake
 * core), through YARN's own ApplicationMasterService: what yarn-drf does not serve (scheduling
 * requests, container updates) comes back rejected in the response, never dropped.
 */
class AmAnswersTest {
  private MockRM rm;
  private MockNM nm;

  @BeforeEach
  void start() throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    ResourceUtils.resetResourceTypes(conf);
    conf.set(YarnConfiguration.RM_PLACEMENT_CONSTRAINTS_HANDLER,
        YarnConfiguration.SCHEDULER_RM_PLACEMENT_CONSTRAINTS_HANDLER);
    rm = FakeCore.startRm(YarnDrfScheduler.class, conf, new FakeCore());
    nm = rm.registerNode("localhost:1", Resource.newInstance(8192, 8));
  }

  @AfterEach
  void stop() {
    if (rm != null) {
      rm.stop();
    }
    ResourceUtils.resetResourceTypes(new Configuration());
  }

  private MockAM runningAm() throws Exception {
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithResource(Resource.newInstance(1024, 1), rm).withUser("alice").withQueue("a"));
    return AsyncApps.launch(rm, app);
  }

  private static SchedulingRequest antiAffine(long id) {
    return SchedulingRequest.newBuilder().allocationRequestId(id)
        .priority(Priority.newInstance(1))
        .executionType(ExecutionTypeRequest.newInstance())
        .allocationTags(Collections.singleton("web"))
        .resourceSizing(ResourceSizing.newInstance(2, Resource.newInstance(1024, 1)))
        .placementConstraintExpression(PlacementConstraints.build(PlacementConstraints.targetNotIn(
            PlacementConstraints.NODE, PlacementConstraints.PlacementTargets.allocationTag("web"))))
        .build();
  }

  @Test
  void schedulingRequestsAreRejectedWhileTheAsksOfTheSameCallAreServed() throws Exception {
    MockAM am = runningAm();
    SchedulingRequest constrained = antiAffine(7);
    AllocateResponse response = am.allocate(AllocateRequest.newBuilder()
        .askList(Collections.singletonList(ResourceRequest.newInstance(Priority.newInstance(0), "*",
            Resource.newInstance(1024, 1), 1)))
        .schedulingRequests(Collections.singletonList(constrained)).build());
    List<RejectedSchedulingRequest> rejected = response.getRejectedSchedulingRequests();
    assertEquals(1, rejected.size(), rejected.toString());
    assertEquals(RejectionReason.COULD_NOT_PLACE_ON_NODE, rejected.get(0).getReason());
    assertEquals(7, rejected.get(0).getRequest().getAllocationRequestId());
    List<Container> got =
        AsyncApps.collect(am, new ArrayList<>(response.getAllocatedContainers()), 1, nm);
    assertEquals(1, got.size(), "the ordinary ask of the same call is served");
  }

  @Test
  void containerUpdatesAreRefusedWithTheReason() throws Exception {
    MockAM am = runningAm();
    am.allocate(Collections.singletonList(ResourceRequest.newInstance(Priority.newInstance(0), "*",
        Resource.newInstance(1024, 1), 2)), new ArrayList<ContainerId>());
    List<Container> got = AsyncApps.collect(am, new ArrayList<>(), 2, nm);
    assertEquals(2, got.size());
    List<UpdateContainerRequest> updates = new ArrayList<>();
    updates.add(UpdateContainerRequest.newInstance(got.get(0).getVersion(), got.get(0).getId(),
        ContainerUpdateType.INCREASE_RESOURCE, Resource.newInstance(2048, 1), null));
    updates.add(UpdateContainerRequest.newInstance(got.get(1).getVersion(), got.get(1).getId(),
        ContainerUpdateType.DECREASE_RESOURCE, Resource.newInstance(512, 1), null));
    AllocateResponse response = am.allocate(AllocateRequest.newBuilder()
        .askList(new ArrayList<>()).updateRequests(updates).build());
    List<UpdateContainerError> errors = response.getUpdateErrors();
    assertEquals(2, errors.size(), errors.toString());
    List<ContainerId> named = new ArrayList<>();
    for (UpdateContainerError e : errors) {
      assertEquals(RequestRefusals.UPDATE_REFUSED, e.getReason());
      named.add(e.getUpdateContainerRequest().getContainerId());
    }
    assertTrue(named.contains(got.get(0).getId()) && named.contains(got.get(1).getId()),
        named.toString());
    assertTrue(response.getUpdatedContainers().isEmpty());
    Resource used = rm.getResourceScheduler().getSchedulerNode(nm.getNodeId()).getAllocatedResource();
    assertNotNull(used);
    assertEquals(3 * 1024, used.getMemorySize(), "no container changed size");
  }
}

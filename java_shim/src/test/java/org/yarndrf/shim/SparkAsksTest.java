package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.GetNewApplicationRequest;
import org.apache.hadoop.yarn.api.protocolrecords.SubmitApplicationRequest;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceBlacklistRequest;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.impl.pb.ApplicationSubmissionContextPBImpl;
import org.apache.hadoop.yarn.api.records.impl.pb.ResourceRequestPBImpl;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.util.Records;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What Spark's YARN client and ApplicationMaster send, as the shim reads it inside an in-process
 * ResourceManager (MockRM, fake core): custom amounts without a unit, and exclusions by host
 * name on a cluster of several NodeManagers per host. Requests are passed through their protobuf
 * form, as they arrive over RPC.
 */
class SparkAsksTest {
  private static final String GPU = "gpu-mem";
  private static final String H1 = "localhost";
  private static final String H2 = "127.0.0.1";
  private MockRM rm;
  private FakeCore core;
  private MockNM h1a;
  private MockNM h1b;
  private MockNM h2;

  @BeforeEach
  void start() throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    conf.set(YarnConfiguration.RESOURCE_TYPES + "." + GPU + ".units", "Mi");
    ResourceUtils.resetResourceTypes(conf);
    conf.set(YarnConfiguration.RM_SCHEDULER, YarnDrfScheduler.class.getName());
    conf.setBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME, true);
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 0);
    conf.setBoolean(ShimConf.OFFER_BETWEEN_HEARTBEATS, true);  // AsyncApps launches its AMs
    rm = new MockRM(conf);
    core = new FakeCore();
    ((YarnDrfScheduler) rm.getResourceScheduler()).setCoreChannel(core);
    rm.start();
    // Two hosts (names that resolve, as container tokens need): two NodeManagers on the first.
    h1a = rm.registerNode(H1 + ":1", resource(8192, 8, 0));
    h1b = rm.registerNode(H1 + ":2", resource(8192, 8, 0));
    h2 = rm.registerNode(H2 + ":1", resource(8192, 8, 8192));
  }

  @AfterEach
  void stop() {
    if (rm != null) {
      rm.stop();
    }
    ResourceUtils.resetResourceTypes(new Configuration());
  }

  private static Resource resource(long memory, int vcores, long gpuMiB) {
    Resource r = record(memory, vcores);
    r.setResourceValue(GPU, gpuMiB);
    return r;
  }

  /** A resource with an amount of gpu-mem whose unit is the empty string, as Spark sends it. */
  private static Resource unitless(long memory, int vcores, long gpu) {
    Resource r = record(memory, vcores);
    r.setResourceInformation(GPU, ResourceInformation.newInstance(GPU, "", gpu));
    return r;
  }

  /** A Resource of the protobuf-backed kind a client sends. */
  private static Resource record(long memory, int vcores) {
    Resource r = Records.newRecord(Resource.class);
    r.setMemorySize(memory);
    r.setVirtualCores(vcores);
    return r;
  }

  /** The record as the RM parses it from the wire. */
  private static ResourceRequest received(ResourceRequest sent) {
    return new ResourceRequestPBImpl(((ResourceRequestPBImpl) sent).getProto());
  }

  private RMApp submit(Resource am) throws Exception {
    return AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithResource(am, rm)
        .withUser("alice").withQueue("a"));
  }

  @Test
  void yarnItselfReadsAnAmountWithoutAUnitAsBytesOfAMebibyteType() {
    // The behaviour corrected here: 4096 with no unit is 4096 / 2^20 MiB = 0 after parsing.
    ResourceRequest rr = received(ResourceRequest.newInstance(Priority.newInstance(1), "*",
        unitless(1024, 1, 4096), 1));
    assertEquals(0L, rr.getCapability().getResourceValue(GPU));
  }

  @Test
  void anExecutorAskOfGpuMemoryWithoutAUnitGetsThatManyMebibytes() throws Exception {
    RMApp app = submit(resource(1024, 1, 0));
    MockAM am = AsyncApps.launch(rm, app);
    ResourceRequest ask = received(ResourceRequest.newInstance(Priority.newInstance(1), "*",
        unitless(1024, 1, 4096), 1));
    am.allocate(Collections.singletonList(ask), new ArrayList<ContainerId>());
    List<Container> got = AsyncApps.collect(am, new ArrayList<>(), 1, h1a, h1b, h2);
    assertEquals(1, got.size());
    assertEquals(4096L, got.get(0).getResource().getResourceValue(GPU));
    assertEquals(h2.getNodeId(), got.get(0).getNodeId(), "only the GPU node has gpu-mem");
  }

  @Test
  void amountsWithAUnitAreReadAsYarnReadsThem() throws Exception {
    RMApp app = submit(resource(1024, 1, 0));
    MockAM am = AsyncApps.launch(rm, app);
    Resource inGi = record(1024, 1);
    inGi.setResourceInformation(GPU, ResourceInformation.newInstance(GPU, "Gi", 2));
    ResourceRequest ask = received(ResourceRequest.newInstance(Priority.newInstance(1), "*",
        inGi, 1));
    am.allocate(Collections.singletonList(ask), new ArrayList<ContainerId>());
    List<Container> got = AsyncApps.collect(am, new ArrayList<>(), 1, h1a, h1b, h2);
    assertEquals(1, got.size());
    assertEquals(2048L, got.get(0).getResource().getResourceValue(GPU));
  }

  @Test
  void anAmResourceWithGpuMemoryWithoutAUnitGetsThatManyMebibytes() throws Exception {
    // As Spark's client submits: the AM resource in the submission context, no AM requests.
    ApplicationId id = rm.getClientRMService()
        .getNewApplication(Records.newRecord(GetNewApplicationRequest.class)).getApplicationId();
    ApplicationSubmissionContext sent = Records.newRecord(ApplicationSubmissionContext.class);
    sent.setApplicationId(id);
    sent.setApplicationName("spark");
    sent.setQueue("a");
    sent.setResource(unitless(1024, 1, 2048));
    sent.setAMContainerSpec(Records.newRecord(ContainerLaunchContext.class));
    SubmitApplicationRequest request = SubmitApplicationRequest.newInstance(
        new ApplicationSubmissionContextPBImpl(((ApplicationSubmissionContextPBImpl) sent).getProto()));
    UserGroupInformation.createRemoteUser("alice").doAs(
        (PrivilegedExceptionAction<Object>) () -> rm.getClientRMService().submitApplication(request));
    RMApp app = rm.getRMContext().getRMApps().get(id);
    rm.waitForState(id, RMAppState.ACCEPTED);
    AsyncApps.launch(rm, app);
    Resource amContainer = app.getCurrentAppAttempt().getMasterContainer().getResource();
    assertEquals(2048L, amContainer.getResourceValue(GPU));
  }

  @Test
  void anExclusionByHostNameExcludesEveryNodeManagerOfThatHost() throws Exception {
    RMApp app = submit(resource(1024, 1, 0));
    MockAM am = AsyncApps.launch(rm, app);
    // Spark names the host alone; the node names here are host:port. The asks and the exclusion
    // in one call: the scheduling loop may decide between two calls.
    List<Container> got = new ArrayList<>(am.allocate(AllocateRequest.newInstance(0, 0F,
        Collections.singletonList(ResourceRequest.newInstance(Priority.newInstance(0), "*",
            resource(1024, 1, 0), 3)), new ArrayList<ContainerId>(),
        ResourceBlacklistRequest.newInstance(Collections.singletonList(H1),
            new ArrayList<String>()))).getAllocatedContainers());
    AsyncApps.collect(am, got, 3, h1a, h1b, h2);
    assertEquals(3, got.size());
    for (Container c : got) {
      assertEquals(h2.getNodeId(), c.getNodeId(), c.toString());
    }
    List<String> refusedOn = new ArrayList<>();
    for (RequestValues.Delta r : core.deltasOf("assignment_refused")) {
      if (r.reason.contains("blacklisted")) {
        refusedOn.add(r.reason);
      }
    }
    for (MockNM nm : new MockNM[] {h1a, h1b}) {
      assertTrue(refusedOn.stream().anyMatch(s -> s.contains(nm.getNodeId().toString())),
          refusedOn.toString());
    }
    assertFalse(refusedOn.stream().anyMatch(s -> s.contains(h2.getNodeId().toString())),
        refusedOn.toString());
  }
}

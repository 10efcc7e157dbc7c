package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A queue's max-container in a ResourceManager running the real core: YARN's own checks refuse an
 * ask above it, at submission and in an allocate call, with the reason; an AM a placement rule
 * sends to a queue it does not fit is rejected, saying why.
 */
class MaxContainerTest {
  static final String QUEUES = "resources: [memory-mb, vcores]\n"
      + "placement:\n  - rule: specified\n  - rule: default\n    queue: root.small\n"
      + "queues:\n  root:\n    children:\n"
      + "      small:\n        max-container: {memory-mb: 1024, vcores: 1}\n"
      + "      big:\n        max-container: {memory-mb: 65536}\n"
      + "      plain: {}\n";

  @TempDir
  static Path tmp;
  private static MockRM rm;

  /** One RM for the class: each test submits apps of its own. */
  @BeforeAll
  static void start() throws Exception {
    RealCore core = new RealCore(tmp);
    core.write("queues.yaml", QUEUES);
    YarnConfiguration conf = core.rmConf(0);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, 8192);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, 4);
    DefaultMetricsSystem.setMiniClusterMode(true);  // as FakeCore.startRm
    rm = new MockRM(conf);
    rm.start();
    rm.registerNode("localhost:1", Resource.newInstance(16384, 8));
  }

  @AfterAll
  static void stop() {
    if (rm != null) {
      rm.stop();
    }
  }

  private static RMApp submit(String queue, int amMemory) throws Exception {
    return MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder
        .createWithResource(Resource.newInstance(amMemory, 1), rm).withUser("alice")
        .withQueue(queue).withWaitForAppAcceptedState(false).build());
  }

  @Test
  void eachQueueReportsItsLargestContainerWithinYarnsMaximum() {
    ResourceScheduler s = rm.getResourceScheduler();
    assertEquals(Resource.newInstance(1024, 1), s.getMaximumResourceCapability("root.small"));
    assertEquals(Resource.newInstance(1024, 1), s.getMaximumResourceCapability("small"));
    // Above YARN's maximum allocation: clamped to it.
    assertEquals(Resource.newInstance(8192, 4), s.getMaximumResourceCapability("root.big"));
    assertEquals(Resource.newInstance(8192, 4), s.getMaximumResourceCapability("root.plain"));
    assertEquals(Resource.newInstance(8192, 4), s.getMaximumResourceCapability("no-such-queue"));
  }

  @Test
  void anAmAboveItsQueuesMaxContainerIsRefusedAtSubmission() throws Exception {
    Throwable e = assertThrows(Exception.class, () -> submit("small", 2048));
    while (e.getCause() != null) {  // MockRM submits as the user: the refusal comes wrapped
      e = e.getCause();
    }
    assertTrue(e instanceof InvalidResourceRequestException, e.toString());
    assertTrue(e.getMessage().contains("memory-mb") && e.getMessage().contains("1024"),
        e.getMessage());
    RMApp fits = submit("small", 1024);
    rm.waitForState(fits.getApplicationId(), RMAppState.ACCEPTED);
  }

  @Test
  void anAskAboveItsQueuesMaxContainerIsRefusedToTheAm() throws Exception {
    RMApp app = submit("small", 1024);
    rm.waitForState(app.getApplicationId(), RMAppState.ACCEPTED);
    MockAM am = AsyncApps.launch(rm, app);
    InvalidResourceRequestException e = assertThrows(InvalidResourceRequestException.class,
        () -> am.allocate(Collections.singletonList(ResourceRequest.newInstance(
            Priority.newInstance(0), "*", Resource.newInstance(1024, 2), 1)),
            new ArrayList<ContainerId>()));
    assertTrue(e.getMessage().contains("vcores"), e.getMessage());
  }

  @Test
  void anAmAPlacementRuleSendsToAQueueItDoesNotFitIsRejectedWithTheReason() throws Exception {
    // YARN checks the AM against the queue named; no such queue, so against its own maximum.
    RMApp app = submit("no-such-queue", 2048);
    rm.waitForState(app.getApplicationId(), RMAppState.FAILED);
    String diagnostics = app.getDiagnostics().toString();
    assertTrue(diagnostics.contains("root.small") && diagnostics.contains("max-container"),
        diagnostics);
  }
}

package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.MemoryRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A ResourceManager recovers its apps before it starts its scheduler: an app whose attempt had not
 * got its AM container gets a new attempt then, and YARN asks the scheduler for its AM (allocate)
 * before yarn-drf's scheduling loop exists. The attempt must still be scheduled and get its AM
 * (Hadoop's TestRMRestart#testRMRestartFailAppAttempt saw it stuck in SUBMITTED).
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

  @Test
  void anAttemptMadeWhileTheRmRecoversIsScheduledAndGetsItsAm() throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, MemoryRMStateStore.class.getName());
    conf.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 3);
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

    restarted = new MockRM(conf, rm.getRMStateStore());
    ((YarnDrfScheduler) restarted.getResourceScheduler()).setCoreChannel(new FakeCore());
    restarted.start();
    restarted.waitForState(app.getApplicationId(), RMAppState.ACCEPTED);
    RMApp recovered = restarted.getRMContext().getRMApps().get(app.getApplicationId());
    ApplicationAttemptId again = recovered.getCurrentAppAttempt().getAppAttemptId();
    assertEquals(second, again, "the recovered app's new attempt has the next number");
    nm.setResourceTrackerService(restarted.getResourceTrackerService());
    nm.registerNode();
    restarted.waitForState(again, RMAppAttemptState.ALLOCATED);
  }
}

package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.yarndrf.shim.Waits.until;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real core over real py4j that stops answering in the middle of a schedule call (SIGSTOP) and
 * comes back while the shim asks again: the shim's first attempt times out, the retry (a new
 * connection) waits for the core, the core applies the call once and answers the retry with its
 * reply, and the shim commits it. No snapshot, nothing allocated twice.
 */
class SlowCoreTest {
  @TempDir
  Path tmp;
  private MockRM rm;

  @AfterEach
  void stop() {
    if (rm != null) {
      rm.stop();
    }
  }

  /** One counter of the shim's bridge counters ("name=N"). */
  private static long counter(YarnDrfScheduler scheduler, String name) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\b" + name + "=(\\d+)")
        .matcher(scheduler.bridgeCounters());
    assertTrue(m.find(), scheduler.bridgeCounters());
    return Long.parseLong(m.group(1));
  }

  private static void signal(int pid, String signal) throws Exception {
    assertEquals(0, new ProcessBuilder("kill", "-" + signal, String.valueOf(pid)).start().waitFor());
  }

  @Test
  void aCoreStoppedDuringACallIsAskedAgainAndItsReplyCommittedOnceWithoutAResync()
      throws Exception {
    RealCore core = new RealCore(tmp);
    YarnConfiguration conf = core.rmConf(0);
    conf.setInt(ShimConf.TIMEOUT_MS, 500);
    // the retries' waits (1 s, 2 s) are capped by the snapshot timeout: keep them whole
    conf.setInt(ShimConf.SNAPSHOT_TIMEOUT_MS, 60_000);
    DefaultMetricsSystem.setMiniClusterMode(true);  // as FakeCore.startRm
    rm = new MockRM(conf);
    rm.start();
    rm.registerNode("127.0.0.1:1", 16384, 16);
    YarnDrfScheduler scheduler = (YarnDrfScheduler) rm.getResourceScheduler();
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithMemory(1024, rm).withUser("alice").withQueue("a"));
    MockAM am = AsyncApps.launch(rm, app);
    until(() -> counter(scheduler, "resyncs") == 1, "the first snapshot");
    int pid = core.liveCores().keySet().iterator().next();
    long failures = counter(scheduler, "failures");

    signal(pid, "STOP");
    List<Container> got;
    try {
      got = new ArrayList<>(am.allocate("*", 512, 4, new ArrayList<ContainerId>())
          .getAllocatedContainers());
      until(() -> counter(scheduler, "timeouts") == 1, "a call to time out");
    } finally {
      signal(pid, "CONT");
    }
    for (int idle = 0; idle < 50 && got.size() < 4; idle++) {
      Thread.sleep(50);
      List<Container> more = am.allocate(new ArrayList<ResourceRequest>(),
          new ArrayList<ContainerId>()).getAllocatedContainers();
      if (!more.isEmpty()) {
        got.addAll(more);
        idle = -1;
      }
    }
    String counters = scheduler.bridgeCounters();
    assertEquals(4, got.size(), counters);
    assertEquals(4, got.stream().map(Container::getId).distinct().count());
    assertEquals(failures, counter(scheduler, "failures"), "no failure: " + counters);
    assertEquals(1, counter(scheduler, "resyncs"), "no resync after the first: " + counters);
    assertTrue(counter(scheduler, "retried") >= 1, counters);
  }
}

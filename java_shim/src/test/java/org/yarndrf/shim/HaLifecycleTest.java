package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ha.HAServiceProtocol.HAServiceState;
import org.apache.hadoop.ha.HAServiceProtocol.RequestSource;
import org.apache.hadoop.ha.HAServiceProtocol.StateChangeRequestInfo;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.RMFatalEventType;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.MemoryRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yarndrf.shim.bridge.CapturedLog;
import org.yarndrf.shim.bridge.LiveProcesses;

/**
 * The scheduler's lifecycle as an HA ResourceManager drives it (issue 27, item 2), modelled on
 * Hadoop's TestRMHA: a MockRM with HA on and manual transitions through its AdminService, as
 * `yarn rmadmin -transitionToActive --forcemanual` makes them, state in a MemoryRMStateStore, and
 * the real core as the RM's child, slow to bind. Hadoop builds a new scheduler at every transition
 * to standby, refreshes it (AdminService.refreshAll: reinitialize) before starting it, and stops it
 * at the next transition to standby; every core started must go with its scheduler.
 */
class HaLifecycleTest {
  private static final StateChangeRequestInfo FORCED =
      new StateChangeRequestInfo(RequestSource.REQUEST_BY_USER_FORCED);
  private final List<MockRM> rms = new ArrayList<>();

  @AfterEach
  void stop() {
    for (MockRM rm : rms) {
      rm.stop();
    }
  }

  /** HA with two RM ids, this RM rm1; manual failover; work-preserving recovery. */
  private static YarnConfiguration haConf() {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, YarnDrfScheduler.class.getName());
    conf.setBoolean(YarnConfiguration.RM_HA_ENABLED, true);
    conf.setBoolean(YarnConfiguration.AUTO_FAILOVER_ENABLED, false);
    conf.set(YarnConfiguration.RM_HA_IDS, "rm1,rm2");
    conf.set(YarnConfiguration.RM_HA_ID, "rm1");
    for (String key : YarnConfiguration.getServiceAddressConfKeys(conf)) {
      conf.set(HAUtil.addSuffix(key, "rm1"), "127.0.0.1:0");
      conf.set(HAUtil.addSuffix(key, "rm2"), "127.0.0.1:0");
    }
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, MemoryRMStateStore.class.getName());
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 0);
    return conf;
  }

  private MockRM started(Configuration conf) {
    MockRM rm = new MockRM(conf);
    rms.add(rm);
    rm.start();
    return rm;
  }

  private static YarnDrfScheduler scheduler(MockRM rm) {
    return (YarnDrfScheduler) rm.getRMContext().getScheduler();
  }

  @Test
  void twentyStandbyActiveCyclesLeaveOneCorePerActiveRmAndNothingOfTheOthers(@TempDir Path tmp)
      throws Exception {
    RealCore core = new RealCore(tmp);
    MockRM rm = started(core.configure(haConf(), 1.0));
    AtomicInteger fatal = new AtomicInteger();
    rm.getRMContext().getDispatcher().register(RMFatalEventType.class,
        event -> fatal.incrementAndGet());
    assertEquals(HAServiceState.STANDBY, rm.getRMContext().getHAServiceState());
    assertTrue(core.liveCores().isEmpty(), "a standby starts no core");
    List<Path> privateDirs = new ArrayList<>();
    for (int cycle = 1; cycle <= 20; cycle++) {
      rm.getRMContext().getRMAdminService().transitionToActive(FORCED);  // refreshAll, then the scheduler's start
      assertEquals(HAServiceState.ACTIVE, rm.getRMContext().getHAServiceState(), "cycle " + cycle);
      YarnDrfScheduler active = scheduler(rm);
      assertEquals(1, core.liveCores().size(), "cycle " + cycle + ": " + core.liveCores());
      Path dir = active.corePrivateDir();
      assertTrue(Files.isDirectory(dir), "cycle " + cycle);
      privateDirs.add(dir);
      assertNotNull(active.dashboardUrl(), "the core answered, so it reported its ports");
      rm.getRMContext().getRMAdminService().transitionToStandby(FORCED);  // the scheduler's stop
      assertEquals(HAServiceState.STANDBY, rm.getRMContext().getHAServiceState());
      assertTrue(core.liveCores().isEmpty(), "cycle " + cycle + ": " + core.liveCores());
      assertFalse(Files.exists(dir), "cycle " + cycle + ": token and port file deleted");
      assertEquals(0, fatal.get(), "no transition failed (RMFatalEvent)");
    }
    assertEquals(20, privateDirs.stream().distinct().count(), "a directory of its own per core");

    rm.getRMContext().getRMAdminService().transitionToActive(FORCED);
    rm.registerNode("127.0.0.1:1234", 8192, 8);
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
        .withUser("alice").withQueue("a"));
    AsyncApps.launch(rm, app);
    assertEquals("root.a", app.getQueue());
    assertEquals(1, core.liveCores().size());
    assertEquals(0, fatal.get());
  }

  @Test
  void aQueueFileNamedBeforeTheStartIsTheOneTheCoreStartsWith(@TempDir Path tmp)
      throws Exception {
    RealCore core = new RealCore(tmp);
    MockRM rm = started(core.configure(haConf(), 0));
    Path other = core.write("other.yaml", RealCore.QUEUES.replace("      b:\n", "      c:\n"));
    Configuration named = new Configuration(false);
    named.set(ShimConf.QUEUES_FILE, other.toString());
    // As a standby's refreshAll would, with a yarn-site.xml that now names another file.
    scheduler(rm).reinitialize(named, rm.getRMContext());
    rm.getRMContext().getRMAdminService().transitionToActive(FORCED);
    assertNotNull(scheduler(rm).getQueueInfo("root.c", false, false));
    assertEquals(1, LiveProcesses.withArgument(other.toString()).size());
  }

  @Test
  void twoRmsWithTheSameConfigurationAndPortZeroRunAtOnceEachWithItsOwnCore(@TempDir Path tmp)
      throws Exception {
    RealCore core = new RealCore(tmp);
    YarnConfiguration conf = core.rmConf(0);
    MockRM first = started(conf);
    MockRM second = started(conf);
    assertEquals(2, core.liveCores().size(), core.liveCores().toString());
    String firstDashboard = scheduler(first).dashboardUrl();
    String secondDashboard = scheduler(second).dashboardUrl();
    assertNotEquals(firstDashboard, secondDashboard);
    for (MockRM rm : rms) {
      rm.registerNode("127.0.0.1:1234", 8192, 8);
      RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
          .withUser("alice").withQueue("b"));
      AsyncApps.launch(rm, app);
      assertEquals(200, status(scheduler(rm).dashboardUrl()), "its own core's dashboard");
    }
  }

  @Test
  void stoppingTheSchedulerEndsItsCoreAndDeletesItsFilesAtOnce(@TempDir Path tmp)
      throws Exception {
    RealCore core = new RealCore(tmp);
    YarnConfiguration conf = core.rmConf(0);
    stopEndsTheCore(scheduler(started(conf)), core);
  }

  @Test
  void aCoreThatIgnoresSigtermAndNeverAnswersIsKilledByTheStop(@TempDir Path tmp)
      throws Exception {
    RealCore core = new RealCore(tmp);
    Path hung = core.write("hung-serve", "#!/bin/sh\nexec python3 -c 'import signal, time; "
        + "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)' \"$@\"\n");
    hung.toFile().setExecutable(true);
    YarnConfiguration conf = core.rmConf(0);
    conf.set(ShimConf.SERVE_COMMAND, hung.toString());
    conf.setLong(ShimConf.START_TIMEOUT_MS, 500);
    MockRM rm = started(conf);  // the wait runs out: the RM starts without a core
    stopEndsTheCore(scheduler(rm), core);  // killed once SIGTERM's grace is over
  }

  /** Stops the scheduler; its core and private directory (token, port file) go with the stop. */
  private static void stopEndsTheCore(YarnDrfScheduler scheduler, RealCore core)
      throws IOException {
    Path dir = scheduler.corePrivateDir();
    assertEquals(1, core.liveCores().size());
    scheduler.stop();
    assertTrue(core.liveCores().isEmpty(), "no core outlives its scheduler's stop");
    assertFalse(Files.exists(dir), "nor its token and port file");
  }

  @Test
  void untilTheChildListensTheLoopWaitsForItsPortFileWithNoTimerAndCallsNothing(@TempDir Path tmp)
      throws Exception {
    RealCore core = new RealCore(tmp);
    Path silent = core.write("silent-serve", "#!/bin/sh\nexec sleep 600\n");
    silent.toFile().setExecutable(true);
    YarnConfiguration conf = core.rmConf(0);
    conf.set(ShimConf.SERVE_COMMAND, silent.toString());
    conf.setLong(ShimConf.START_TIMEOUT_MS, 200);
    YarnDrfScheduler scheduler = scheduler(started(conf));  // starts without a core, after 200 ms
    SchedulingLoop loop = scheduler.schedulingLoop();
    Waits.until(() -> loop.threadState() == Thread.State.WAITING
        || loop.threadState() == Thread.State.TIMED_WAITING, "the loop waiting");
    // A timed wait here would be a poll or a backoff after calls to a core not listening.
    assertEquals(Thread.State.WAITING, loop.threadState());
    assertTrue(scheduler.bridgeCounters().startsWith("calls=0 failures=0 "),
        scheduler.bridgeCounters());
  }

  @Test
  void theChildIsCalledOnceItsPortFileIsWrittenAndNoCallFailsWhileItStarts(@TempDir Path tmp)
      throws Exception {
    RealCore core = new RealCore(tmp);
    YarnDrfScheduler scheduler = scheduler(started(core.rmConf(0)));
    assertTrue(scheduler.bridgeCounters().matches("calls=\\d+ failures=0 .*"),
        "the snapshot went once the child listened: " + scheduler.bridgeCounters());
  }

  @Test
  void aCoreThatCannotStartEndsTheStartWaitAtOnceWithTheReason(@TempDir Path tmp)
      throws Exception {
    RealCore core = new RealCore(tmp);
    YarnConfiguration conf = core.rmConf(0);
    conf.set(ShimConf.QUEUES_FILE, core.write("bad.yaml", RealCore.QUEUES.replace("weight: 2",
        "weight: -2")).toString());
    try (CapturedLog log = CapturedLog.of(BridgeClient.class)) {
      started(conf);  // the RM starts, without a core (the default wait is 30 s: not waited out)
      assertTrue(log.has("the core service ended, it exited with status 2: its queue file, token "
          + "file or arguments are invalid"), log.lines.toString());
    }
  }

  @Test
  void theRmLogSaysHowLongTheCoreTookToAnswer(@TempDir Path tmp) throws Exception {
    RealCore core = new RealCore(tmp);
    YarnConfiguration conf = core.rmConf(0);
    try (CapturedLog log = CapturedLog.of(BridgeClient.class)) {
      started(conf);
      assertTrue(log.lines.stream().anyMatch(l -> l.matches(
          "yarn-drf: the core answered its first call \\d+ ms after the scheduler started "
          + "\\(bridge port \\d+; child started at \\d+ ms, reported its port at \\d+ ms, "
          + "answered a snapshot sent at \\d+ ms\\)")), log.lines.toString());
    }
  }

  private static int status(String url) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    try {
      return c.getResponseCode();
    } finally {
      c.disconnect();
    }
  }
}

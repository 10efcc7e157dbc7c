package org.yarndrf.shim.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.hadoop.yarn.api.protocolrecords.SubmitApplicationRequest;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.protocolrecords.RegisterNodeManagerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.event.RMAppAttemptRegistrationEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.yarndrf.shim.LoopClock;
import org.yarndrf.shim.SchedulingLoop;
import org.yarndrf.shim.ShimConf;
import org.yarndrf.shim.YarnDrfScheduler;

/**
 * A cluster far larger than SLS can simulate here, through the real shim and the real core, with
 * no SLS: a ResourceManager in this JVM with YarnDrfScheduler, which starts `yarn-drf serve` as
 * its child (py4j, as in production); NODES NodeManagers registered through the RM's own
 * ResourceTrackerService; APPS unmanaged applications submitted through its ClientRMService. Then
 * one thread heartbeats every node once a second (NodeUpdateSchedulerEvent into the scheduler's
 * handle(), what YARN's event thread does for a NodeManager heartbeat: NODES heartbeats a second)
 * while another plays every app's AM once a second: each allocate() keeps ASKS containers asked
 * for and releases what the app got in its previous round, so the cluster never fills. When the
 * scheduler cannot keep up, the threads fall behind and the rates measured show it.
 *
 * Usage: ScaleDriver NODES APPS ASKS WARMUP_S SECONDS SERVE_COMMAND QUEUES_FILE STATUS_PORT
 * [TIMEOUT_MS] (STATUS_PORT: the one SERVE_COMMAND's --status-port names, for the core's own
 * decision time, 0: none; TIMEOUT_MS: yarn-drf.bridge.timeout-ms, default the shim's)
 * Prints one JSON line: heartbeats and allocations per second over SECONDS after WARMUP_S, the
 * time in handle(NODE_UPDATE) (p50/p99), the scheduling thread's answered calls, where all of its
 * time went ({@link LoopClock}: waiting, collect and commit under the scheduler's lock, the calls
 * answered or not, resyncs), the CPU time of the RM's JVM and of the core, and the bridge's
 * counters over the window and the whole run. Every figure is read at the window's two ends.
 */
public final class ScaleDriver {
  private static final Resource NODE = Resources.createResource(16384, 16);
  private static final Resource TASK = Resources.createResource(1024, 1);
  private static final String[] QUEUES = {"cpu", "mem"};

  private ScaleDriver() {
  }

  public static void main(String[] args) throws Exception {
    int nodes = Integer.parseInt(args[0]);
    int apps = Integer.parseInt(args[1]);
    int asks = Integer.parseInt(args[2]);
    long warmupMs = Long.parseLong(args[3]) * 1000;
    long measureMs = Long.parseLong(args[4]) * 1000;
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, YarnDrfScheduler.class.getName());
    conf.set(ShimConf.SERVE_MODE, "child");
    conf.set(ShimConf.SERVE_COMMAND, args[5]);
    conf.set(ShimConf.QUEUES_FILE, args[6]);
    int statusPort = Integer.parseInt(args[7]);
    if (args.length > 8) {
      conf.set(ShimConf.TIMEOUT_MS, args[8]);
    }
    conf.set(YarnConfiguration.RM_HOSTNAME, "127.0.0.1");
    for (String key : new String[] {YarnConfiguration.RM_ADDRESS, YarnConfiguration.RM_SCHEDULER_ADDRESS,
        YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, YarnConfiguration.RM_ADMIN_ADDRESS,
        YarnConfiguration.RM_WEBAPP_ADDRESS}) {
      conf.set(key, "127.0.0.1:0");
    }
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 0);
    conf.setInt(YarnConfiguration.RM_MAX_COMPLETED_APPLICATIONS, 0);
    // driver.py --offer-between-heartbeats: the run compares both ways of offering nodes.
    conf.setBoolean(ShimConf.OFFER_BETWEEN_HEARTBEATS,
        Boolean.getBoolean("yarndrf.offer-between-heartbeats"));
    ResourceManager rm = new ResourceManager();
    rm.init(conf);
    rm.start();
    try {
      YarnDrfScheduler scheduler = (YarnDrfScheduler) rm.getResourceScheduler();
      List<RMNode> rmNodes = register(rm, nodes);
      List<ApplicationAttemptId> attempts = submit(rm, scheduler, apps);
      CallTimes loop = new CallTimes();
      scheduler.schedulingLoop().setObserver(loop);
      Heartbeats hb = new Heartbeats(scheduler, rmNodes);
      Ams ams = new Ams(scheduler, attempts, asks);
      Thread h = new Thread(hb, "driver-heartbeats");
      Thread a = new Thread(ams, "driver-ams");
      h.start();
      a.start();
      Thread.sleep(warmupMs);
      // The window: each figure's start and end are read back to back, the slow ones (an HTTP
      // request, a walk of /proc) outside the loop clock's two reads, which bound the window.
      double decided0 = decisionSeconds(statusPort);
      long[] cpu0 = cpuNanos();
      String bridge0 = scheduler.bridgeCounters();
      long[] parts0 = scheduler.schedulingLoop().clock().read();
      long t0 = System.nanoTime();
      long hb0 = hb.count.get();
      long got0 = ams.allocated.get();
      hb.timing = true;
      loop.reset();
      Thread.sleep(measureMs);
      long hbN = hb.count.get() - hb0;
      long gotN = ams.allocated.get() - got0;
      double s = (System.nanoTime() - t0) / 1e9;
      long[] parts = scheduler.schedulingLoop().clock().read();
      String bridge = scheduler.bridgeCounters();
      long[] cpu = cpuNanos();
      double decided = decisionSeconds(statusPort) - decided0;
      hb.stop = true;
      ams.stop = true;
      h.join();
      a.join();
      long[] handle = hb.times();
      System.out.printf("{\"nodes\":%d,\"apps\":%d,\"asks_per_app\":%d,\"seconds\":%.1f,"
          + "\"heartbeats_per_s\":%.0f,\"allocations_per_s\":%.0f,"
          + "\"handle_p50_us\":%.2f,\"handle_p99_us\":%.2f,\"am_rounds\":%d,"
          + "\"core_decide_ms_per_s\":%.1f,\"rm_cpu_ms_per_s\":%.1f,\"core_cpu_ms_per_s\":%.1f,"
          + "%s,\"loop_ms_per_s\":%s,\"bridge\":\"%s\",\"bridge_whole_run\":\"%s\"}%n",
          nodes, apps, asks, s, hbN / s, gotN / s,
          pct(handle, 50) / 1e3, pct(handle, 99) / 1e3, ams.rounds.get(), decided * 1e3 / s,
          (cpu[0] - cpu0[0]) / 1e6 / s, (cpu[1] - cpu0[1]) / 1e6 / s, loop.json(s), msPerSecond(parts0, parts),
          since(bridge0, bridge), bridge);
    } finally {
      rm.stop();
    }
  }

  private static List<RMNode> register(ResourceManager rm, int n) throws Exception {
    for (int i = 0; i < n; i++) {
      RegisterNodeManagerRequest req = RegisterNodeManagerRequest.newInstance(
          NodeId.newInstance("127.0.0.1", 10_000 + i), 2, NODE, "3.4.1", Collections.emptyList(),
          Collections.emptyList());
      rm.getResourceTrackerService().registerNodeManager(req);
    }
    YarnDrfScheduler s = (YarnDrfScheduler) rm.getResourceScheduler();
    waitFor(() -> s.getNumClusterNodes() == n, "nodes registered");
    return new ArrayList<>(rm.getRMContext().getRMNodes().values());
  }

  private static List<ApplicationAttemptId> submit(ResourceManager rm, YarnDrfScheduler s, int n)
      throws Exception {
    List<ApplicationId> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ApplicationId id = rm.getClientRMService()
          .getNewApplication(org.apache.hadoop.yarn.api.protocolrecords.GetNewApplicationRequest
              .newInstance()).getApplicationId();
      ApplicationSubmissionContext ctx = ApplicationSubmissionContext.newInstance(id, "scale-" + i,
          QUEUES[i % QUEUES.length], Priority.newInstance(0),
          ContainerLaunchContext.newInstance(null, null, null, null, (ByteBuffer) null, null),
          true, false, 1, TASK, "YARN");
      rm.getClientRMService().submitApplication(SubmitApplicationRequest.newInstance(ctx));
      ids.add(id);
    }
    List<ApplicationAttemptId> attempts = new ArrayList<>();
    for (ApplicationId id : ids) {
      waitFor(() -> {
        RMApp app = rm.getRMContext().getRMApps().get(id);
        return app.getCurrentAppAttempt() != null
            && s.getApplicationAttempt(app.getCurrentAppAttempt().getAppAttemptId()) != null;
      }, "attempt of " + id + " added");
      ApplicationAttemptId attempt =
          rm.getRMContext().getRMApps().get(id).getCurrentAppAttempt().getAppAttemptId();
      waitFor(() -> state(rm, attempt) == RMAppAttemptState.LAUNCHED, attempt + " launched");
      // The unmanaged AM registers, as its ApplicationMasterService call would make it (RUNNING).
      rm.getRMContext().getDispatcher().getEventHandler().handle(
          new RMAppAttemptRegistrationEvent(attempt, "127.0.0.1", 0, ""));
      attempts.add(attempt);
    }
    for (ApplicationAttemptId attempt : attempts) {
      waitFor(() -> state(rm, attempt) == RMAppAttemptState.RUNNING, attempt + " running");
    }
    return attempts;
  }

  private static RMAppAttemptState state(ResourceManager rm, ApplicationAttemptId attempt) {
    RMApp app = rm.getRMContext().getRMApps().get(attempt.getApplicationId());
    if (app == null) {
      throw new IllegalStateException(attempt.getApplicationId() + " ended");
    }
    return app.getCurrentAppAttempt().getAppAttemptState();
  }

  private interface Check {
    boolean ok();
  }

  private static void waitFor(Check c, String what) throws InterruptedException {
    long end = System.currentTimeMillis() + 120_000;
    while (!c.ok()) {
      if (System.currentTimeMillis() > end) {
        throw new IllegalStateException("timed out waiting for " + what);
      }
      Thread.sleep(10);
    }
  }

  /** NodeManager heartbeats into the scheduler: every node once a second, in turn. */
  private static final class Heartbeats implements Runnable {
    private final YarnDrfScheduler scheduler;
    private final List<RMNode> nodes;
    final AtomicLong count = new AtomicLong();
    volatile boolean timing;
    volatile boolean stop;
    private long[] times = new long[1 << 20];
    private int n;

    Heartbeats(YarnDrfScheduler scheduler, List<RMNode> nodes) {
      this.scheduler = scheduler;
      this.nodes = nodes;
    }

    @Override
    public void run() {
      long start = System.nanoTime();
      for (long k = 0; !stop; k++) {
        // Each node once a second, as NodeManagers heartbeat: the k-th heartbeat is due at k/N s.
        pace(start + k * 1_000_000_000L / nodes.size());
        NodeUpdateSchedulerEvent e = new NodeUpdateSchedulerEvent(nodes.get((int) (k % nodes.size())));
        long t0 = System.nanoTime();
        scheduler.handle(e);
        long dt = System.nanoTime() - t0;
        count.incrementAndGet();
        if (timing) {
          if (n == times.length) {
            times = Arrays.copyOf(times, 2 * n);
          }
          times[n++] = dt;
        }
      }
    }

    long[] times() {
      return Arrays.copyOf(times, n);
    }
  }

  /** Every app's AM once a second: keep `asks` containers asked for, release what came in the last round. */
  private static final class Ams implements Runnable {
    private final YarnDrfScheduler scheduler;
    private final List<ApplicationAttemptId> attempts;
    private final int asks;
    private final List<List<ContainerId>> held = new ArrayList<>();
    final AtomicLong allocated = new AtomicLong();
    final AtomicLong rounds = new AtomicLong();
    volatile boolean stop;

    Ams(YarnDrfScheduler scheduler, List<ApplicationAttemptId> attempts, int asks) {
      this.scheduler = scheduler;
      this.attempts = attempts;
      this.asks = asks;
      for (int i = 0; i < attempts.size(); i++) {
        held.add(new ArrayList<>());
      }
    }

    @Override
    public void run() {
      long start = System.nanoTime();
      for (long round = 0; !stop; round++) {
        for (int i = 0; i < attempts.size() && !stop; i++) {
          // Each AM once a second, spread over the second, as AMs heartbeat.
          pace(start + round * 1_000_000_000L + i * 1_000_000_000L / attempts.size());
          ResourceRequest ask = ResourceRequest.newInstance(Priority.newInstance(1),
              ResourceRequest.ANY, TASK, asks);
          List<ContainerId> release = held.get(i);
          Allocation got = scheduler.allocate(attempts.get(i), Collections.singletonList(ask),
              Collections.emptyList(), release, null, null, new ContainerUpdates());
          List<ContainerId> now = new ArrayList<>();
          for (Container c : got.getContainers()) {
            now.add(c.getId());
          }
          allocated.addAndGet(now.size());
          held.set(i, now);
        }
        rounds.incrementAndGet();
      }
    }
  }

  /** The scheduling thread's answered calls while measuring: what they covered and their mean length. */
  private static final class CallTimes implements SchedulingLoop.Observer {
    private long calls;
    private long nodes;
    private long assignments;
    private long call;

    @Override
    public synchronized void called(SchedulingLoop.CallRecord c) {
      calls++;
      nodes += c.nodes;
      assignments += c.assignments;
      call += c.callNanos;
    }

    synchronized void reset() {
      calls = nodes = assignments = call = 0;
    }

    synchronized String json(double seconds) {
      return String.format("\"loop_calls_per_s\":%.1f,\"loop_nodes_per_call\":%.0f,"
          + "\"loop_assignments_per_call\":%.1f,\"loop_call_mean_ms\":%.2f", calls / seconds,
          calls == 0 ? 0.0 : (double) nodes / calls, calls == 0 ? 0.0 : (double) assignments / calls,
          calls == 0 ? 0.0 : call / 1e6 / calls);
    }
  }

  /** Waits until System.nanoTime() reaches `due` (at once when behind: the rate is then what the scheduler allows). */
  private static void pace(long due) {
    long wait = due - System.nanoTime();
    if (wait > 20_000) {
      LockSupport.parkNanos(wait);
    }
  }

  /**
   * Milliseconds per second in each part of the scheduling thread between two reads of its clock,
   * per second of the window those reads bound: they sum to 1,000.
   */
  private static String msPerSecond(long[] from, long[] to) {
    double seconds = 0;
    for (int i = 0; i < to.length; i++) {
      seconds += (to[i] - from[i]) / 1e9;
    }
    StringBuilder b = new StringBuilder();
    for (LoopClock.Part p : LoopClock.Part.values()) {
      b.append(b.length() == 0 ? "{" : ",").append(String.format("\"%s\":%.1f",
          p.name().toLowerCase(Locale.ROOT), (to[p.ordinal()] - from[p.ordinal()]) / 1e6 / seconds));
    }
    return b.append("}").toString();
  }

  /** The bridge counters `now` with each count less what it was at `then` (the same text, the window's counts). */
  private static String since(String then, String now) {
    String[] a = then.split(" ");
    String[] b = now.split(" ");
    if (a.length != b.length) {
      return now;
    }
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < b.length; i++) {
      int eq = b[i].indexOf('=');
      String text = b[i];
      if (eq > 0 && a[i].startsWith(b[i].substring(0, eq + 1))) {
        try {
          text = b[i].substring(0, eq + 1)
              + (Long.parseLong(b[i].substring(eq + 1)) - Long.parseLong(a[i].substring(eq + 1)));
        } catch (NumberFormatException notCount) {
          // not a count: as it is now
        }
      }
      out.append(i == 0 ? "" : " ").append(text);
    }
    return out.toString();
  }

  private static double pct(long[] v, double p) {
    if (v.length == 0) {
      return Double.NaN;
    }
    long[] s = v.clone();
    Arrays.sort(s);
    return s[Math.min(s.length - 1, (int) (p / 100 * s.length))];
  }

  /**
   * CPU time so far (ns) of this JVM (the RM and the driver's threads) and of its child processes
   * (the core): unlike wall time, it does not grow when other processes take the CPU.
   */
  private static long[] cpuNanos() {
    long rm = ((com.sun.management.OperatingSystemMXBean)
        java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    return new long[] {rm, childCpuNanos()};
  }

  /** CPU time (ns) of this JVM's child processes, from Linux's /proc (the shim is built for Java 8: no ProcessHandle). */
  private static long childCpuNanos() {
    String self = java.lang.management.ManagementFactory.getRuntimeMXBean().getName().split("@")[0];
    long ticks = 0;
    java.io.File[] procs = new java.io.File("/proc").listFiles((d, name) -> name.matches("[0-9]+"));
    for (java.io.File p : procs == null ? new java.io.File[0] : procs) {
      try {
        String stat = new String(java.nio.file.Files.readAllBytes(new java.io.File(p, "stat").toPath()),
            StandardCharsets.UTF_8);
        // after the command's ")": state ppid ... utime (14th field of the line) stime (15th)
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        if (f[1].equals(self)) {
          ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
        }
      } catch (java.io.IOException | RuntimeException gone) {
        // the process ended meanwhile
      }
    }
    return ticks * 10_000_000L;  // USER_HZ: 100 on Linux
  }

  /** The core's own time deciding (seconds, summed over calls), from its status server's /metrics. */
  private static double decisionSeconds(int statusPort) throws Exception {
    if (statusPort == 0) {
      return Double.NaN;
    }
    URL url = new URL("http://127.0.0.1:" + statusPort + "/metrics");
    try (BufferedReader in = new BufferedReader(
        new InputStreamReader(url.openStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null;) {
        if (line.startsWith("yarn_drf_decision_seconds_sum")) {
          return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
      }
    }
    return Double.NaN;
  }
}

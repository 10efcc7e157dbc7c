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
 * time in handle(NODE_UPDATE) (p50/p99), and the scheduling thread's calls and where their time
 * went (collect and commit under the scheduler's lock; the call: encoding, py4j, the core,
 * decoding).
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
      long t0 = System.nanoTime();
      long hb0 = hb.count.get();
      long got0 = ams.allocated.get();
      hb.timing = true;
      loop.reset();
      double decided0 = decisionSeconds(statusPort);
      Thread.sleep(measureMs);
      double s = (System.nanoTime() - t0) / 1e9;
      double decided = decisionSeconds(statusPort) - decided0;
      long hbN = hb.count.get() - hb0;
      long gotN = ams.allocated.get() - got0;
      hb.stop = true;
      ams.stop = true;
      h.join();
      a.join();
      long[] handle = hb.times();
      System.out.printf("{\"nodes\":%d,\"apps\":%d,\"asks_per_app\":%d,\"seconds\":%.1f,"
          + "\"heartbeats_per_s\":%.0f,\"allocations_per_s\":%.0f,"
          + "\"handle_p50_us\":%.2f,\"handle_p99_us\":%.2f,\"am_rounds\":%d,"
          + "\"core_decide_ms_per_s\":%.1f,%s,\"bridge\":\"%s\"}%n",
          nodes, apps, asks, s, hbN / s, gotN / s,
          pct(handle, 50) / 1e3, pct(handle, 99) / 1e3, ams.rounds.get(), decided * 1e3 / s,
          loop.json(s), scheduler.bridgeCounters());
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

  /** The scheduling thread's calls while measuring. */
  private static final class CallTimes implements SchedulingLoop.Observer {
    private long calls;
    private long nodes;
    private long assignments;
    private long collect;
    private long call;
    private long commit;

    @Override
    public synchronized void called(SchedulingLoop.CallRecord c) {
      calls++;
      nodes += c.nodes;
      assignments += c.assignments;
      collect += c.collectNanos;
      call += c.callNanos;
      commit += c.commitNanos;
    }

    synchronized void reset() {
      calls = nodes = assignments = collect = call = commit = 0;
    }

    synchronized String json(double seconds) {
      return String.format("\"loop_calls_per_s\":%.1f,\"loop_nodes_per_call\":%.0f,"
          + "\"loop_assignments_per_call\":%.1f,\"loop_collect_ms_per_s\":%.1f,"
          + "\"loop_call_ms_per_s\":%.1f,\"loop_commit_ms_per_s\":%.1f,"
          + "\"loop_call_mean_ms\":%.2f", calls / seconds, calls == 0 ? 0.0 : (double) nodes / calls,
          calls == 0 ? 0.0 : (double) assignments / calls, collect / 1e6 / seconds,
          call / 1e6 / seconds, commit / 1e6 / seconds, calls == 0 ? 0.0 : call / 1e6 / calls);
    }
  }

  /** Waits until System.nanoTime() reaches `due` (at once when behind: the rate is then what the scheduler allows). */
  private static void pace(long due) {
    long wait = due - System.nanoTime();
    if (wait > 20_000) {
      LockSupport.parkNanos(wait);
    }
  }

  private static double pct(long[] v, double p) {
    if (v.length == 0) {
      return Double.NaN;
    }
    long[] s = v.clone();
    Arrays.sort(s);
    return s[Math.min(s.length - 1, (int) (p / 100 * s.length))];
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

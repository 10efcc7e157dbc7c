package org.yarndrf.sls;

import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.lang.reflect.Field;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.util.ToolRunner;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;
import org.apache.hadoop.yarn.sls.RMRunner;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerWrapper;
import org.apache.hadoop.yarn.sls.scheduler.SlsMetricsAccess;
import org.yarndrf.shim.YarnDrfScheduler;

/**
 * Runs one SLS simulation (same arguments as SLSRunner) and writes bench.json to its output
 * directory: SLS's own scheduler timers (NODE_UPDATE and allocate, per call) and a time series of
 * what every queue holds and still asks for, read from the scheduler's application attempts
 * (all resource types, gpu-mem included, which SLS's CSV metrics leave out). The same code
 * samples all three schedulers, so their figures come from the same kind of data.
 *
 * An {@link AllocationProbe} records every allocation and ask into probe.jsonl next to it.
 *
 * System properties: yarndrf.bench.sample-ms (default 500), yarndrf.bench.timeout-s (600).
 */
public final class BenchRunner {
  private static final ObjectMapper JSON = new ObjectMapper();

  private BenchRunner() {
  }

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable t) {
      // SLS's threads are not daemons: without an exit a failed start would hang forever.
      t.printStackTrace();
      System.exit(1);
    }
  }

  private static void run(String[] args) throws Exception {
    long sampleMs = Long.getLong("yarndrf.bench.sample-ms", 500);
    long timeoutMs = Long.getLong("yarndrf.bench.timeout-s", 600) * 1000;
    String outDir = outputDir(args);

    // SLSRunner's no-argument constructor starts from an empty Configuration, which never reads
    // yarn-site.xml; a YarnConfiguration carries yarn-site.xml and resource-types.xml.
    Configuration conf = new YarnConfiguration();
    SLSRunner sls = new SLSRunner(conf);
    SlsTraceAMRunner.install(sls);
    ToolRunner.run(conf, sls, args);
    ResourceManager rm = resourceManager(sls);
    AbstractYarnScheduler<?, ?> scheduler = (AbstractYarnScheduler<?, ?>) rm.getResourceScheduler();

    ObjectNode out = JSON.createObjectNode();
    out.put("scheduler", scheduler.getClass().getName());
    ObjectNode capacity = out.putObject("cluster");
    ArrayNode samples = out.putArray("samples");
    long start = System.currentTimeMillis();
    AllocationProbe probe = AllocationProbe.install(scheduler, start, JSON,
        new File(outDir, "probe.jsonl"));
    rm.getRMContext().setSystemMetricsPublisher(
        new ProbingPublisher(rm.getRMContext().getSystemMetricsPublisher(), probe));
    LoopTimes loopTimes = null;
    if (scheduler instanceof YarnDrfScheduler) {
      loopTimes = new LoopTimes();
      ((YarnDrfScheduler) scheduler).schedulingLoop().setObserver(loopTimes);
    }
    boolean finished = false;
    while (System.currentTimeMillis() - start < timeoutMs) {
      samples.add(sample(scheduler, probe, System.currentTimeMillis() - start));
      if (sls.getRemainingApps() == 0 && !SLSRunner.getSimulateInfoMap().isEmpty()) {
        finished = true;
        break;
      }
      Thread.sleep(sampleMs);
    }
    for (ResourceInformation ri : scheduler.getClusterResource().getResources()) {
      capacity.put(ri.getName(), ri.getValue());
    }
    out.put("finished", finished);
    out.put("wall_ms", System.currentTimeMillis() - start);
    out.set("timers", timers(((SchedulerWrapper) scheduler).getSchedulerMetrics()));
    out.set("probe", probe.close());
    if (loopTimes != null) {
      out.set("scheduling_loop", loopTimes.toJson(JSON));
    }
    ObjectNode appQueues = out.putObject("app_queues");
    for (Map.Entry<ApplicationId, RMApp> e : rm.getRMContext().getRMApps().entrySet()) {
      appQueues.put(e.getKey().toString(), leaf(e.getValue().getQueue()));
    }
    JSON.writerWithDefaultPrettyPrinter().writeValue(new File(outDir, "bench.json"), out);
    try {
      sls.stop();
    } finally {
      // SLS's task threads are not daemons; the run is over once bench.json is written.
      System.exit(finished ? 0 : 2);
    }
  }

  private static String outputDir(String[] args) {
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("-output") && i + 1 < args.length) {
        return args[i + 1];
      }
      if (args[i].startsWith("-output=")) {
        return args[i].substring("-output=".length());
      }
    }
    throw new IllegalArgumentException("BenchRunner needs -output DIR (as SLSRunner)");
  }

  /** SLSRunner keeps its RMRunner private; the benchmark only reads it. */
  private static ResourceManager resourceManager(SLSRunner sls) throws ReflectiveOperationException {
    Field f = SLSRunner.class.getDeclaredField("rmRunner");
    f.setAccessible(true);
    return ((RMRunner) f.get(sls)).getRm();
  }

  /** One point of the time series: per queue, resources held and resources still asked for. */
  private static ObjectNode sample(AbstractYarnScheduler<?, ?> scheduler, AllocationProbe probe,
      long tMs) {
    ObjectNode s = JSON.createObjectNode();
    s.put("t_ms", tMs);
    s.put("containers_allocated", scheduler.getRootQueueMetrics().getAggregateAllocatedContainers());
    s.put("containers_running", scheduler.getRootQueueMetrics().getAllocatedContainers());
    Map<String, long[]> used = new TreeMap<>();
    Map<String, long[]> pending = new TreeMap<>();
    ResourceInformation[] types = scheduler.getClusterResource().getResources();
    for (Map.Entry<ApplicationId, ? extends SchedulerApplication<?>> e
        : scheduler.getSchedulerApplications().entrySet()) {
      SchedulerApplication<?> app = e.getValue();
      SchedulerApplicationAttempt attempt = app.getCurrentAppAttempt();
      if (attempt == null || app.getQueue() == null) {
        continue;
      }
      String queue = leaf(app.getQueue().getQueueName());
      add(used.computeIfAbsent(queue, k -> new long[types.length]),
          attempt.getCurrentConsumption(), 1);
      long[] p = pending.computeIfAbsent(queue, k -> new long[types.length]);
      try {
        for (ResourceRequest rr : attempt.getAppSchedulingInfo().getAllResourceRequests()) {
          if (ResourceRequest.ANY.equals(rr.getResourceName()) && rr.getNumContainers() > 0) {
            add(p, rr.getCapability(), rr.getNumContainers());
          }
        }
      } catch (RuntimeException concurrentChange) {
        // The asks changed under the read; this sample keeps what it had read.
      }
    }
    ObjectNode queues = s.putObject("queues");
    for (Map.Entry<String, long[]> e : used.entrySet()) {
      ObjectNode q = queues.putObject(e.getKey());
      ObjectNode u = q.putObject("used");
      ObjectNode p = q.putObject("pending");
      for (int i = 0; i < types.length; i++) {
        u.put(types[i].getName(), e.getValue()[i]);
        p.put(types[i].getName(), pending.get(e.getKey())[i]);
      }
    }
    probe.describe(queues);
    return s;
  }

  private static void add(long[] into, Resource r, int times) {
    ResourceInformation[] ris = r.getResources();
    for (int i = 0; i < into.length && i < ris.length; i++) {
      into[i] += ris[i].getValue() * times;
    }
  }

  /** Queue names differ by scheduler (root.a for Fair and yarn-drf, a for Capacity). */
  static String leaf(String queue) {
    int dot = queue.lastIndexOf('.');
    return dot < 0 ? queue : queue.substring(dot + 1);
  }

  private static ObjectNode timers(SchedulerMetrics metrics) {
    ObjectNode t = JSON.createObjectNode();
    if (metrics == null) {
      return t;
    }
    t.set("allocate", timer(SlsMetricsAccess.allocateTimer(metrics)));
    t.set("NODE_UPDATE", timer(SlsMetricsAccess.handleTimer(metrics, SchedulerEventType.NODE_UPDATE)));
    return t;
  }

  /** Timer values are nanoseconds; the window holds the last yarn.sls.metrics.timer.window.size calls. */
  private static ObjectNode timer(Timer timer) {
    ObjectNode o = JSON.createObjectNode();
    Snapshot s = timer.getSnapshot();
    o.put("count", timer.getCount());
    o.put("window", s.size());
    o.put("mean_us", s.getMean() / 1e3);
    o.put("p50_us", s.getMedian() / 1e3);
    o.put("p99_us", s.get99thPercentile() / 1e3);
    o.put("max_us", s.getMax() / 1e3);
    return o;
  }
}

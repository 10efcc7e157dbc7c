package org.yarndrf.sls;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * Records, for all three schedulers alike, what the fairness and latency figures need at the
 * moment each container is allocated: the queue it went to, the free room of its node before it,
 * and every queue's usage and pending request shapes just then; plus each ask's arrival (the
 * increase of an app's outstanding count). benchmarks/sls/fairness.py turns these records into
 * DRF violations and ask-to-allocation times.
 *
 * <p>Where it hooks: YARN publishes {@code containerCreated} to the RM's SystemMetricsPublisher
 * from RMContainer's NEW -&gt; ALLOCATED transition, which FairScheduler, CapacityScheduler and the
 * yarn-drf shim all fire while allocating, on the allocating thread (the event thread for Fair and
 * Capacity; yarn-drf's scheduling thread, whose commit allocates), before the node is charged.
 * Reservations never take that transition, so only real allocations are recorded. Finished
 * containers come through {@code containerFinished}, recorded with their exit status. Asks
 * come from each scheduler's allocate() ({@link #asking}).
 *
 * <p>Cost on the allocating thread: one app's asks re-read per app changed since the last record
 * (an AM's allocate or an allocation marks its app), plus a copy of a few numbers per queue.
 */
public final class AllocationProbe {
  private static volatile AllocationProbe installed;

  private final AbstractYarnScheduler<?, ?> scheduler;
  private final String[] types;
  private final long startNanos;
  /** Per queue: resources held (the ledger of allocated minus finished containers). */
  private final Map<String, long[]> used = new TreeMap<>();
  /** Per queue: shape -> containers running, and shape -> containers asked for. */
  private final Map<String, Map<List<Long>, Long>> running = new TreeMap<>();
  private final Map<String, Map<List<Long>, Long>> pending = new TreeMap<>();
  /** Per app: its queue and its pending shapes, as last read; and the apps to read again. */
  private final Map<ApplicationId, String> appQueue = new HashMap<>();
  private final Map<ApplicationId, Map<List<Long>, Long>> appPending = new HashMap<>();
  private final Set<ApplicationId> dirty = new HashSet<>();
  private final ObjectMapper json;
  private final JsonGenerator out;
  private long records;
  private long probeNanos;

  private AllocationProbe(AbstractYarnScheduler<?, ?> scheduler, long startMillis, ObjectMapper json,
      File file) throws IOException {
    this.scheduler = scheduler;
    ResourceInformation[] ris = scheduler.getClusterResource().getResources();
    types = new String[ris.length];
    for (int i = 0; i < ris.length; i++) {
      types[i] = ris[i].getName();
    }
    startNanos = System.nanoTime() - (System.currentTimeMillis() - startMillis) * 1_000_000L;
    this.json = json;
    out = json.getFactory().createGenerator(file, JsonEncoding.UTF8);
    out.setRootValueSeparator(new SerializedString("\n"));
  }

  /**
   * Starts recording into file, one JSON object a line; the times it writes are milliseconds
   * since startMillis (wall clock).
   */
  static AllocationProbe install(AbstractYarnScheduler<?, ?> scheduler, long startMillis,
      ObjectMapper json, File file) throws IOException {
    AllocationProbe p = new AllocationProbe(scheduler, startMillis, json, file);
    installed = p;
    return p;
  }

  /**
   * Each scheduler's allocate(), probed: the asks are recorded before the scheduler updates them
   * and the app is marked for the next allocation record after.
   */
  static Allocation probed(ApplicationAttemptId attempt, List<ResourceRequest> asks,
      Supplier<Allocation> allocate) {
    AllocationProbe p = installed;
    if (p != null) {
      p.asks(attempt, asks);
    }
    try {
      return allocate.get();
    } finally {
      if (p != null) {
        synchronized (p) {
          p.dirty.add(attempt.getApplicationId());
        }
      }
    }
  }

  private synchronized void asks(ApplicationAttemptId attemptId, List<ResourceRequest> asks) {
    long t0 = System.nanoTime();
    SchedulerApplicationAttempt attempt = scheduler.getApplicationAttempt(attemptId);
    ApplicationId app = attemptId.getApplicationId();
    dirty.add(app);
    if (attempt == null || asks == null) {
      return;
    }
    for (ResourceRequest rr : asks) {
      if (!ResourceRequest.ANY.equals(rr.getResourceName())) {
        continue;
      }
      SchedulerRequestKey key = SchedulerRequestKey.create(rr);
      PendingAsk before = attempt.getAppSchedulingInfo().getPendingAsk(key);
      int delta = rr.getNumContainers() - (before == null ? 0 : before.getCount());
      if (delta != 0) {
        ObjectNode e = json.createObjectNode();
        e.put("ev", "ask");
        e.put("t", ms(t0));
        e.put("app", app.toString());
        e.put("key", key(key));
        e.put("n", delta);
        put(e.putArray("res"), vector(rr.getCapability()));
        emit(e);
      }
    }
    probeNanos += System.nanoTime() - t0;
  }

  /**
   * yarn-drf's schedule call ended its commit (only yarn-drf has calls): when it finished
   * collecting (the asks the core decided with are those recorded before), and the assignments
   * it committed. Times since the start, as the other records'.
   */
  static void called(long collectedNanos, long committedNanos, int assignments, long applied) {
    AllocationProbe p = installed;
    if (p != null) {
      p.call(collectedNanos, committedNanos, assignments, applied);
    }
  }

  private synchronized void call(long collectedNanos, long committedNanos, int assignments,
      long applied) {
    ObjectNode e = json.createObjectNode();
    e.put("ev", "call");
    e.put("collected", ms(collectedNanos));
    e.put("t", ms(committedNanos));
    e.put("assignments", assignments);
    e.put("applied", applied);
    emit(e);
  }

  /** A container was allocated (RMContainer NEW -> ALLOCATED); its node is not charged yet. */
  synchronized void allocated(RMContainer c) {
    long t0 = System.nanoTime();
    ApplicationId app = c.getApplicationAttemptId().getApplicationId();
    refreshDirty();
    String queue = queueOf(app);
    long[] res = vector(c.getAllocatedResource());
    ObjectNode e = json.createObjectNode();
    e.put("ev", "alloc");
    e.put("t", ms(t0));
    e.put("c", c.getContainerId().toString());
    e.put("app", app.toString());
    e.put("key", key(c.getAllocatedSchedulerKey()));
    e.put("q", queue);
    e.put("node", String.valueOf(c.getAllocatedNode()));
    put(e.putArray("res"), res);
    SchedulerNode node = scheduler.getSchedulerNode(c.getAllocatedNode());
    if (node != null) {
      put(e.putArray("free"), vector(node.getUnallocatedResource()));
    }
    ObjectNode qs = e.putObject("queues");
    for (Map.Entry<String, long[]> u : used.entrySet()) {
      ObjectNode q = qs.putObject(u.getKey());
      put(q.putArray("used"), u.getValue());
      shapes(q.putArray("pending"), pending.get(u.getKey()));
    }
    for (String q : pending.keySet()) {
      if (!used.containsKey(q)) {
        ObjectNode o = qs.putObject(q);
        put(o.putArray("used"), new long[types.length]);
        shapes(o.putArray("pending"), pending.get(q));
      }
    }
    emit(e);
    add(used.computeIfAbsent(queue, k -> new long[types.length]), res, 1);
    count(running.computeIfAbsent(queue, k -> new TreeMap<>(SHAPES)), res, 1);
    dirty.add(app);
    probeNanos += System.nanoTime() - t0;
  }

  /**
   * A container ended (finished, killed or released); recorded with its exit status, so the
   * preemption figures can tell a preempted container (-102) from one that completed.
   */
  synchronized void finished(RMContainer c) {
    long t0 = System.nanoTime();
    ApplicationId app = c.getApplicationAttemptId().getApplicationId();
    String queue = appQueue.get(app);
    ObjectNode e = json.createObjectNode();
    e.put("ev", "end");
    e.put("t", ms(t0));
    e.put("c", c.getContainerId().toString());
    e.put("exit", c.getContainerExitStatus());
    e.put("node", String.valueOf(c.getAllocatedNode()));
    emit(e);
    if (queue != null && c.getAllocatedResource() != null) {
      long[] res = vector(c.getAllocatedResource());
      add(used.computeIfAbsent(queue, k -> new long[types.length]), res, -1);
      count(running.computeIfAbsent(queue, k -> new TreeMap<>(SHAPES)), res, -1);
    }
    dirty.add(app);
    probeNanos += System.nanoTime() - t0;
  }

  /** For the time series: each queue's running and pending containers by shape, as of now. */
  synchronized void describe(ObjectNode queues) {
    refreshDirty();
    for (Iterator<Map.Entry<String, JsonNode>> it = queues.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> q = it.next();
      ObjectNode o = (ObjectNode) q.getValue();
      shapes(o.putArray("running_shapes"), running.get(q.getKey()));
      shapes(o.putArray("pending_shapes"), pending.get(q.getKey()));
    }
  }

  /** Stops recording; returns what it recorded and the time it spent. */
  synchronized ObjectNode close() throws IOException {
    installed = null;
    out.close();
    ObjectNode o = json.createObjectNode();
    o.put("records", records);
    o.put("probe_ms", probeNanos / 1e6);
    return o;
  }

  private void emit(ObjectNode e) {
    if (out.isClosed()) {
      return;
    }
    try {
      json.writeTree(out, e);
      records++;
    } catch (IOException ex) {
      throw new UncheckedIOException(ex);
    }
  }

  private void refreshDirty() {
    for (ApplicationId app : dirty) {
      String queue = queueOf(app);
      Map<List<Long>, Long> now = new TreeMap<>(SHAPES);
      SchedulerApplication<?> sa = scheduler.getSchedulerApplications().get(app);
      SchedulerApplicationAttempt attempt = sa == null ? null : sa.getCurrentAppAttempt();
      if (attempt != null && !attempt.isStopped()) {
        for (SchedulerRequestKey key : attempt.getAppSchedulingInfo().getSchedulerKeys()) {
          PendingAsk ask = attempt.getAppSchedulingInfo().getPendingAsk(key);
          if (ask != null && ask.getCount() > 0) {
            count(now, vector(ask.getPerAllocationResource()), ask.getCount());
          }
        }
      }
      Map<List<Long>, Long> before = appPending.put(app, now);
      Map<List<Long>, Long> qp = pending.computeIfAbsent(queue, k -> new TreeMap<>(SHAPES));
      if (before != null) {
        for (Map.Entry<List<Long>, Long> b : before.entrySet()) {
          merge(qp, b.getKey(), -b.getValue());
        }
      }
      for (Map.Entry<List<Long>, Long> n : now.entrySet()) {
        merge(qp, n.getKey(), n.getValue());
      }
    }
    dirty.clear();
  }

  private String queueOf(ApplicationId app) {
    String known = appQueue.get(app);
    if (known != null) {
      return known;
    }
    SchedulerApplication<?> sa = scheduler.getSchedulerApplications().get(app);
    if (sa == null || sa.getQueue() == null) {
      return "unknown";
    }
    String q = BenchRunner.leaf(sa.getQueue().getQueueName());
    appQueue.put(app, q);
    return q;
  }

  private double ms(long nanos) {
    return (nanos - startNanos) / 1e6;
  }

  private static String key(SchedulerRequestKey k) {
    return k.getPriority().getPriority() + "/" + k.getAllocationRequestId();
  }

  private long[] vector(Resource r) {
    long[] v = new long[types.length];
    for (int i = 0; i < types.length; i++) {
      v[i] = r.getResourceValue(types[i]);
    }
    return v;
  }

  private static void put(ArrayNode into, long[] v) {
    for (long x : v) {
      into.add(x);
    }
  }

  /** Shapes as [r0, r1, ..., count], those with a positive count only. */
  private static void shapes(ArrayNode into, Map<List<Long>, Long> m) {
    if (m == null) {
      return;
    }
    for (Map.Entry<List<Long>, Long> e : m.entrySet()) {
      if (e.getValue() > 0) {
        ArrayNode s = into.addArray();
        for (long x : e.getKey()) {
          s.add(x);
        }
        s.add(e.getValue());
      }
    }
  }

  private static void add(long[] into, long[] v, int sign) {
    for (int i = 0; i < into.length; i++) {
      into[i] += sign * v[i];
    }
  }

  private static void count(Map<List<Long>, Long> m, long[] shape, long n) {
    List<Long> k = new ArrayList<>(shape.length);
    for (long x : shape) {
      k.add(x);
    }
    merge(m, k, n);
  }

  private static void merge(Map<List<Long>, Long> m, List<Long> k, long n) {
    long v = m.getOrDefault(k, 0L) + n;
    if (v == 0) {
      m.remove(k);
    } else {
      m.put(k, v);
    }
  }

  private static final Comparator<List<Long>> SHAPES = (a, b) -> {
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      int c = Long.compare(a.get(i), b.get(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size());
  };
}

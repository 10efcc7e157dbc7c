package org.yarndrf.sls;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import org.yarndrf.shim.SchedulingLoop;

/**
 * yarn-drf's scheduling thread, which SLS does not time: every schedule call's nodes, assignments
 * and where its time went (collecting under the scheduler's lock; the call: encoding, py4j, the
 * core, decoding; committing under the lock), summed and as percentiles.
 */
final class LoopTimes implements SchedulingLoop.Observer {
  private long[] nodes = new long[1 << 12];
  private long[] applied = new long[1 << 12];
  private long[] collect = new long[1 << 12];
  private long[] call = new long[1 << 12];
  private long[] commit = new long[1 << 12];
  private int n;

  @Override
  public synchronized void called(SchedulingLoop.CallRecord c) {
    long now = System.nanoTime();
    AllocationProbe.called(now - c.commitNanos - c.callNanos, now, c.assignments, c.applied);
    if (n == nodes.length) {
      nodes = Arrays.copyOf(nodes, 2 * n);
      applied = Arrays.copyOf(applied, 2 * n);
      collect = Arrays.copyOf(collect, 2 * n);
      call = Arrays.copyOf(call, 2 * n);
      commit = Arrays.copyOf(commit, 2 * n);
    }
    nodes[n] = c.nodes;
    applied[n] = c.applied;
    collect[n] = c.collectNanos;
    call[n] = c.callNanos;
    commit[n] = c.commitNanos;
    n++;
  }

  synchronized ObjectNode toJson(ObjectMapper json) {
    ObjectNode o = json.createObjectNode();
    o.put("calls", n);
    o.put("nodes", sum(nodes));
    o.put("applied", sum(applied));
    part(o.putObject("collect"), collect);
    part(o.putObject("call"), call);
    part(o.putObject("commit"), commit);
    long[] perCall = Arrays.copyOf(nodes, n);
    Arrays.sort(perCall);
    o.put("nodes_per_call_p50", n == 0 ? 0 : perCall[n / 2]);
    return o;
  }

  private void part(ObjectNode o, long[] nanos) {
    long[] sorted = Arrays.copyOf(nanos, n);
    Arrays.sort(sorted);
    o.put("total_ms", sum(nanos) / 1e6);
    o.put("p50_us", n == 0 ? 0 : sorted[n / 2] / 1e3);
    o.put("p99_us", n == 0 ? 0 : sorted[Math.min(n - 1, (int) (n * 0.99))] / 1e3);
  }

  private long sum(long[] v) {
    long s = 0;
    for (int i = 0; i < n; i++) {
      s += v[i];
    }
    return s;
  }
}

package org.yarndrf.shim.bench;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import org.yarndrf.shim.Messages;
import org.yarndrf.shim.RequestValues;
import org.yarndrf.shim.bridge.Backoff;
import org.yarndrf.shim.bridge.CoreSession;
import org.yarndrf.shim.bridge.Py4jChannel;

/**
 * Schedule calls as the scheduling loop makes them: System.nanoTime() around
 * CoreSession.exchange() over Py4jChannel (the code BridgeClient.schedule() runs, encoding and
 * decoding included) against a real `yarn-drf serve`, with k pending changes per call and n nodes
 * with room listed; and, for comparison, the same message bytes over a raw loopback TCP socket
 * (length-prefixed, TCP_NODELAY) to a Python echo.
 *
 * Usage: BridgeBench py4j|raw PORT TOKEN DELTAS CALLS WARMUP [counts|full|containers] [NODES]
 * "counts" (default): each delta changes the count of an ask the core already has, the usual
 * change between two calls ("counts": id, count); "full": each delta is an ask sent in full, as the
 * first ask of an app or a new shape is; "containers": half the deltas are containers finished on
 * the first node, half containers started in their place (the node stays full). NODES (default 1):
 * nodes listed in every call, each full, so the core decides for each and finds nothing fits.
 * Prints one JSON line of statistics (microseconds).
 */
public final class BridgeBench {
  private static final int APPS = 50;

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    int port = Integer.parseInt(args[1]);
    String token = args[2];
    int deltas = Integer.parseInt(args[3]);
    int calls = Integer.parseInt(args[4]);
    int warmup = Integer.parseInt(args[5]);
    String kind = args.length > 6 ? args[6] : "counts";
    int nodes = args.length > 7 ? Integer.parseInt(args[7]) : 1;
    InetAddress lo = InetAddress.getByName("127.0.0.1");
    long epoch = System.currentTimeMillis();
    long[] times = new long[calls];
    int bytes = 0;
    if ("py4j".equals(mode)) {
      CoreSession session = new CoreSession(new Py4jChannel(lo, port, token, 5000),
          new Backoff(1, 1), System::currentTimeMillis);
      if (session.exchange("snapshot", Messages.encode(snapshot(epoch, nodes)), true,
          Messages::snapshotReply) == null) {
        throw new IllegalStateException("snapshot refused: " + session.counters());
      }
      for (int i = 0; i < warmup + calls; i++) {
        RequestValues.Schedule call = schedule(epoch, i, deltas, kind, nodes);
        long t0 = System.nanoTime();
        String msg = Messages.encode(call);
        bytes = msg.length();
        if (session.exchange("schedule", msg, true, Messages::scheduleReply) == null) {
          throw new IllegalStateException("schedule call failed: " + session.counters());
        }
        long dt = System.nanoTime() - t0;
        if (i >= warmup) {
          times[i - warmup] = dt;
        }
      }
      session.close();
    } else {
      try (Socket s = new Socket(lo, port)) {
        s.setTcpNoDelay(true);
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        DataInputStream in = new DataInputStream(s.getInputStream());
        for (int i = 0; i < warmup + calls; i++) {
          String msg = Messages.encode(schedule(epoch, i, deltas, kind, nodes));
          bytes = msg.length();
          long t0 = System.nanoTime();
          byte[] b = msg.getBytes(StandardCharsets.UTF_8);
          byte[] frame = new byte[4 + b.length];
          frame[0] = (byte) (b.length >>> 24);
          frame[1] = (byte) (b.length >>> 16);
          frame[2] = (byte) (b.length >>> 8);
          frame[3] = (byte) b.length;
          System.arraycopy(b, 0, frame, 4, b.length);
          out.write(frame);
          out.flush();
          byte[] reply = new byte[in.readInt()];
          in.readFully(reply);
          new String(reply, StandardCharsets.UTF_8);
          long dt = System.nanoTime() - t0;
          if (i >= warmup) {
            times[i - warmup] = dt;
          }
        }
      }
    }
    long total = 0;
    int over5ms = 0;
    for (long t : times) {
      total += t;
      over5ms += t > 5_000_000L ? 1 : 0;
    }
    long[] sorted = times.clone();
    Arrays.sort(sorted);
    System.out.printf("{\"mode\":\"%s\",\"asks\":\"%s\",\"deltas\":%d,\"nodes\":%d,\"calls\":%d,"
        + "\"bytes\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f,\"over_5ms\":%d,"
        + "\"per_s\":%.0f}%n", mode, kind, deltas, nodes, calls,
        bytes, sorted[calls / 2] / 1e3, sorted[(int) (calls * 0.99)] / 1e3,
        sorted[calls - 1] / 1e3, over5ms, calls / (total / 1e9));
  }

  private static final java.util.List<String> TYPES = Arrays.asList("memory-mb", "vcores", "gpu-mem");

  private static String node(int n) {
    return "bench-node:" + (n + 1);
  }

  /**
   * `nodes` nodes, the first full with one container per app, the others full with one big
   * container each, so the asks stay pending: decisions, no churn. Each app has one ANY ask,
   * id = app index + 1, sent in full here.
   */
  private static RequestValues.Snapshot snapshot(long epoch, int nodes) {
    RequestValues.Snapshot s = new RequestValues.Snapshot(epoch, TYPES);
    for (int n = 0; n < nodes; n++) {
      Map<String, Long> capacity = new TreeMap<>();
      capacity.put("memory-mb", APPS * 1024L);
      capacity.put("vcores", (long) APPS);
      capacity.put("gpu-mem", 0L);
      s.nodes.add(new RequestValues.NodeInfo(node(n), capacity).withRack("/default-rack"));
      if (n > 0) {
        s.containers.add(new RequestValues.ContainerRow("container_2_" + n, "application_1_0",
            node(n), 1, 0, null, new long[] {APPS * 1024L, APPS, 0}));
      }
    }
    for (int a = 0; a < APPS; a++) {
      s.apps.add(new RequestValues.AppInfo("application_1_" + a, "bench",
          a % 2 == 0 ? "root.cpu" : "root.mem"));
      s.containers.add(container("container_1_" + a, a));
      s.asks.add(fullAsk(a, 1));
    }
    return s;
  }

  private static RequestValues.AskRow fullAsk(int app, int count) {
    return new RequestValues.AskRow(app + 1, count, "application_1_" + app, 1, 0, "*", true,
        new long[] {1024, 1, 0});
  }

  /** A container the core did not assign (a recovered one), on the first node. */
  private static RequestValues.ContainerRow container(String container, int app) {
    return new RequestValues.ContainerRow(container, "application_1_" + app, node(0), 1, 0, null,
        new long[] {1024, 1, 0});
  }

  /** A call with `deltas` changes of the given kind (ask counts alternate 1 and 2). */
  private static RequestValues.Schedule schedule(long epoch, int seq, int deltas, String kind,
      int nodes) {
    RequestValues.Schedule s = new RequestValues.Schedule(epoch, seq);
    if ("containers".equals(kind)) {
      // container j of call seq replaces container j of call seq - 1 (or the snapshot's)
      for (int j = 0; j < deltas / 2; j++) {
        s.finished.add(seq == 0 ? "container_1_" + j : "c_" + (seq - 1) + "_" + j);
        s.finished.add("completed");
        s.started.add(container("c_" + seq + "_" + j, j));
      }
    }
    for (int j = 0; j < deltas && !"containers".equals(kind); j++) {
      int app = (seq * deltas + j) % APPS;
      int count = 1 + (seq % 2);
      if ("full".equals(kind)) {
        s.asks.add(fullAsk(app, count));
      } else {
        s.counts.add((long) app + 1);
        s.counts.add((long) count);
      }
    }
    for (int n = 0; n < nodes; n++) {
      s.nodes.add(new RequestValues.NodeRow(node(n), new long[] {0, 0, 0}));
    }
    s.heartbeats = nodes;
    return s;
  }
}

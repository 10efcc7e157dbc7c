package org.yarndrf.shim.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.yarndrf.shim.bridge.Backoff;
import org.yarndrf.shim.bridge.CoreSession;
import org.yarndrf.shim.bridge.Protocol;
import org.yarndrf.shim.bridge.Py4jChannel;

/**
 * Heartbeat round trips as the RM's scheduler thread sees them: System.nanoTime() around
 * CoreSession.exchange() over Py4jChannel (the code YarnDrfScheduler.decide() runs) against a
 * real `yarn-drf serve`, with k pending deltas per heartbeat; and, for comparison, the same
 * message bytes over a raw loopback TCP socket (length-prefixed, TCP_NODELAY) to a Python echo.
 *
 * Usage: BridgeBench py4j|raw PORT TOKEN DELTAS CALLS WARMUP [counts|full|containers]
 * "counts" (default): each delta changes the count of an ask the core already has, the usual
 * change between two heartbeats ("counts": id, count); "full": each delta is an ask sent in full, as the
 * first ask of an app or a new shape is; "containers": half the deltas are containers finished on
 * the node, half containers started in their place (the node stays full).
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
    InetAddress lo = InetAddress.getByName("127.0.0.1");
    long epoch = System.currentTimeMillis();
    long[] times = new long[calls];
    int bytes = 0;
    if ("py4j".equals(mode)) {
      CoreSession session = new CoreSession(new Py4jChannel(lo, port, token, 5000),
          new Backoff(1, 1), System::currentTimeMillis);
      if (session.exchange("snapshot", Protocol.encode(snapshot(epoch)), true) == null) {
        throw new IllegalStateException("snapshot refused: " + session.counters());
      }
      for (int i = 0; i < warmup + calls; i++) {
        String msg = heartbeat(epoch, i, deltas, kind);
        bytes = msg.length();
        long t0 = System.nanoTime();
        if (session.exchange("heartbeat", msg, true) == null) {
          throw new IllegalStateException("heartbeat failed: " + session.counters());
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
          String msg = heartbeat(epoch, i, deltas, kind);
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
    System.out.printf("{\"mode\":\"%s\",\"asks\":\"%s\",\"deltas\":%d,\"calls\":%d,\"bytes\":%d,\"p50_us\":%.1f,"
        + "\"p99_us\":%.1f,\"max_us\":%.1f,\"over_5ms\":%d,\"per_s\":%.0f}%n", mode,
        kind, deltas, calls,
        bytes, sorted[calls / 2] / 1e3, sorted[(int) (calls * 0.99)] / 1e3,
        sorted[calls - 1] / 1e3, over5ms, calls / (total / 1e9));
  }

  private static ObjectNode amounts(long mem, long vcores) {
    ObjectNode r = Protocol.JSON.createObjectNode();
    r.put("memory-mb", mem);
    r.put("vcores", vcores);
    r.put("gpu-mem", 0);
    return r;
  }

  /**
   * One node, full with one container per app, so the asks stay pending: decisions, no churn.
   * Each app has one ANY ask, id = app index + 1, sent in full here.
   */
  private static ObjectNode snapshot(long epoch) {
    ObjectNode req = Protocol.request("snapshot");
    req.put("epoch", epoch);
    ArrayNode types = req.putArray("resources");
    types.add("memory-mb").add("vcores").add("gpu-mem");
    ObjectNode node = req.putArray("nodes").addObject();
    node.put("node", "bench-node:1");
    node.set("capacity", amounts(APPS * 1024L, APPS));
    node.put("rack", "/default-rack");
    ArrayNode apps = req.putArray("apps");
    ArrayNode containers = req.putArray("containers");
    ArrayNode asks = req.putArray("asks");
    for (int a = 0; a < APPS; a++) {
      ObjectNode app = apps.addObject();
      app.put("app", "application_1_" + a);
      app.put("user", "bench");
      app.put("queue", a % 2 == 0 ? "root.cpu" : "root.mem");
      app.putArray("groups");
      containers.add(containerRow("container_1_" + a, a));
      asks.add(fullAsk(a, 1));
    }
    req.putArray("counts");
    return req;
  }

  private static ArrayNode fullAsk(int app, int count) {
    return Protocol.JSON.createArrayNode().add(app + 1).add(count).add("application_1_" + app)
        .add(1).add(0).add("*").add(true).add(1024).add(1).add(0);
  }

  /** [container, app, node, priority, allocation_id, assignment_id, amounts...]: a recovered one. */
  private static ArrayNode containerRow(String container, int app) {
    return Protocol.JSON.createArrayNode().add(container).add("application_1_" + app)
        .add("bench-node:1").add(1).add(0).add((String) null).add(1024).add(1).add(0);
  }

  /** A heartbeat with `deltas` changes of the given kind (ask counts alternate 1 and 2). */
  private static String heartbeat(long epoch, int seq, int deltas, String kind) {
    ObjectNode req = Protocol.request("heartbeat");
    req.put("epoch", epoch);
    req.put("seq", seq);
    req.put("node", "bench-node:1");
    req.set("free", amounts(0, 0));
    req.putArray("deltas");
    ArrayNode started = req.putArray("started");
    ArrayNode finished = req.putArray("finished");
    ArrayNode asks = req.putArray("asks");
    ArrayNode counts = req.putArray("counts");
    if ("containers".equals(kind)) {
      // container j of heartbeat seq replaces container j of heartbeat seq - 1 (or the snapshot's)
      for (int j = 0; j < deltas / 2; j++) {
        finished.add(seq == 0 ? "container_1_" + j : "c_" + (seq - 1) + "_" + j).add("completed");
        started.add(containerRow("c_" + seq + "_" + j, j));
      }
    }
    for (int j = 0; j < deltas && !"containers".equals(kind); j++) {
      int app = (seq * deltas + j) % APPS;
      int count = 1 + (seq % 2);
      if ("full".equals(kind)) {
        asks.add(fullAsk(app, count));
      } else {
        counts.add(app + 1).add(count);
      }
    }
    return Protocol.encode(req);
  }
}

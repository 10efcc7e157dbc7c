package org.yarndrf.shim;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.shim.bridge.Backoff;
import org.yarndrf.shim.bridge.CoreChannel;
import org.yarndrf.shim.bridge.CoreDir;
import org.yarndrf.shim.bridge.CoreSession;
import org.yarndrf.shim.bridge.Py4jChannel;
import org.yarndrf.shim.bridge.ServePorts;
import org.yarndrf.shim.bridge.ServeSupervisor;
import org.yarndrf.shim.bridge.TokenFile;

/**
 * Connects the shim to its core as yarn-site.xml says (docs/yarn-site.md): the
 * bridge token (read from its file, or a fresh one in child mode), the py4j channels to
 * 127.0.0.1 (one with the call timeout, one sized for snapshots), a private directory that goes
 * when the core stops (the token and port file of a child, copies of a queue file from the RM's
 * configuration store), and in child mode `yarn-drf serve` started and supervised as a child of
 * the ResourceManager.
 */
final class CoreLauncher {
  private static final Logger LOG = LoggerFactory.getLogger(CoreLauncher.class);

  private CoreLauncher() {
  }

  /**
   * @param conf this RM's keys (ShimConf.forRm)
   * @param queuesFile the queue file each child is started with, asked for at each start
   */
  static BridgeClient connect(Configuration conf, QueuesFile queuesFile) throws IOException {
    String mode = conf.get(ShimConf.SERVE_MODE, "child");
    if (!"child".equals(mode) && !"external".equals(mode)) {
      throw new IOException("yarn-drf: " + ShimConf.SERVE_MODE + " must be child or external, got "
          + mode);
    }
    boolean child = "child".equals(mode);
    int port = conf.getInt(ShimConf.PORT, ShimConf.DEFAULT_PORT);
    if (port < 0 || port > 65535 || (port == 0 && !child)) {
      throw new IOException("yarn-drf: " + ShimConf.PORT + " must be a port number (1-65535), or 0 "
          + "for any free port when " + ShimConf.SERVE_MODE + "=child; got " + port);
    }
    CoreDir dir = CoreDir.create();
    try {
      return connect(conf, mode, port, dir, queuesFile);
    } catch (IOException | RuntimeException e) {
      dir.close();
      throw e;
    }
  }

  private static BridgeClient connect(Configuration conf, String mode, int port, CoreDir dir,
      QueuesFile queuesFile) throws IOException {
    boolean child = "child".equals(mode);
    int timeoutMs = conf.getInt(ShimConf.TIMEOUT_MS, ShimConf.DEFAULT_TIMEOUT_MS);
    String tokenFile = conf.get(ShimConf.TOKEN_FILE);
    String token;
    if (tokenFile == null || tokenFile.isEmpty()) {
      if (!child) {
        throw new IOException("yarn-drf: " + ShimConf.TOKEN_FILE + " must be set when "
            + ShimConf.SERVE_MODE + "=" + mode + " (the py4j auth token is required)");
      }
      token = newToken();
      tokenFile = dir.writeToken(token).toString();
    } else {
      token = TokenFile.read(new File(tokenFile).toPath(), ShimConf.TOKEN_FILE);
    }
    ServePorts ports = child ? new ServePorts(dir.portFile(), port) : null;
    ServeSupervisor supervisor = null;
    if (child) {
      // First: the child's start (Python's imports) overlaps the rest of this one.
      supervisor = supervisor(conf, port, tokenFile, dir, ports, queuesFile);
      supervisor.start();
      warmUp(token);
    }
    try {
      IntSupplier bridgePort = ports == null ? () -> port : ports::bridgePort;
      InetAddress loopback = InetAddress.getByName("127.0.0.1");
      SizedTimeoutChannel snapshotChannel = new SizedTimeoutChannel(
          ms -> new Py4jChannel(loopback, bridgePort, token, ms), slowTimeoutMs(conf),
          conf.getInt(ShimConf.SNAPSHOT_TIMEOUT_PER_1000_ITEMS_MS,
              ShimConf.DEFAULT_SNAPSHOT_TIMEOUT_PER_1000_ITEMS_MS));
      SizedTimeoutChannel scheduleChannel = new SizedTimeoutChannel(
          ms -> new Py4jChannel(loopback, bridgePort, token, ms), timeoutMs, 0);
      CoreSession session = session(conf, scheduleChannel, snapshotChannel);
      if (supervisor != null) {
        restartWhenUnresponsive(conf, supervisor, session);
      }
      LOG.info("yarn-drf bridge: mode={} port={} timeout={}ms", mode,
          port == 0 ? "any (the child reports it)" : port, timeoutMs);
      BridgeClient client = new BridgeClient(session, scheduleChannel, snapshotChannel,
          new CallTimeouts(timeoutMs, snapshotChannel::timeoutMs), supervisor, ports, dir,
          slowTimeoutMs(conf));
      if (supervisor != null) {
        client.watchChild();  // before the scheduling loop starts, which looks for the file first
      }
      return client;
    } catch (IOException | RuntimeException e) {
      if (supervisor != null) {
        supervisor.stop();  // no child outlives a start that failed
      }
      throw e;
    }
  }

  /** For tests: a bridge over `channel` (a fake core), with the configured backoff. */
  static BridgeClient over(CoreChannel channel, Configuration conf) {
    return new BridgeClient(session(conf, channel, channel), null, null,
        new CallTimeouts(conf.getInt(ShimConf.TIMEOUT_MS, ShimConf.DEFAULT_TIMEOUT_MS),
            () -> slowTimeoutMs(conf)), null, null, null, slowTimeoutMs(conf));
  }

  private static CoreSession session(Configuration conf, CoreChannel channel,
      CoreChannel slowChannel) {
    return new CoreSession(channel, slowChannel, new Backoff(
        conf.getLong(ShimConf.BACKOFF_INITIAL_MS, ShimConf.DEFAULT_BACKOFF_INITIAL_MS),
        conf.getLong(ShimConf.BACKOFF_MAX_MS, ShimConf.DEFAULT_BACKOFF_MAX_MS)),
        System::currentTimeMillis);
  }

  /** The base timeout of snapshots and reloads (at least the call timeout). */
  private static int slowTimeoutMs(Configuration conf) {
    return Math.max(conf.getInt(ShimConf.TIMEOUT_MS, ShimConf.DEFAULT_TIMEOUT_MS),
        conf.getInt(ShimConf.SNAPSHOT_TIMEOUT_MS, ShimConf.DEFAULT_SNAPSHOT_TIMEOUT_MS));
  }

  /** The supervisor of the children, not started yet. */
  private static ServeSupervisor supervisor(Configuration conf, int port, String tokenFile,
      CoreDir dir, ServePorts ports, QueuesFile queuesFile) {
    List<String> base = Arrays.asList(
        conf.getTrimmed(ShimConf.SERVE_COMMAND, ShimConf.DEFAULT_SERVE_COMMAND).split("\\s+"));
    List<String> bridgeArgs = Arrays.asList("--port", String.valueOf(port), "--port-file",
        dir.portFile().toString(), "--token-file", tokenFile, "--parent-pid", currentPid());
    Supplier<List<String>> command = () -> {
      List<String> line = new ArrayList<>(base);
      String queues;
      try {
        queues = queuesFile.forChild(dir);
      } catch (IOException e) {
        throw new UncheckedIOException(e.getMessage(), e);  // the supervisor logs it and retries
      }
      if (queues != null && !queues.isEmpty()) {
        line.add("--queues");
        line.add(queues);
      }
      line.addAll(bridgeArgs);
      return line;
    };
    String log = conf.getTrimmed(ShimConf.SERVE_LOG);
    return new ServeSupervisor(command, ports, port,
        log == null || log.isEmpty() ? null : new File(log),
        new Backoff(500, conf.getLong(ShimConf.BACKOFF_MAX_MS, ShimConf.DEFAULT_BACKOFF_MAX_MS)));
  }

  /** A child alive but silent for long is killed (the supervisor starts another). */
  private static void restartWhenUnresponsive(Configuration conf, ServeSupervisor supervisor,
      CoreSession session) {
    long afterMs = conf.getLong(ShimConf.RESTART_AFTER_MS, ShimConf.DEFAULT_RESTART_AFTER_MS);
    if (afterMs > 0) {
      session.whenUnresponsive(
          conf.getInt(ShimConf.RESTART_AFTER_FAILURES, ShimConf.DEFAULT_RESTART_AFTER_FAILURES),
          afterMs, why -> supervisor.restartUnresponsive(why, afterMs));
    }
  }

  /**
   * While the child starts, a thread loads what the first call needs on this side (the JSON codec,
   * py4j's client, the handshake's crypto): in a fresh RM under load the first snapshot took
   * seconds from the child's port file to its answer, nearly all of it here.
   */
  private static void warmUp(String token) {
    Thread t = new Thread(() -> {
      Messages.encode(new RequestValues.Snapshot(0, Collections.<String>emptyList()));
      Py4jChannel.warmUp(InetAddress.getLoopbackAddress(), token);
    }, "yarn-drf-warm-up");
    t.setDaemon(true);
    t.start();
  }

  private static String newToken() {
    byte[] b = new byte[24];
    new SecureRandom().nextBytes(b);
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      sb.append(String.format("%02x", x));
    }
    return sb.toString();
  }

  private static String currentPid() {
    String name = ManagementFactory.getRuntimeMXBean().getName();
    return name.substring(0, name.indexOf('@'));
  }
}

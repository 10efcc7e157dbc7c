package org.yarndrf.shim;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.shim.bridge.Backoff;
import org.yarndrf.shim.bridge.CoreChannel;
import org.yarndrf.shim.bridge.CoreSession;
import org.yarndrf.shim.bridge.Py4jChannel;
import org.yarndrf.shim.bridge.ServeSupervisor;
import org.yarndrf.shim.bridge.TokenFile;

/**
 * Connects the shim to its core as yarn-site.xml says (BRIDGE.md, "yarn-site.xml keys"): the
 * bridge token (read from its file, or a fresh one in child mode), the py4j channels to
 * 127.0.0.1 (one with the call timeout, one sized for snapshots), and in child mode `yarn-drf
 * serve` started and supervised as a child of the ResourceManager.
 */
final class CoreLauncher {
  private static final Logger LOG = LoggerFactory.getLogger(CoreLauncher.class);

  private CoreLauncher() {
  }

  static BridgeClient connect(Configuration conf) throws IOException {
    String mode = conf.get(ShimConf.SERVE_MODE, "child");
    if (!"child".equals(mode) && !"external".equals(mode)) {
      throw new IOException("yarn-drf: " + ShimConf.SERVE_MODE + " must be child or external, got "
          + mode);
    }
    int port = conf.getInt(ShimConf.PORT, ShimConf.DEFAULT_PORT);
    int timeoutMs = conf.getInt(ShimConf.TIMEOUT_MS, ShimConf.DEFAULT_TIMEOUT_MS);
    String tokenFile = conf.get(ShimConf.TOKEN_FILE);
    String token;
    if (tokenFile == null || tokenFile.isEmpty()) {
      if (!"child".equals(mode)) {
        throw new IOException("yarn-drf: " + ShimConf.TOKEN_FILE + " must be set when "
            + ShimConf.SERVE_MODE + "=" + mode + " (the py4j auth token is required)");
      }
      token = newToken();
      tokenFile = writePrivateToken(token).toString();
    } else {
      token = TokenFile.read(new File(tokenFile).toPath(), ShimConf.TOKEN_FILE);
    }
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    SizedTimeoutChannel snapshotChannel = new SizedTimeoutChannel(
        ms -> new Py4jChannel(loopback, port, token, ms), slowTimeoutMs(conf),
        conf.getInt(ShimConf.SNAPSHOT_TIMEOUT_PER_1000_ITEMS_MS,
            ShimConf.DEFAULT_SNAPSHOT_TIMEOUT_PER_1000_ITEMS_MS));
    CoreSession session = session(conf, new Py4jChannel(loopback, port, token, timeoutMs),
        snapshotChannel);
    ServeSupervisor supervisor = null;
    if ("child".equals(mode)) {
      supervisor = supervise(conf, port, tokenFile, session);
    }
    LOG.info("yarn-drf bridge: mode={} port={} timeout={}ms", mode, port, timeoutMs);
    return new BridgeClient(session, snapshotChannel, supervisor, slowTimeoutMs(conf));
  }

  /** For tests: a bridge over `channel` (a fake core), with the configured backoff. */
  static BridgeClient over(CoreChannel channel, Configuration conf) {
    return new BridgeClient(session(conf, channel, channel), null, null, slowTimeoutMs(conf));
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

  private static ServeSupervisor supervise(Configuration conf, int port, String tokenFile,
      CoreSession session) {
    List<String> command = new ArrayList<>(Arrays.asList(
        conf.getTrimmed(ShimConf.SERVE_COMMAND, ShimConf.DEFAULT_SERVE_COMMAND).split("\\s+")));
    String queuesFile = conf.getTrimmed(ShimConf.QUEUES_FILE);
    if (queuesFile != null && !queuesFile.isEmpty()) {
      command.add("--queues");
      command.add(queuesFile);
    }
    command.addAll(Arrays.asList("--port", String.valueOf(port), "--token-file", tokenFile,
        "--parent-pid", currentPid()));
    String log = conf.getTrimmed(ShimConf.SERVE_LOG);
    ServeSupervisor supervisor = new ServeSupervisor(command, port,
        log == null || log.isEmpty() ? null : new File(log),
        new Backoff(500, conf.getLong(ShimConf.BACKOFF_MAX_MS, ShimConf.DEFAULT_BACKOFF_MAX_MS)));
    long afterMs = conf.getLong(ShimConf.RESTART_AFTER_MS, ShimConf.DEFAULT_RESTART_AFTER_MS);
    if (afterMs > 0) {
      session.whenUnresponsive(
          conf.getInt(ShimConf.RESTART_AFTER_FAILURES, ShimConf.DEFAULT_RESTART_AFTER_FAILURES),
          afterMs, why -> supervisor.restartUnresponsive(why, afterMs));
    }
    supervisor.start();
    return supervisor;
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

  private static Path writePrivateToken(String token) throws IOException {
    Path dir = Files.createTempDirectory("yarn-drf-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path file = dir.resolve("token");
    Files.write(file, token.getBytes(StandardCharsets.UTF_8));
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    file.toFile().deleteOnExit();
    dir.toFile().deleteOnExit();
    return file;
  }

  private static String currentPid() {
    String name = ManagementFactory.getRuntimeMXBean().getName();
    return name.substring(0, name.indexOf('@'));
  }
}

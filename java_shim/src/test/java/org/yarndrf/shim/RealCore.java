package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.fail;
import static org.yarndrf.shim.Waits.until;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.yarndrf.shim.bridge.LiveProcesses;

/**
 * The real Python core for tests that run the scheduler with it, as a ResourceManager does: the
 * project venv's `yarn-drf serve` (the pom's yarndrf.serve-command), started by the shim as its
 * child, on the queue file written here. Each instance has its own queue file, whose path, passed
 * to the child as `--queues`, finds the child's processes ({@link #liveCores}).
 */
final class RealCore {
  /** A queue file with the leaf `a` for anyone and `b` for alice only. */
  static final String QUEUES = "resources: [memory-mb, vcores]\n"
      + "placement:\n  - rule: specified\n  - rule: reject\n"
      + "queues:\n  root:\n    submit-acl: \" \"\n    admin-acl: \" \"\n    children:\n"
      + "      a:\n        weight: 2\n        submit-acl: \"*\"\n"
      + "      b:\n        submit-acl: alice\n";

  private final Path dir;
  final Path queues;

  RealCore(Path dir) throws IOException {
    this.dir = dir;
    this.queues = write("queues.yaml", QUEUES);
  }

  /** `yarn-drf serve` as the venv installs it, split as yarn-drf.serve.command is. */
  static String serveCommand() {
    String command = System.getProperty("yarndrf.serve-command");
    if (command == null || !Files.isExecutable(Paths.get(command.split("\\s+")[0]))) {
      fail("the real core is missing (" + command + "): run `make venv`, or `make shim`, which "
          + "builds it first");
    }
    return command;
  }

  /**
   * A conf whose RMs start the real core on any free bridge and status port, through a wrapper
   * that sleeps `delaySeconds` before it execs the core: a core slow to bind. Calls offer nodes
   * between heartbeats.
   */
  <T extends Configuration> T configure(T conf, double delaySeconds) throws IOException {
    Path wrapper = write("slow-serve", "#!/bin/sh\nsleep " + delaySeconds + "\nexec "
        + serveCommand() + " \"$@\"\n");
    Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwx------"));
    conf.set(ShimConf.SERVE_COMMAND, wrapper + " --status-port 0");
    conf.set(ShimConf.QUEUES_FILE, queues.toString());
    conf.setInt(ShimConf.PORT, 0);
    conf.set(ShimConf.SERVE_LOG, dir.resolve("serve.log").toString());
    // The tests place AMs with AsyncApps and drive no NodeManager heartbeats.
    conf.setBoolean(ShimConf.OFFER_BETWEEN_HEARTBEATS, true);
    // What they check is what a snapshot or a reload does, not how long it may take: under a CPU
    // hog a refresh's answer took over the default second (StoreQueuesFileTest: "outcome unknown").
    conf.setInt(ShimConf.SNAPSHOT_TIMEOUT_MS, 30_000);
    return conf;
  }

  /** A non-HA RM's conf with yarn-drf as its scheduler and this core, as {@link #configure}. */
  YarnConfiguration rmConf(double delaySeconds) throws IOException {
    YarnConfiguration conf = configure(new YarnConfiguration(), delaySeconds);
    conf.set(YarnConfiguration.RM_SCHEDULER, YarnDrfScheduler.class.getName());
    return conf;
  }

  Path write(String name, String text) throws IOException {
    return Files.write(dir.resolve(name), text.getBytes(StandardCharsets.UTF_8));
  }

  /** The processes started for this core's queue file: the wrapper, then the core it became. */
  Map<Integer, List<String>> liveCores() throws IOException {
    return LiveProcesses.withArgument(queues.toString());
  }

  /** Waits for `condition`, as long as the core's start may take on a loaded machine. */
}

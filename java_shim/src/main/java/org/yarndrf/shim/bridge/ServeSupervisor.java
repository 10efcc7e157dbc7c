package org.yarndrf.shim.bridge;

import java.io.File;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts `yarn-drf serve` as a child of the ResourceManager and restarts it, with backoff,
 * whenever it exits, or when it is alive but no longer answers ({@link #restartUnresponsive}).
 * The child is told the RM's pid so it exits if the RM dies without stopping it (SIGKILL),
 * instead of holding the bridge port against the next RM. Each child is started with the command
 * line as it is then (the queue file may have changed since the last one) and reports its ports
 * afresh ({@link ServePorts}).
 *
 * <p>{@link #stop} returns within STOP_GRACE_MS + KILL_WAIT_MS + THREAD_WAIT_MS: the RM
 * stops its scheduler at every transition to standby, and a child still running afterwards would
 * hold its port and the RM's memory against the next active one.
 */
public final class ServeSupervisor {
  private static final Logger LOG = LoggerFactory.getLogger(ServeSupervisor.class);
  /** `yarn-drf serve`'s exit status when the bridge port, or its status port, is taken. */
  static final int EXIT_BRIDGE_PORT_TAKEN = 3;
  static final int EXIT_STATUS_PORT_TAKEN = 4;
  /** `yarn-drf serve`'s exit status for an invalid queue file, token file or argument. */
  static final int EXIT_BAD_INPUT = 2;
  /** How long a stopped child may take to exit on SIGTERM before it is killed. */
  static final long STOP_GRACE_MS = 300;
  /** How long a killed child is waited for; then the supervising thread, THREAD_WAIT_MS. */
  static final long KILL_WAIT_MS = 200;
  static final long THREAD_WAIT_MS = 100;

  private final Supplier<List<String>> command;
  private final ServePorts ports;
  private final int port;
  private final File logFile;
  private final Backoff backoff;
  private final long healthyAfterMs;
  private volatile boolean stopping;
  private volatile Process process;
  private volatile long startedAtMs;
  /** When (System.nanoTime) the current child was started; 0 before the first. */
  private volatile long startedNanos;
  private volatile String killedBecause;
  private volatile Runnable onRestarted;
  private volatile Runnable onExited = () -> { };
  /** Why the last child exited, or null while none has. */
  private volatile String lastExit;
  private Thread thread;
  public final AtomicLong starts = new AtomicLong();
  public final AtomicLong unresponsiveKills = new AtomicLong();

  /**
   * @param command the full command line of the next child
   * @param ports the ports the children report (forgotten before each start)
   * @param port the bridge port it is told to listen on (0: any), for messages
   * @param logFile where its stdout and stderr go (appended), or null to share the RM's
   */
  public ServeSupervisor(Supplier<List<String>> command, ServePorts ports, int port, File logFile,
      Backoff backoff) {
    this.command = command;
    this.ports = ports;
    this.port = port;
    this.logFile = logFile;
    this.backoff = backoff;
    this.healthyAfterMs = 10_000;
  }

  public synchronized void start() {
    thread = new Thread(this::superviseLoop, "yarn-drf-serve-supervisor");
    thread.setDaemon(true);
    thread.start();
  }

  private void superviseLoop() {
    while (!stopping) {
      long started = System.currentTimeMillis();
      List<String> command = null;
      try {
        command = this.command.get();
        ports.forget();
        ProcessBuilder pb = new ProcessBuilder(command);
        if (logFile != null) {
          pb.redirectErrorStream(true);
          pb.redirectOutput(ProcessBuilder.Redirect.appendTo(logFile));
        } else {
          pb.inheritIO();
        }
        synchronized (this) {
          if (stopping) {
            return;
          }
          process = pb.start();
          startedAtMs = System.currentTimeMillis();
          startedNanos = System.nanoTime();
          killedBecause = null;
        }
        LOG.info("yarn-drf: started core service (start #{}): {}", starts.incrementAndGet(),
            command);
        Runnable restarted = onRestarted;
        if (starts.get() > 1 && restarted != null) {
          restarted.run();
        }
        int code = process.waitFor();
        if (stopping) {
          return;
        }
        lastExit = exitReason(code);
        logExit(code);
        onExited.run();
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        lastExit = "it cannot be started: " + e.getMessage();
        LOG.error("yarn-drf: cannot start core service {}: {}",
            command == null ? "(no command line)" : command, e.toString());
        onExited.run();
      }
      if (System.currentTimeMillis() - started > healthyAfterMs) {
        backoff.succeeded();
      }
      long waitMs = backoff.failed(System.currentTimeMillis());
      try {
        Thread.sleep(waitMs);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void logExit(int code) {
    if (killedBecause != null) {
      LOG.error("yarn-drf: restarting the core service, killed because it was alive but not "
          + "answering: {}", killedBecause);
    } else if (code == EXIT_BRIDGE_PORT_TAKEN) {
      LOG.error("yarn-drf: core service exited: another process holds its bridge port "
          + "127.0.0.1:{}, so it cannot listen there. The shim does not talk to that process (it "
          + "cannot prove it holds the bridge token); find it with `ss -ltnp 'sport = :{}'` and "
          + "stop it, or set yarn-drf.bridge.port. Retrying.", port, port);
    } else if (code == EXIT_STATUS_PORT_TAKEN) {
      LOG.error("yarn-drf: core service exited: another process holds its --status-port (see "
          + "yarn-drf.serve.command); retrying");
    } else {
      LOG.error("yarn-drf: core service exited with code {}; restarting", code);
    }
  }

  /** When (System.nanoTime) the current child was started; 0 before the first start. */
  public long startedNanos() {
    return startedNanos;
  }

  /** Why the last child exited, in a few words, or null while none has exited. */
  public String lastExit() {
    return lastExit;
  }

  private String exitReason(int code) {
    if (killedBecause != null) {
      return "it was killed, alive but not answering: " + killedBecause;
    }
    switch (code) {
      case EXIT_BAD_INPUT:
        return "it exited with status 2: its queue file, token file or arguments are invalid "
            + "(its log says which)";
      case EXIT_BRIDGE_PORT_TAKEN:
        return "it exited with status 3: another process holds the bridge port 127.0.0.1:" + port;
      case EXIT_STATUS_PORT_TAKEN:
        return "it exited with status 4: another process holds its --status-port";
      default:
        return "it exited with status " + code;
    }
  }

  /** Runs `action` on the supervising thread whenever a child exits or cannot be started. */
  public void whenExited(Runnable action) {
    onExited = action;
  }

  /** Runs `action` after every start but the first: the new service knows nothing yet. */
  public void whenRestarted(Runnable action) {
    onRestarted = action;
  }

  /**
   * Kills the child if it has been running for at least `minUptimeMs` (one that is still starting
   * is left alone); the supervising loop then starts a new one. Returns whether it killed.
   */
  public boolean restartUnresponsive(String why, long minUptimeMs) {
    Process p;
    synchronized (this) {
      p = process;
      if (stopping || p == null || !p.isAlive()
          || System.currentTimeMillis() - startedAtMs < minUptimeMs) {
        return false;
      }
      killedBecause = why;
    }
    unresponsiveKills.incrementAndGet();
    LOG.error("yarn-drf: the core service on 127.0.0.1:{} is alive but not answering ({}); "
        + "killing it to restart it", port, why);
    p.destroyForcibly();
    return true;
  }

  /**
   * Stops the child: SIGTERM, then SIGKILL if it has not exited within STOP_GRACE_MS (it holds no
   * state the next core needs: that one starts from YARN's snapshot). No new child starts after.
   */
  public void stop() {
    Process p;
    Thread t;
    synchronized (this) {
      stopping = true;
      p = process;
      t = thread;
    }
    boolean interrupted = false;
    if (p != null) {
      p.destroy();
      try {
        if (!p.waitFor(STOP_GRACE_MS, TimeUnit.MILLISECONDS)) {
          LOG.info("yarn-drf: the core service did not exit within {} ms of SIGTERM; killing it",
              STOP_GRACE_MS);
          p.destroyForcibly();
          p.waitFor(KILL_WAIT_MS, TimeUnit.MILLISECONDS);
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        interrupted = true;
      }
    }
    if (t != null) {
      t.interrupt();
      try {
        t.join(THREAD_WAIT_MS);
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}

package org.yarndrf.shim.bridge;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts `yarn-drf serve` as a child of the ResourceManager and restarts it, with backoff,
 * whenever it exits, or when it is alive but no longer answers ({@link #restartUnresponsive}).
 * The child is told the RM's pid so it exits if the RM dies without stopping it (SIGKILL),
 * instead of holding the bridge port against the next RM.
 */
public final class ServeSupervisor {
  private static final Logger LOG = LoggerFactory.getLogger(ServeSupervisor.class);
  /** `yarn-drf serve`'s exit status when the bridge port, or its status port, is taken. */
  static final int EXIT_BRIDGE_PORT_TAKEN = 3;
  static final int EXIT_STATUS_PORT_TAKEN = 4;

  private final List<String> command;
  private final int port;
  private final File logFile;
  private final Backoff backoff;
  private final long healthyAfterMs;
  private volatile boolean stopping;
  private volatile Process process;
  private volatile long startedAtMs;
  private volatile String killedBecause;
  private volatile Runnable onRestarted;
  private Thread thread;
  public final AtomicLong starts = new AtomicLong();
  public final AtomicLong unresponsiveKills = new AtomicLong();

  /**
   * @param command the full command line of the child
   * @param port the bridge port it is told to listen on, for messages
   * @param logFile where its stdout and stderr go (appended), or null to share the RM's
   */
  public ServeSupervisor(List<String> command, int port, File logFile, Backoff backoff) {
    this.command = new ArrayList<>(command);
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
      try {
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
        logExit(code);
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        LOG.error("yarn-drf: cannot start core service {}: {}", command, e.toString());
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

  public void stop() {
    stopping = true;
    Process p;
    synchronized (this) {
      p = process;
    }
    if (p != null) {
      p.destroy();
      try {
        if (!p.waitFor(5, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    if (thread != null) {
      thread.interrupt();
    }
  }
}

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
 * whenever it exits. The child is told the RM's pid so it exits if the RM dies without
 * stopping it (SIGKILL), instead of holding the bridge port against the next RM.
 */
public final class ServeSupervisor {
  private static final Logger LOG = LoggerFactory.getLogger(ServeSupervisor.class);

  private final List<String> command;
  private final File logFile;
  private final Backoff backoff;
  private final long healthyAfterMs;
  private volatile boolean stopping;
  private volatile Process process;
  private Thread thread;
  public final AtomicLong starts = new AtomicLong();

  /**
   * @param command the full command line of the child
   * @param logFile where its stdout and stderr go (appended), or null to share the RM's
   */
  public ServeSupervisor(List<String> command, File logFile, Backoff backoff) {
    this.command = new ArrayList<>(command);
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
        }
        starts.incrementAndGet();
        LOG.info("yarn-drf: started core service (start #{}): {}", starts.get(), command);
        int code = process.waitFor();
        if (stopping) {
          return;
        }
        LOG.error("yarn-drf: core service exited with code {}; restarting", code);
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

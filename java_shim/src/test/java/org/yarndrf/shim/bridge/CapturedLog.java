package org.yarndrf.shim.bridge;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;

/** The messages one class logs while a test runs (attached on creation, detached by close). */
public final class CapturedLog extends AppenderSkeleton implements AutoCloseable {
  public final List<String> lines = Collections.synchronizedList(new ArrayList<String>());
  private final Logger logger;

  private CapturedLog(Class<?> of) {
    this.logger = Logger.getLogger(of);
  }

  public static CapturedLog of(Class<?> of) {
    CapturedLog log = new CapturedLog(of);
    log.logger.addAppender(log);
    return log;
  }

  @Override
  protected void append(LoggingEvent event) {
    lines.add(event.getRenderedMessage());
  }

  @Override
  public void close() {
    logger.removeAppender(this);
  }

  @Override
  public boolean requiresLayout() {
    return false;
  }

  /** Whether a line with `needle` has been logged. */
  public boolean has(String needle) {
    synchronized (lines) {
      for (String l : lines) {
        if (l.contains(needle)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Waits (up to five seconds) for a line with `needle`; whether it came. */
  public boolean waitFor(String needle) throws InterruptedException {
    for (int i = 0; i < 200 && !has(needle); i++) {
      Thread.sleep(25);
    }
    return has(needle);
  }
}

package org.apache.hadoop.yarn.sls.scheduler;

import com.codahale.metrics.Timer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;

/**
 * SLS keeps its scheduler timers and its metrics shutdown package-private (its own wrappers live
 * in this package). This one class sits in the same package, on the plain classpath, so the
 * yarn-drf wrapper and the benchmark runner can reach them without copying SLS code.
 */
public final class SlsMetricsAccess {
  private SlsMetricsAccess() {
  }

  public static Timer allocateTimer(SchedulerMetrics metrics) {
    return metrics.getSchedulerAllocateTimer();
  }

  public static Timer handleTimer(SchedulerMetrics metrics, SchedulerEventType type) {
    return metrics.getSchedulerHandleTimer(type);
  }

  /**
   * Works around a race in SLS itself: the RM handles an attempt's first allocate (the AM ask)
   * on another thread, possibly before SLSSchedulerCommons has mapped the attempt to its queue,
   * and books that call under queue null. FairSchedulerMetrics then throws a
   * NullPointerException out of allocate, and the AM is never scheduled, so the run never ends.
   * Registering "null" as a tracked queue with its counters lets those calls be booked there.
   * It changes no scheduling, only where SLS counts that one call.
   */
  public static void tolerateUnmappedQueue(SchedulerMetrics metrics)
      throws ReflectiveOperationException {
    java.lang.reflect.Field f = SchedulerMetrics.class.getDeclaredField("trackedQueues");
    f.setAccessible(true);
    @SuppressWarnings("unchecked")
    java.util.Set<String> tracked = (java.util.Set<String>) f.get(metrics);
    // The counter names of SchedulerMetrics.QueueMetric (a private enum).
    for (String m : new String[] {"pending.memory", "pending.cores", "allocated.memory",
        "allocated.cores"}) {
      metrics.getMetrics().counter("counter.queue.null." + m);
    }
    tracked.add(null);
  }

  public static void stopMetrics(SLSSchedulerCommons commons) {
    commons.stopMetrics();
  }
}

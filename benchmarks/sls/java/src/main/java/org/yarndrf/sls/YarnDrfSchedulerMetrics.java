package org.yarndrf.sls;

import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;

/**
 * SLS's metrics for the yarn-drf scheduler. SchedulerMetrics already records every generic figure
 * (allocate/handle timers, cluster and queue gauges); the subclasses SLS ships only add
 * scheduler-specific gauges and cast to their own scheduler, so this one adds nothing.
 * SLS finds it through the configuration key named after the scheduler class
 * (org.yarndrf.shim.YarnDrfScheduler), which SlsYarnDrfScheduler sets when it is unset.
 */
public class YarnDrfSchedulerMetrics extends SchedulerMetrics {
}

package org.yarndrf.sls;

import java.io.IOException;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.scheduler.SLSSchedulerCommons;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerWrapper;
import org.apache.hadoop.yarn.sls.scheduler.SlsMetricsAccess;
import org.apache.hadoop.yarn.sls.scheduler.Tracker;
import org.yarndrf.shim.YarnDrfScheduler;

/**
 * The yarn-drf scheduler as Hadoop's Scheduler Load Simulator needs it: SLS casts the RM's
 * scheduler to SchedulerWrapper and times every event and allocate call through
 * SLSSchedulerCommons. Same shape as SLS's own SLSFairScheduler; the scheduling itself is the
 * unchanged shim. Set it as yarn.resourcemanager.scheduler.class in SLS runs only.
 */
public class SlsYarnDrfScheduler extends YarnDrfScheduler implements SchedulerWrapper {
  /** SLS looks the metrics class up under the name of the class passed to initMetrics. */
  public static final String METRICS_KEY = YarnDrfScheduler.class.getName();

  private final SLSSchedulerCommons commons;
  private SLSRunner runner;

  public SlsYarnDrfScheduler() {
    commons = new SLSSchedulerCommons(this);
  }

  @Override
  public synchronized void setConf(Configuration conf) {
    super.setConf(conf);
    if (conf.get(METRICS_KEY) == null) {
      conf.set(METRICS_KEY, YarnDrfSchedulerMetrics.class.getName());
    }
    commons.initMetrics(YarnDrfScheduler.class, conf);
  }

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> asks,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release,
      List<String> blacklistAdditions, List<String> blacklistRemovals,
      ContainerUpdates updateRequests) {
    return AllocationProbe.probed(attemptId, asks, () -> commons.allocate(attemptId, asks,
        schedulingRequests, release, blacklistAdditions, blacklistRemovals, updateRequests));
  }

  @Override
  public void handle(SchedulerEvent event) {
    commons.handle(event);
  }

  @Override
  public void propagatedHandle(SchedulerEvent event) {
    super.handle(event);
  }

  @Override
  public Allocation allocatePropagated(ApplicationAttemptId attemptId,
      List<ResourceRequest> asks, List<SchedulingRequest> schedulingRequests,
      List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    return super.allocate(attemptId, asks, schedulingRequests, release, blacklistAdditions,
        blacklistRemovals, updateRequests);
  }

  @Override
  public void serviceStop() throws Exception {
    SlsMetricsAccess.stopMetrics(commons);
    super.serviceStop();
  }

  /**
   * The queue's name as the scheduler reports it, for SLS's per-queue tracking only. The shim
   * learns its queue tree from the core on its first exchange, which may come after SLS asks;
   * until then the name is passed through unchanged. Placement stays the core's: an app sent
   * to a queue the YAML lacks is still rejected at submission.
   */
  @Override
  public String getRealQueueName(String queue) throws YarnException {
    try {
      return getQueueInfo(queue, false, false).getQueueName();
    } catch (IOException notKnownYet) {
      return queue;
    }
  }

  @Override
  public SchedulerMetrics getSchedulerMetrics() {
    return commons.getSchedulerMetrics();
  }

  @Override
  public Tracker getTracker() {
    return commons.getTracker();
  }

  @Override
  public void setSLSRunner(SLSRunner runner) {
    this.runner = runner;
  }

  @Override
  public SLSRunner getSLSRunner() {
    return runner;
  }
}

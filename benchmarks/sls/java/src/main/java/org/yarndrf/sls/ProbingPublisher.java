package org.yarndrf.sls;

import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.server.resourcemanager.metrics.SystemMetricsPublisher;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;

/**
 * The RM's SystemMetricsPublisher with the {@link AllocationProbe} told of every container
 * allocated and ended; everything goes on to the publisher the RM had.
 */
final class ProbingPublisher implements SystemMetricsPublisher {
  private final SystemMetricsPublisher next;
  private final AllocationProbe probe;

  ProbingPublisher(SystemMetricsPublisher next, AllocationProbe probe) {
    this.next = next;
    this.probe = probe;
  }

  @Override
  public void containerCreated(RMContainer container, long createdTime) {
    probe.allocated(container);
    next.containerCreated(container, createdTime);
  }

  @Override
  public void containerFinished(RMContainer container, long finishedTime) {
    probe.finished(container);
    next.containerFinished(container, finishedTime);
  }

  @Override
  public void appCreated(RMApp app, long createdTime) {
    next.appCreated(app, createdTime);
  }

  @Override
  public void appLaunched(RMApp app, long launchTime) {
    next.appLaunched(app, launchTime);
  }

  @Override
  public void appACLsUpdated(RMApp app, String appViewACLs, long updatedTime) {
    next.appACLsUpdated(app, appViewACLs, updatedTime);
  }

  @Override
  public void appUpdated(RMApp app, long updatedTime) {
    next.appUpdated(app, updatedTime);
  }

  @Override
  public void appStateUpdated(RMApp app, YarnApplicationState appState, long updatedTime) {
    next.appStateUpdated(app, appState, updatedTime);
  }

  @Override
  public void appFinished(RMApp app, RMAppState state, long finishedTime) {
    next.appFinished(app, state, finishedTime);
  }

  @Override
  public void appAttemptRegistered(RMAppAttempt appAttempt, long registeredTime) {
    next.appAttemptRegistered(appAttempt, registeredTime);
  }

  @Override
  public void appAttemptFinished(RMAppAttempt appAttempt, RMAppAttemptState appAttemtpState,
      RMApp app, long finishedTime) {
    next.appAttemptFinished(appAttempt, appAttemtpState, app, finishedTime);
  }
}

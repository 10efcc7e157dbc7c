package org.yarndrf.sls;

import java.util.List;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.sls.scheduler.SLSFairScheduler;

/** SLS's FairScheduler, with each AM's asks told to the {@link AllocationProbe}. */
public class ProbedFairScheduler extends SLSFairScheduler {
  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> asks,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release,
      List<String> blacklistAdditions, List<String> blacklistRemovals,
      ContainerUpdates updateRequests) {
    return AllocationProbe.probed(attemptId, asks, () -> super.allocate(attemptId, asks,
        schedulingRequests, release, blacklistAdditions, blacklistRemovals, updateRequests));
  }
}

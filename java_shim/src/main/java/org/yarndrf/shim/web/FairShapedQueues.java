package org.yarndrf.shim.web;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.yarndrf.shim.ShimQueue;
import org.yarndrf.shim.YarnDrfScheduler;

/**
 * yarn-drf's queue tree as {@code /ws/v1/cluster/scheduler} answers it, in FairScheduler's shape
 * ({@code schedulerInfo.type} "fairScheduler", {@code rootQueue} with {@code childQueues.queue}):
 * the shape whose readers (YARN UI2's fair-queue serializer, monitoring tools) expect a weighted
 * fair scheduler's figures, which yarn-drf's are. CapacityScheduler's shape would need capacities
 * per partition that a weight does not give.
 *
 * <p>Every figure is what the RM already holds (the queue tree and settings of the core's last
 * reply, YARN's queue metrics, the usage the shim counts): building the document calls nothing
 * across the bridge. yarn-drf's own figures are added under names FairScheduler does not use
 * ({@code drf*}). The document is plain maps and lists, in the order FairScheduler writes them.
 */
final class FairShapedQueues {
  private FairShapedQueues() {
  }

  /** The whole answer: {"scheduler": {"schedulerInfo": {...}}}. */
  static Map<String, Object> document(YarnDrfScheduler scheduler) {
    Resource cluster = scheduler.getClusterResource();
    Map<String, Object> info = new LinkedHashMap<>();
    info.put("type", "fairScheduler");
    info.put("rootQueue", queue(scheduler, scheduler.rootQueue(), cluster, 1.0));
    Map<String, Object> wrapper = new LinkedHashMap<>();
    wrapper.put("schedulerInfo", info);
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("scheduler", wrapper);
    return doc;
  }

  /**
   * One queue and the queues below it. `steady` is its weight's part of the cluster: the
   * weight-proportional share of its parent's, whatever the demand (FairScheduler's steady fair
   * share).
   */
  private static Map<String, Object> queue(YarnDrfScheduler scheduler, ShimQueue q,
      Resource cluster, double steady) {
    QueueMetrics m = q.getMetrics();
    Resource used = q.getUsed();
    Resource pending = m.getPendingResources();
    Map<String, Object> out = new LinkedHashMap<>();
    if (q.isLeaf()) {
      out.put("type", "fairSchedulerLeafQueueInfo");
    }
    out.put("maxApps", Integer.MAX_VALUE);  // max-running-apps is the core's: see its status server
    out.put("minResources", resource(Resources.none(), cluster));
    out.put("maxResources", resource(q.maxResources(cluster), cluster));
    out.put("usedResources", resource(used, cluster));
    out.put("demandResources", resource(Resources.add(used, pending), cluster));
    Resource steadyShare = Resources.multiply(cluster, steady);
    out.put("steadyFairResources", resource(steadyShare, cluster));
    out.put("fairResources", resource(steadyShare, cluster));
    out.put("clusterResources", resource(cluster, cluster));
    out.put("reservedResources", resource(m.getReservedResources(), cluster));
    out.put("maxContainerAllocation",
        resource(scheduler.getMaximumResourceCapability(q.getQueueName()), cluster));
    out.put("allocatedContainers", (long) m.getAllocatedContainers());
    out.put("reservedContainers", (long) m.getReservedContainers());
    out.put("pendingContainers", (long) m.getPendingContainers());
    out.put("queueName", q.getQueueName());
    out.put("schedulingPolicy", "drf");
    out.put("preemptable", true);
    out.put("drfWeight", q.weight());
    out.put("drfDominantShare", ShimQueue.dominantShare(used, cluster));
    out.put("drfSteadyShare", steady);
    out.put("drfState", q.isRemoved() ? "draining" : "active");
    if (q.isLeaf()) {
      out.put("numPendingApps", m.getAppsPending());
      out.put("numActiveApps", m.getAppsRunning());
    } else {
      List<Object> children = new ArrayList<>();
      double weights = 0;
      for (ShimQueue c : q.getChildren()) {
        weights += shown(c) && !c.isRemoved() ? c.weight() : 0;
      }
      for (ShimQueue c : q.getChildren()) {
        if (shown(c)) {
          double part = c.isRemoved() || weights <= 0 ? 0 : c.weight() / weights;
          children.add(queue(scheduler, c, cluster, steady * part));
        }
      }
      Map<String, Object> list = new LinkedHashMap<>();
      list.put("queue", children);
      out.put("childQueues", list);
    }
    return out;
  }

  /** A queue the file no longer has stays listed while its apps still run (draining). */
  private static boolean shown(ShimQueue q) {
    return !q.isRemoved() || q.getMetrics().getAppsRunning() + q.getMetrics().getAppsPending() > 0;
  }

  /** As YARN's ResourceInfo writes one: memory and vCores, then every type of the cluster. */
  static Map<String, Object> resource(Resource r, Resource cluster) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("memory", r.getMemorySize());
    out.put("vCores", (long) r.getVirtualCores());
    List<Object> types = new ArrayList<>();
    for (ResourceInformation type : cluster.getResources()) {
      Map<String, Object> t = new LinkedHashMap<>();
      t.put("name", type.getName());
      t.put("resourceType", type.getResourceType().toString());
      t.put("units", type.getUnits());
      t.put("value", valueOf(r, type.getName()));
      types.add(t);
    }
    Map<String, Object> infos = new LinkedHashMap<>();
    infos.put("resourceInformation", types);
    out.put("resourceInformations", infos);
    return out;
  }

  private static long valueOf(Resource r, String type) {
    try {
      return r.getResourceValue(type);
    } catch (RuntimeException e) {
      return 0;
    }
  }
}

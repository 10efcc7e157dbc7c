package org.yarndrf.shim;

import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether an application's exclusions (YARN's blacklist) cover a node. An AM names excluded
 * places by YARN's node name or rack, or, as Spark's health tracker does, by host name alone.
 * YARN compares the list with the node's name and rack only; with
 * yarn.scheduler.include-port-in-node-name (several NodeManagers on one host) the node name
 * carries the port and a host name would match no node, so the exclusion would be ignored. Here
 * it excludes every NodeManager on that host, which is what excluding a host means.
 */
final class Exclusions {
  private static final Logger LOG = LoggerFactory.getLogger(Exclusions.class);

  private Exclusions() {
  }

  static boolean excludes(SchedulerApplicationAttempt app, SchedulerNode node) {
    return SchedulerAppUtils.isPlaceBlacklisted(app, node, LOG)
        || app.isPlaceBlacklisted(node.getNodeID().getHost());
  }
}

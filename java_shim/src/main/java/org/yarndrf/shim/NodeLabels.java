package org.yarndrf.shim;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeLabel;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;

/**
 * The cluster's node labels (partitions) as YARN's RMNodeLabelsManager has them, and which of
 * them the core was last told. `yarn rmadmin -addToClusterNodeLabels` and
 * `-removeFromClusterNodeLabels` change them without a scheduler event, so the scheduling loop
 * looks at every call (a few labels, read under the manager's read lock; none while node labels
 * are disabled); a node's own label comes with NODE_LABELS_UPDATE. Used under the scheduler's lock.
 */
final class NodeLabels {
  private final Supplier<RMNodeLabelsManager> manager;
  private Map<String, Boolean> told = Collections.emptyMap();

  /** `manager`: the RM's (null while there is none, or node labels are disabled). */
  NodeLabels(Supplier<RMNodeLabelsManager> manager) {
    this.manager = manager;
  }

  /** The cluster's labels, name -> exclusive, if they differ from those the core has; else null. */
  Map<String, Boolean> changed() {
    Map<String, Boolean> now = current();
    if (now.equals(told)) {
      return null;
    }
    told = now;
    return now;
  }

  /**
   * A node joined: YARN's labels manager counts it from now on, and only then tells the
   * scheduler of its label changes (NODE_LABELS_UPDATE). The scheduler must say so, as
   * CapacityScheduler does: the manager learns of NodeManagers from nobody else.
   */
  void activate(NodeId node, Resource total) {
    RMNodeLabelsManager m = manager.get();
    if (m != null) {
      m.activateNode(node, total);
    }
  }

  /** A node left: the manager stops counting it (and keeps its labels for its return). */
  void deactivate(NodeId node) {
    RMNodeLabelsManager m = manager.get();
    if (m != null) {
      m.deactivateNode(node);
    }
  }

  /** The cluster's labels for a snapshot, which the core then has. */
  Map<String, Boolean> forSnapshot() {
    told = current();
    return told;
  }

  /** The core must be told the labels again (its state is gone until the next snapshot). */
  void forget() {
    told = Collections.emptyMap();
  }

  /** A node's partition: its one label (YARN allows one per node), "" for none. */
  static String partitionOf(Set<String> labels) {
    return labels == null || labels.isEmpty() ? RMNodeLabelsManager.NO_LABEL
        : labels.iterator().next();
  }

  private Map<String, Boolean> current() {
    RMNodeLabelsManager m = manager.get();
    if (m == null) {
      return Collections.emptyMap();
    }
    Map<String, Boolean> out = new TreeMap<>();
    for (NodeLabel label : m.getClusterNodeLabels()) {
      if (!label.getName().isEmpty()) {
        out.put(label.getName(), label.isExclusive());
      }
    }
    return out;
  }
}

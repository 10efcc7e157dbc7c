package org.yarndrf.shim;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeLabel;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;

/**
 * The cluster's node labels (partitions) as YARN's RMNodeLabelsManager has them, and which of
 * them the core was last told. `yarn rmadmin -addToClusterNodeLabels` and
 * `-removeFromClusterNodeLabels` change them without a scheduler event, so the scheduling loop
 * looks at every call (a few labels, read under the manager's read lock; none while node labels
 * are disabled), and at each node's label once a second. Used under the scheduler's lock.
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
   * A node's label now, as the manager has it ("" for none). The scheduler does not activate
   * nodes in the manager as CapacityScheduler does (activated, the manager's per-partition figures
   * make FiCaSchedulerApp's usage report cast the queue to a CapacityScheduler queue), so the
   * manager announces no label change (NODE_LABELS_UPDATE): the loop asks it ({@link #due}).
   */
  String labelOf(NodeId node) {
    RMNodeLabelsManager m = manager.get();
    return m == null ? RMNodeLabelsManager.NO_LABEL : partitionOf(m.getLabelsOnNode(node));
  }

  /** Whether the nodes' labels are to be read again: at most once a second, while labels are on. */
  boolean due(long nowMs) {
    if (manager.get() == null || nowMs - lastRead < READ_EVERY_MS) {
      return false;
    }
    lastRead = nowMs;
    return true;
  }

  private static final long READ_EVERY_MS = 1000;
  private long lastRead = Long.MIN_VALUE / 2;

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

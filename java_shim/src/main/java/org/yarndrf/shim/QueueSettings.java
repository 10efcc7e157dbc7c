package org.yarndrf.shim;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.security.authorize.AccessControlList;

/** One entry of the core's queue list (docs/bridge.md, "queues"), as Messages.queues read and checked it. */
public final class QueueSettings {
  final String path;
  final boolean leaf;
  /** The weight YARN reports (QueueInfo): the number, or the largest per-resource weight. */
  final double weight;
  /** Per-resource max: an absolute amount, or a fraction of the cluster. */
  final Map<String, Long> maxAmounts;
  final Map<String, Double> maxFractions;
  /** The whole-queue max as a fraction of the cluster; NaN if none. */
  final double maxFraction;
  /** The largest container an app of this queue may ask for, per resource type (inherited). */
  final Map<String, Long> maxContainer;
  /** Parsed here by Hadoop's own class, from the text the core parsed with the same rules. */
  final AccessControlList submitAcl;
  final AccessControlList adminAcl;
  /** accessible-node-labels as the core inherited them: label names, or {@link #ALL_LABELS}. */
  final Set<String> accessibleLabels;
  /** default-node-label-expression as the core inherited it; "" for the default partition. */
  final String defaultLabel;
  /** YARN's "every label" (RMNodeLabelsManager.ANY), as accessible-node-labels writes it too. */
  static final String ALL_LABELS = "*";

  QueueSettings(String path, boolean leaf, double weight, Map<String, Long> maxAmounts,
      Map<String, Double> maxFractions, double maxFraction, Map<String, Long> maxContainer,
      String submitAcl, String adminAcl, Set<String> accessibleLabels, String defaultLabel) {
    this(path, leaf, weight, maxAmounts, maxFractions, maxFraction, maxContainer,
        new AccessControlList(submitAcl), new AccessControlList(adminAcl), accessibleLabels,
        defaultLabel);
  }

  private QueueSettings(String path, boolean leaf, double weight, Map<String, Long> maxAmounts,
      Map<String, Double> maxFractions, double maxFraction, Map<String, Long> maxContainer,
      AccessControlList submitAcl, AccessControlList adminAcl, Set<String> accessibleLabels,
      String defaultLabel) {
    this.path = path;
    this.leaf = leaf;
    this.weight = weight;
    this.maxAmounts = Collections.unmodifiableMap(maxAmounts);
    this.maxFractions = Collections.unmodifiableMap(maxFractions);
    this.maxFraction = maxFraction;
    this.maxContainer = Collections.unmodifiableMap(maxContainer);
    this.submitAcl = submitAcl;
    this.adminAcl = adminAcl;
    this.accessibleLabels = Collections.unmodifiableSet(accessibleLabels);
    this.defaultLabel = defaultLabel;
  }

  /** A queue YARN knows before the core has described it: weight 1, no max, nobody in its ACLs. */
  static QueueSettings defaults(String path) {
    return new QueueSettings(path, false, 1.0, new HashMap<>(), new HashMap<>(), Double.NaN,
        new HashMap<>(), "", "", Collections.singleton(ALL_LABELS), "");
  }

  /** Nobody, as a created leaf's own ACLs say: one instance, never changed, for them all. */
  private static final AccessControlList NOBODY = new AccessControlList("");

  /**
   * The settings of a leaf the core created with a created leaf's settings under the queue of
   * `parent` (a schedule reply's "queues_created"): weight 1, no max, nobody in its own ACLs
   * (YARN's ACL rules give it its ancestors'), and its parent's max-container and node labels,
   * as the core builds it (scheduler.config.CREATED).
   */
  static QueueSettings createdUnder(QueueSettings parent, String path) {
    return new QueueSettings(path, true, 1.0, Collections.emptyMap(), Collections.emptyMap(),
        Double.NaN, parent.maxContainer, NOBODY, NOBODY, parent.accessibleLabels,
        parent.defaultLabel);
  }

  /** The configured maximum of one resource type, or -1 if unlimited (as the core computes it). */
  long limitFor(String resource, long clusterAmount) {
    Long amount = maxAmounts.get(resource);
    if (amount != null) {
      return amount;
    }
    double fraction = maxFractions.getOrDefault(resource, maxFraction);
    return Double.isNaN(fraction) ? -1 : (long) (fraction * clusterAmount);
  }
}

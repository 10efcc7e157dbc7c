package org.yarndrf.shim;

import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.records.NodeAttribute;
import org.apache.hadoop.yarn.api.records.NodeAttributeKey;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.nodelabels.AttributeValue;
import org.apache.hadoop.yarn.nodelabels.NodeAttributesManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.nm.GpuCards;

/**
 * The GPU cards each node's NodeManager declares (the node attribute nm.yarn.io/{@value
 * GpuCards#ATTRIBUTE}, {@link GpuCards}), as YARN's NodeAttributesManager has them: read when a
 * node joins and when its attributes change, remembered for the snapshot and for checking the
 * core's card choices. YARN keeps node attributes per host, so every NodeManager of a host has
 * the host's cards. A value that is no card list is logged and the node has no cards (its GPU
 * memory is one node total). Used under the scheduler's lock.
 */
final class NodeCards {
  private static final Logger LOG = LoggerFactory.getLogger(NodeCards.class);

  private final Supplier<NodeAttributesManager> attributes;
  private final Map<NodeId, List<Long>> known = new HashMap<>();

  /** `attributes`: the RM's NodeAttributesManager (null: no node has cards). */
  NodeCards(Supplier<NodeAttributesManager> attributes) {
    this.attributes = attributes;
  }

  /** A node that joined: its cards now (null: none), remembered. */
  List<Long> added(NodeId node) {
    List<Long> cards = declared(node);
    if (cards != null) {
      known.put(node, cards);
    }
    return cards;
  }

  /**
   * A node whose attributes may have changed: its cards if they did change (empty: it declares
   * none any more), else null.
   */
  List<Long> changed(NodeId node) {
    List<Long> now = declared(node);
    List<Long> before = now == null ? known.remove(node) : known.put(node, now);
    if (Objects.equals(now, before)) {
      return null;
    }
    return now == null ? Collections.<Long>emptyList() : now;
  }

  void removed(NodeId node) {
    known.remove(node);
  }

  /** The node's cards as last read (null: none). */
  List<Long> of(NodeId node) {
    return known.get(node);
  }

  private List<Long> declared(NodeId node) {
    NodeAttributesManager manager = attributes.get();
    if (manager == null) {
      return null;
    }
    for (Map.Entry<NodeAttribute, AttributeValue> e
        : manager.getAttributesForNode(node.getHost()).entrySet()) {
      NodeAttributeKey key = e.getKey().getAttributeKey();
      if (GpuCards.DISTRIBUTED_PREFIX.equals(key.getAttributePrefix())
          && GpuCards.ATTRIBUTE.equals(key.getAttributeName())) {
        try {
          return GpuCards.sizes(e.getValue().getValue());
        } catch (IllegalArgumentException bad) {
          LOG.warn("yarn-drf: node {}: node attribute {}/{}={} ignored, its GPU memory is one node total: {}",
              node, GpuCards.DISTRIBUTED_PREFIX, GpuCards.ATTRIBUTE, e.getValue().getValue(),
              bad.getMessage());
          return null;
        }
      }
    }
    return null;
  }
}

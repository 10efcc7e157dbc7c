package org.yarndrf.shim;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.nm.GpuCards;
import org.yarndrf.shim.RequestValues.ContainerRow;

/**
 * YARN's records as the bridge's values ({@link RequestValues}) and back: not the wire format (the
 * spec generates that), but what the shim reads from the RM to fill it.
 */
final class YarnRecords {
  private static final Logger LOG = LoggerFactory.getLogger(YarnRecords.class);

  private YarnRecords() {
  }

  /** {name: amount} in name order: capacities in snapshots and node deltas. */
  static Map<String, Long> amounts(Resource r) {
    Map<String, Long> out = new TreeMap<>();
    for (ResourceInformation ri : r.getResources()) {
      out.put(ri.getName(), ri.getValue());
    }
    return out;
  }

  /** Amounts in YARN's resource type order, the order of the snapshot's "resources". */
  static long[] vector(Resource r) {
    ResourceInformation[] infos = r.getResources();
    long[] out = new long[infos.length];
    for (int i = 0; i < infos.length; i++) {
      out[i] = infos[i].getValue();
    }
    return out;
  }

  /**
   * The inverse of {@link #vector}: amounts in YARN's resource type order (a headroom, an ask's
   * shape) as a Resource; null if they are not one per type.
   */
  static Resource resource(long[] amounts) {
    ResourceInformation[] types = ResourceUtils.getResourceTypesArray();
    if (amounts.length != types.length) {
      LOG.warn("yarn-drf: headroom of {} amounts for {} resource types ignored", amounts.length,
          types.length);
      return null;
    }
    Resource r = Resource.newInstance(0, 0);
    for (int i = 0; i < amounts.length; i++) {
      r.setResourceValue(i, amounts[i]);
    }
    return r;
  }

  /**
   * A container YARN runs: one the core assigned (`assignmentId`) or not (null: recovered), with
   * the cards of its allocation tag. The tag is in the container's record: set by the shim when it
   * allocated the container, and after a work-preserving RM restart from the NodeManager's report
   * (NMContainerStatus carries the token's allocation tags; the RM's recovery puts them back).
   */
  static ContainerRow containerRow(RMContainer c, String assignmentId) {
    return new ContainerRow(c.getContainerId().toString(),
        c.getApplicationAttemptId().getApplicationId().toString(), c.getAllocatedNode().toString(),
        c.getAllocatedSchedulerKey().getPriority().getPriority(),
        c.getAllocatedSchedulerKey().getAllocationRequestId(), assignmentId,
        vector(c.getAllocatedResource())).withCards(tagCards(c));
  }

  /** The cards a container's allocation tag names, or null (no tag, or one that names no cards). */
  private static List<Integer> tagCards(RMContainer c) {
    Set<String> tags = c.getContainer() == null ? null : c.getContainer().getAllocationTags();
    if (tags == null || tags.isEmpty()) {
      return null;  // every container off card nodes: nothing more on its row
    }
    try {
      return GpuCards.fromTags(tags);
    } catch (IllegalArgumentException e) {
      LOG.warn("yarn-drf: container {}: {}; sent without cards (the core places it by its rule)",
          c.getContainerId(), e.getMessage());
      return null;
    }
  }
}

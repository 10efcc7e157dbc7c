package org.yarndrf.shim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.apache.hadoop.yarn.api.records.RejectedSchedulingRequest;
import org.apache.hadoop.yarn.api.records.RejectionReason;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.api.records.UpdateContainerError;
import org.apache.hadoop.yarn.api.records.UpdateContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;

/**
 * The parts of an AM's allocate call yarn-drf does not serve, answered in that call's response
 * instead of being dropped: an AM that waits for an answer YARN never sends waits for ever.
 *
 * <p>Scheduling requests (placement constraints) reach the scheduler only under
 * {@code yarn.resourcemanager.placement-constraints.handler=scheduler}; each is rejected with
 * {@link RejectionReason#COULD_NOT_PLACE_ON_NODE} while the call's ordinary asks are served. (Under
 * YARN's default handler, {@code disabled}, YARN refuses the whole call itself.) Container updates
 * (increase, decrease, promote, demote) reach it under every handler; each is refused with
 * {@link #UPDATE_REFUSED}, which the AM reads in the response's update errors.
 */
final class RequestRefusals {
  static final String UPDATE_REFUSED = "yarn-drf does not change running containers (no resize,"
      + " promotion or demotion): release the container and ask for one of the size wanted";
  static final String CONSTRAINTS_REFUSED = "yarn-drf does not place by placement constraints"
      + " (scheduling requests): ask with resource requests (node, rack or any) instead";

  private RequestRefusals() {
  }

  /** Each scheduling request rejected; null when there is none, as YARN's schedulers answer. */
  static List<RejectedSchedulingRequest> rejected(List<SchedulingRequest> requests) {
    if (requests == null || requests.isEmpty()) {
      return null;
    }
    List<RejectedSchedulingRequest> out = new ArrayList<>(requests.size());
    for (SchedulingRequest r : requests) {
      out.add(RejectedSchedulingRequest.newInstance(RejectionReason.COULD_NOT_PLACE_ON_NODE, r));
    }
    return out;
  }

  /** Refuses each update request to `attempt`; returns how many there were. */
  static int refuseUpdates(ContainerUpdates updates, Consumer<UpdateContainerError> attempt) {
    if (updates == null) {
      return 0;
    }
    int refused = 0;
    for (List<UpdateContainerRequest> kind : Arrays.asList(updates.getIncreaseRequests(),
        updates.getDecreaseRequests(), updates.getPromotionRequests(),
        updates.getDemotionRequests())) {
      for (UpdateContainerRequest r : kind) {
        attempt.accept(UpdateContainerError.newInstance(UPDATE_REFUSED, r));
        refused++;
      }
    }
    return refused;
  }
}

package org.yarndrf.shim;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Apps submitted and not yet placed by the core, in submission order. They wait in SUBMITTED
 * (YARN has no timeout there) and go with every call until the core answers, so an outage of the
 * core delays them without rejecting them; the core's placement registers each in its queue or
 * rejects it.
 *
 * <p>Locking: every method runs under the scheduler's lock (YARN's events, the loop's collect and
 * commit).
 */
final class Submissions {
  private static final Logger LOG = LoggerFactory.getLogger(Submissions.class);

  /** A submitted app, as the core will be asked to place it. */
  private static final class Submission {
    final boolean unmanagedAM;
    final RequestValues.AppInfo message;

    Submission(boolean unmanagedAM, RequestValues.AppInfo message) {
      this.unmanagedAM = unmanagedAM;
      this.message = message;
    }
  }

  private final YarnDrfScheduler scheduler;
  private final Map<ApplicationId, Submission> awaiting = new LinkedHashMap<>();

  Submissions(YarnDrfScheduler scheduler) {
    this.scheduler = scheduler;
  }

  /** The loop asks the core to place the app with its next call. */
  void add(ApplicationId appId, boolean unmanagedAM, RequestValues.AppInfo message) {
    awaiting.put(appId, new Submission(unmanagedAM, message));
  }

  /** YARN removed the app: a placement on the way for it is undone when it comes. */
  void remove(ApplicationId appId) {
    awaiting.remove(appId);
  }

  boolean isEmpty() {
    return awaiting.isEmpty();
  }

  /** Every app still awaiting placement, into the request. */
  void addTo(RequestValues.Schedule req) {
    for (Submission sub : awaiting.values()) {
      req.submissions.add(sub.message);
    }
  }

  /**
   * Applies the core's placement of a submitted app: registers it in the placed queue, or rejects
   * it (APP_REJECTED with the core's reason, shown by `yarn application -status`). An app YARN
   * removed while its placement was on the way is removed from the core in turn.
   */
  void placed(ReplyValues.Placement p) {
    ApplicationId appId = YarnDrfScheduler.applicationIdOf(p.app);
    Submission sub = appId == null ? null : awaiting.remove(appId);
    if (sub == null) {
      if (p.accepted) {
        scheduler.events.add(RequestValues.Delta.appRemoved(p.app));
      }
      return;
    }
    ShimQueue queue = p.accepted ? scheduler.queues.find(p.queue) : null;
    String refusal = !p.accepted ? (p.reason.isEmpty() ? "refused by placement" : p.reason)
        : queue == null ? "placed in unknown queue " + p.queue : amTooLarge(appId, queue);
    if (refusal == null) {
      scheduler.register(appId, queue, sub.message.user, false, sub.unmanagedAM,
          sub.message.priority);
      return;
    }
    String msg = "yarn-drf rejected application " + appId + " (user " + sub.message.user
        + ", queue " + sub.message.queue + "): " + refusal;
    LOG.info(msg);
    if (p.accepted) {
      // the core took it; YARN does not
      scheduler.events.add(RequestValues.Delta.appRemoved(p.app));
    }
    scheduler.rmContext().getDispatcher().getEventHandler()
        .handle(new RMAppEvent(appId, RMAppEventType.APP_REJECTED, msg));
  }

  /**
   * Why the app's AM cannot run in the queue a placement rule chose (YARN checked it against the
   * queue it named), or null if it fits that queue's max-container.
   */
  private String amTooLarge(ApplicationId appId, ShimQueue queue) {
    RMApp rmApp = scheduler.rmContext().getRMApps().get(appId);
    List<ResourceRequest> amAsks = rmApp == null ? null : rmApp.getAMResourceRequests();
    for (ResourceRequest r : amAsks == null ? Collections.<ResourceRequest>emptyList() : amAsks) {
      String why = queue.refuseContainer(r.getCapability(),
          scheduler.getMaximumResourceCapability());
      if (why != null) {
        return "its AM cannot run in " + queue.getQueueName() + ": " + why;
      }
    }
    return null;
  }
}

package org.yarndrf.shim;

import java.util.List;
import java.util.Map;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.com.google.common.util.concurrent.SettableFuture;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.records.ApplicationStateData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What changes a running app besides its own asks: an operator's priority update and move (`yarn
 * application -updatePriority`, `-movetoqueue`, which YARN hands to the scheduler), and what the
 * core's reply says of each app (its headroom, why its AM waits). The core's preemption plan is
 * {@link Preemptions}'.
 *
 * <p>Locking: the operator's controls run on YARN's client threads and take the scheduler's lock
 * only while they change YARN's records, never while the core is asked; the reply's run under it
 * (the scheduling loop's commit).
 */
final class AppControls {
  private static final Logger LOG = LoggerFactory.getLogger(AppControls.class);

  private final YarnDrfScheduler scheduler;

  AppControls(YarnDrfScheduler scheduler) {
    this.scheduler = scheduler;
  }

  // ---------------------------------------------------------------- application priority

  /**
   * `yarn application -updatePriority`: stored for an RM restart (as CapacityScheduler does) and
   * sent to the core, which orders a fifo leaf by it from its next decision.
   */
  Priority updatePriority(Priority newPriority, ApplicationId applicationId,
      SettableFuture<Object> future, UserGroupInformation user) throws YarnException {
    Priority priority;
    synchronized (scheduler) {
      SchedulerApplication<ShimAppAttempt> application =
          scheduler.getSchedulerApplications().get(applicationId);
      RMApp rmApp = scheduler.rmContext().getRMApps().get(applicationId);
      if (application == null || rmApp == null) {
        throw new YarnException("Application '" + applicationId
            + "' is not present, hence could not change priority.");
      }
      priority = scheduler.checkAndGetApplicationPriority(newPriority, user, rmApp.getQueue(),
          applicationId);
      if (priority.equals(application.getPriority())) {
        future.set(null);
        return priority;
      }
      rmApp.getApplicationSubmissionContext().setPriority(priority);
      ApplicationStateData state = ApplicationStateData.newInstance(rmApp.getSubmitTime(),
          rmApp.getStartTime(), rmApp.getApplicationSubmissionContext(), rmApp.getUser(),
          rmApp.getRealUser(), rmApp.getCallerContext());
      state.setApplicationTimeouts(rmApp.getApplicationTimeouts());
      state.setLaunchTime(rmApp.getLaunchTime());
      scheduler.rmContext().getStateStore().updateApplicationStateSynchronously(state, false,
          future);
      application.setPriority(priority);
      scheduler.events.add(RequestValues.Delta.appPriority(applicationId.toString(),
          priority.getPriority()));
      LOG.info("yarn-drf: priority of {} set to {}", applicationId, priority.getPriority());
    }
    scheduler.wakeLoop();
    return priority;
  }

  // ---------------------------------------------------------------- moving an app

  /**
   * `yarn application -movetoqueue`, before YARN stores the new queue: the app runs here and the
   * target is a leaf. YARN's ClientRMService has checked the caller (MODIFY_APP on the app, and
   * the scheduler's checkAccess on the target); the core decides the rest in {@link #move}.
   */
  void preValidateMove(ApplicationId appId, String newQueue) throws YarnException {
    synchronized (scheduler) {
      if (!scheduler.getSchedulerApplications().containsKey(appId)) {
        throw new YarnException("yarn-drf: application " + appId + " to be moved is not running");
      }
      ShimQueue target = scheduler.queues.find(newQueue);
      if (target == null || !target.isLeaf()) {
        throw new YarnException("yarn-drf: cannot move " + appId + " to " + newQueue
            + ": not a leaf queue");
      }
    }
  }

  /**
   * Moves the app if the core accepts (the target's ACLs for the app's user, as at submission;
   * its max and max-running-apps below the queue both share); else the core's reason is the
   * YarnException `yarn application -movetoqueue` prints. The core and YARN move the app's usage
   * before the loop's next call.
   */
  String move(ApplicationId appId, String newQueue) throws YarnException {
    String user;
    synchronized (scheduler) {
      SchedulerApplication<ShimAppAttempt> app = scheduler.getSchedulerApplications().get(appId);
      if (app == null) {
        throw new YarnException("yarn-drf: application " + appId + " to be moved is not running");
      }
      user = app.getUser();
    }
    List<String> groups = YarnDrfScheduler.groupsOf(user);
    ReplyValues.MoveReply reply;
    try {
      reply = scheduler.schedulingLoop().await(bridge -> moved(appId,
          bridge.move(appId.toString(), newQueue, user, groups)), null, null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new YarnException("yarn-drf: interrupted while moving " + appId, e);
    }
    if (reply == null) {
      throw new YarnException("yarn-drf: the scheduler core did not answer; " + appId
          + " was not moved");
    }
    if (!reply.accepted) {
      throw new YarnException("yarn-drf refused to move " + appId + " to " + newQueue + ": "
          + reply.reason);
    }
    LOG.info("yarn-drf: moved {} to {}", appId, reply.queue);
    return reply.queue;
  }

  /** On the loop's thread, right after the core's answer: YARN's side of an accepted move. */
  private ReplyValues.MoveReply moved(ApplicationId appId, ReplyValues.MoveReply reply) {
    if (reply == null || !reply.accepted) {
      return reply;
    }
    synchronized (scheduler) {
      SchedulerApplication<ShimAppAttempt> app = scheduler.getSchedulerApplications().get(appId);
      ShimQueue target = scheduler.queues.find(reply.queue);
      if (app == null || target == null || app.getQueue() == target) {
        return reply;
      }
      ShimQueue source = (ShimQueue) app.getQueue();
      ShimAppAttempt attempt = app.getCurrentAppAttempt();
      if (attempt != null) {
        Resource used = Resources.clone(attempt.getCurrentConsumption());
        attempt.move(target);  // containers' queue, queue metrics, pending asks, active users
        source.charge(used, -1);
        target.charge(used, 1);
      }
      app.setQueue(target);
    }
    return reply;
  }

  // ---------------------------------------------------------------- what the core's reply says

  /** Each app's headroom as the core computed it, which its AM reads in allocate responses. */
  void headroom(Map<String, long[]> headroom) {
    for (Map.Entry<String, long[]> e : headroom.entrySet()) {
      ShimAppAttempt attempt = attemptOf(e.getKey());
      Resource room = YarnRecords.resource(e.getValue());
      if (attempt != null && room != null) {
        attempt.setHeadroom(room);
      }
    }
  }

  /**
   * Shows in each app's diagnostics (`yarn application -status`) why its AM waits, as
   * FairScheduler's FSAppAttempt#updateAMDiagnosticMsg does for its maxAMShare; "" says it no
   * longer waits on the queue's max-am-share.
   */
  void amWaits(Map<String, String> amDiagnostics) {
    for (Map.Entry<String, String> e : amDiagnostics.entrySet()) {
      ShimAppAttempt attempt = attemptOf(e.getKey());
      if (attempt == null) {
        continue;
      }
      String why = e.getValue();
      if (why.isEmpty()) {
        attempt.updateAMContainerDiagnostics(SchedulerApplicationAttempt.AMState.ACTIVATED, null);
      } else {
        attempt.updateAMContainerDiagnostics(SchedulerApplicationAttempt.AMState.INACTIVATED,
            "(" + why + ")");
      }
    }
  }

  private ShimAppAttempt attemptOf(String appId) {
    ApplicationId id = YarnDrfScheduler.applicationIdOf(appId);
    return id == null ? null : scheduler.currentAttempt(id);
  }
}

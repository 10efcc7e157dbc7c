package org.yarndrf.shim;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out the core's preemption plan through YARN's own path, as FairScheduler's
 * FSPreemptionThread does: a container in "preempt" is marked in its attempt, whose AM then gets
 * a PreemptionMessage (a StrictPreemptionContract naming it) in every allocate response until it
 * ends; a container in "kill" is completed with exit status PREEMPTED
 * (SchedulerUtils.createPreemptedContainerStatus), which counts it in the RM's preemption metrics
 * (the app attempt's through RMContainer, the queue's in the scheduler's completedContainer).
 *
 * <p>Either is for a container that is still live, or nothing: an entry for a container that has
 * ended or that YARN does not know (it finished meanwhile, a repeated kill after a resync) is
 * counted in `ignored` and changes nothing, so nothing is killed twice. A core that replaced
 * another (after a resync, or in a restarted or failed-over RM) names its restored marks in
 * "preempt" again with the grace they have left: marked already in this RM, they change nothing;
 * in a new RM their AMs hear of them from it.
 *
 * <p>Locking: called under the scheduler's lock (the scheduling loop's commit).
 */
class Preemptions {
  private static final Logger LOG = LoggerFactory.getLogger(Preemptions.class);

  private final YarnDrfScheduler scheduler;
  final AtomicLong told = new AtomicLong();
  final AtomicLong killed = new AtomicLong();
  final AtomicLong ignored = new AtomicLong();

  Preemptions(YarnDrfScheduler scheduler) {
    this.scheduler = scheduler;
  }

  void apply(List<ReplyValues.Preemption> preempt, List<ReplyValues.Preemption> kill) {
    for (ReplyValues.Preemption p : preempt) {
      warn(p);
    }
    for (ReplyValues.Preemption p : kill) {
      kill(p);
    }
  }

  private void warn(ReplyValues.Preemption p) {
    RMContainer c = live(p);
    ShimAppAttempt attempt = c == null ? null
        : scheduler.getCurrentAttemptForContainer(c.getContainerId());
    if (attempt == null) {
      return;
    }
    if (!attempt.markForPreemption(c.getContainerId())) {
      return;  // told already (a core rebuilt in this RM tells its restored marks again)
    }
    told.incrementAndGet();
    LOG.info("yarn-drf: preempting container {} of {} (queue {}) for {} ({}): killed in {} ms"
        + " unless its AM releases it", p.container, p.app, p.queue, p.forQueue, p.reason,
        p.killInMs);
  }

  private void kill(ReplyValues.Preemption p) {
    RMContainer c = live(p);
    if (c == null) {
      return;
    }
    ContainerId id = c.getContainerId();
    scheduler.completedContainer(c,
        SchedulerUtils.createPreemptedContainerStatus(id, SchedulerUtils.PREEMPTED_CONTAINER),
        RMContainerEventType.KILL);
    killed.incrementAndGet();
    LOG.info("yarn-drf: killed container {} of {} (queue {}) for {}: preempted, its grace is over",
        p.container, p.app, p.queue, p.forQueue);
  }

  /** The live container the entry names (YARN's attempts keep only those), or null (counted as ignored). */
  private RMContainer live(ReplyValues.Preemption p) {
    RMContainer c = null;
    try {
      c = scheduler.getRMContainer(ContainerId.fromString(p.container));
    } catch (IllegalArgumentException e) {
      LOG.warn("yarn-drf: preemption of a bad container id {}", Messages.abbreviate(p.container));
    }
    if (c == null) {
      ignored.incrementAndGet();
      LOG.info("yarn-drf: preemption of container {} ignored: it is not running", p.container);
      return null;
    }
    return c;
  }

  String counters() {
    return "preempt told=" + told.get() + " killed=" + killed.get() + " ignored="
        + ignored.get();
  }
}

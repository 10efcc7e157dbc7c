package org.yarndrf.shim;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * One queue of the tree the core loaded from queues.yaml, as YARN sees it: name, ACLs, metrics,
 * the usage Java counts itself (for re-checking assignments against queue limits), and the
 * configured limits. Decisions are the core's; this object only answers YARN's questions.
 */
public final class ShimQueue implements Queue {
  /** Called when YARN recovers a container into this queue after an RM restart. */
  public interface RecoveryListener {
    void containerRecovered(ShimQueue queue, SchedulerApplicationAttempt attempt,
        RMContainer container);
  }

  private final String path;
  private final ShimQueue parent;
  private final List<ShimQueue> children = new ArrayList<>();
  private final QueueMetrics metrics;
  private final ActiveUsersManager usersManager;
  private final RecoveryListener recovery;
  private final Resource used = Resource.newInstance(0, 0);
  private volatile boolean leaf;
  private volatile boolean removed;
  private volatile QueueSettings settings;

  ShimQueue(String path, ShimQueue parent, Configuration conf, RecoveryListener recovery) {
    this.path = path;
    this.parent = parent;
    this.recovery = recovery;
    this.metrics = QueueMetrics.forQueue(path, parent, false, conf);
    this.usersManager = new ActiveUsersManager(metrics);
    this.settings = QueueSettings.defaults(path);
    if (parent != null) {
      parent.children.add(this);
    }
  }

  /** Applies one queue's entry of the core's queue list, already checked (Messages.queues). */
  void configure(QueueSettings s) {
    leaf = s.leaf;
    removed = false;
    settings = s;
  }

  QueueSettings settings() {
    return settings;
  }

  void markRemoved() {
    removed = true;
  }

  public boolean isRemoved() {
    return removed;
  }

  public boolean isLeaf() {
    return leaf;
  }

  public ShimQueue getParent() {
    return parent;
  }

  public List<ShimQueue> getChildren() {
    return Collections.unmodifiableList(children);
  }

  @Override
  public String getQueueName() {
    return path;
  }

  public String getShortName() {
    int dot = path.lastIndexOf('.');
    return dot < 0 ? path : path.substring(dot + 1);
  }

  @Override
  public QueueMetrics getMetrics() {
    return metrics;
  }

  public synchronized Resource getUsed() {
    return Resources.clone(used);
  }

  /** Adds (sign 1) or removes (sign -1) a container's resources here and in every ancestor. */
  void charge(Resource r, int sign) {
    for (ShimQueue q = this; q != null; q = q.parent) {
      synchronized (q) {
        if (sign > 0) {
          Resources.addTo(q.used, r);
        } else {
          Resources.subtractFrom(q.used, r);
        }
      }
    }
  }

  /**
   * Re-checks that this queue and each ancestor stay within their configured maximum after
   * adding `ask`. Returns null if so, else a reason naming the queue and resource.
   */
  String checkLimits(Resource ask, Resource cluster) {
    for (ShimQueue q = this; q != null; q = q.parent) {
      Resource u = q.getUsed();
      for (ResourceInformation ri : ask.getResources()) {
        long limit = q.limitFor(ri.getName(), cluster);
        if (limit < 0) {
          continue;
        }
        long after = u.getResourceValue(ri.getName()) + ri.getValue();
        if (after > limit) {
          return "queue " + q.path + " would use " + after + " " + ri.getName()
              + ", above its maximum " + limit;
        }
      }
    }
    return null;
  }

  /**
   * The largest container an app here may get: YARN's maximum allocation, lowered per resource
   * type by the queue file's max-container in force here (the core resolves the inheritance). A
   * max-container above YARN's maximum is clamped to it: YARN's maximum follows the largest node
   * that registered, so the file cannot know it.
   */
  Resource maxContainer(Resource clusterMaximum) {
    Resource out = Resources.clone(clusterMaximum);
    for (Map.Entry<String, Long> e : settings.maxContainer.entrySet()) {
      ResourceInformation ri = resourceOf(out, e.getKey());
      if (ri != null && e.getValue() < ri.getValue()) {
        out.setResourceValue(e.getKey(), e.getValue());
      }
    }
    return out;
  }

  /** Null if `ask` fits within {@link #maxContainer}, else why not, naming the type and the queue. */
  String refuseContainer(Resource ask, Resource clusterMaximum) {
    Resource most = maxContainer(clusterMaximum);
    for (ResourceInformation ri : ask.getResources()) {
      ResourceInformation limit = resourceOf(most, ri.getName());
      if (limit != null && ri.getValue() > limit.getValue()) {
        return "it asks for a container of " + ri.getValue() + " " + ri.getName()
            + ", above the largest queue " + path + " allows (" + limit.getValue() + ": its"
            + " max-container, or YARN's maximum allocation)";
      }
    }
    return null;
  }

  private static ResourceInformation resourceOf(Resource r, String name) {
    try {
      return r.getResourceInformation(name);
    } catch (RuntimeException e) {  // a type this cluster does not have
      return null;
    }
  }

  /** The weight YARN reports: the queue's number, or its largest per-resource weight. */
  public double weight() {
    return settings.weight;
  }

  /** Its own configured maximum as amounts: the cluster's amount of a type it sets none of. */
  public Resource maxResources(Resource cluster) {
    Resource out = Resources.clone(cluster);
    for (ResourceInformation ri : cluster.getResources()) {
      long limit = limitFor(ri.getName(), cluster);
      if (limit >= 0 && limit < ri.getValue()) {
        out.setResourceValue(ri.getName(), limit);
      }
    }
    return out;
  }

  /** The configured maximum of one resource type, or -1 if unlimited. */
  long limitFor(String resource, Resource cluster) {
    return settings.limitFor(resource, clusterValue(cluster, resource));
  }

  private static long clusterValue(Resource cluster, String resource) {
    try {
      return cluster.getResourceValue(resource);
    } catch (RuntimeException e) {
      return 0;
    }
  }

  /** YARN semantics: allowed if this queue or any ancestor allows; administer implies submit. */
  @Override
  public boolean hasAccess(QueueACL acl, UserGroupInformation user) {
    for (ShimQueue q = this; q != null; q = q.parent) {
      QueueSettings s = q.settings;
      if (s.adminAcl.isUserAllowed(user)
          || acl == QueueACL.SUBMIT_APPLICATIONS && s.submitAcl.isUserAllowed(user)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public QueueInfo getQueueInfo(boolean includeChildQueues, boolean recursive) {
    return queueInfo(includeChildQueues, recursive, null);
  }

  QueueInfo queueInfo(boolean includeChildQueues, boolean recursive, Resource cluster) {
    double weight = settings.weight;
    QueueInfo info = QueueInfo.newInstance(getShortName(), path, 0f, 1f, 0f,
        new ArrayList<QueueInfo>(),
        new ArrayList<org.apache.hadoop.yarn.api.records.ApplicationReport>(),
        removed ? QueueState.STOPPED : QueueState.RUNNING, null, null, null, true,
        (float) weight, -1);
    double siblingWeights = 0;
    if (parent != null) {
      for (ShimQueue s : parent.children) {
        siblingWeights += s.removed ? 0 : s.settings.weight;
      }
    }
    info.setAccessibleNodeLabels(settings.accessibleLabels);
    info.setDefaultNodeLabelExpression(settings.defaultLabel);
    info.setCapacity(parent == null ? 1f : (float) (siblingWeights > 0 ? weight / siblingWeights : 0));
    info.setWeight((float) weight);
    double maxFraction = settings.maxFraction;
    info.setMaximumCapacity(Double.isNaN(maxFraction) ? 1f : (float) maxFraction);
    if (cluster != null) {
      info.setCurrentCapacity((float) dominantShare(getUsed(), cluster));
    }
    if (includeChildQueues) {
      List<QueueInfo> kids = new ArrayList<>();
      for (ShimQueue c : children) {
        kids.add(c.queueInfo(recursive, recursive, cluster));
      }
      info.setChildQueues(kids);
    }
    return info;
  }

  public static double dominantShare(Resource used, Resource cluster) {
    double best = 0;
    for (ResourceInformation ri : cluster.getResources()) {
      if (ri.getValue() > 0) {
        best = Math.max(best, (double) used.getResourceValue(ri.getName()) / ri.getValue());
      }
    }
    return best;
  }

  public Map<QueueACL, AccessControlList> getQueueAcls() {
    QueueSettings s = settings;
    Map<QueueACL, AccessControlList> acls = new EnumMap<>(QueueACL.class);
    acls.put(QueueACL.SUBMIT_APPLICATIONS, s.submitAcl);
    acls.put(QueueACL.ADMINISTER_QUEUE, s.adminAcl);
    return acls;
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo(UserGroupInformation user) {
    List<QueueUserACLInfo> out = new ArrayList<>();
    collectAcls(user, out);
    return out;
  }

  private void collectAcls(UserGroupInformation user, List<QueueUserACLInfo> out) {
    List<QueueACL> granted = new ArrayList<>();
    for (QueueACL acl : QueueACL.values()) {
      if (user != null && hasAccess(acl, user)) {
        granted.add(acl);
      }
    }
    out.add(QueueUserACLInfo.newInstance(path, granted));
    for (ShimQueue c : children) {
      c.collectAcls(user, out);
    }
  }

  @Override
  public AbstractUsersManager getAbstractUsersManager() {
    return usersManager;
  }

  @Override
  public void recoverContainer(Resource clusterResource,
      SchedulerApplicationAttempt schedulerAttempt, RMContainer rmContainer) {
    if (rmContainer.getState().equals(RMContainerState.COMPLETED)) {
      return;
    }
    charge(rmContainer.getAllocatedResource(), 1);
    recovery.containerRecovered(this, schedulerAttempt, rmContainer);
  }

  @Override
  public Set<String> getAccessibleNodeLabels() {
    return settings.accessibleLabels;
  }

  /** The core's, inherited; "" (YARN's NO_LABEL) for the default partition. */
  @Override
  public String getDefaultNodeLabelExpression() {
    return settings.defaultLabel;
  }

  @Override
  public void incPendingResource(String nodeLabel, Resource resourceToInc) {
  }

  @Override
  public void decPendingResource(String nodeLabel, Resource resourceToDec) {
  }

  @Override
  public Priority getDefaultApplicationPriority() {
    return null;
  }

  @Override
  public void incReservedResource(String partition, Resource reservedRes) {
  }

  @Override
  public void decReservedResource(String partition, Resource reservedRes) {
  }
}

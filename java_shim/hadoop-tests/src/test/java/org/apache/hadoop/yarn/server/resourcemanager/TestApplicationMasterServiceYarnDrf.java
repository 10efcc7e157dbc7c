package org.apache.hadoop.yarn.server.resourcemanager;

import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.junit.Before;
import org.yarndrf.shim.ShimQueue;
import org.yarndrf.shim.YarnDrfScheduler;

/**
 * Hadoop's ApplicationMasterService tests on yarn-drf, as TestApplicationMasterServiceCapacity and
 * ...Fair run them on their schedulers. Those two leave the base's tests on FifoScheduler (the
 * base's own setup) and only its two resource-type tests on their scheduler; here every test of the
 * base runs on yarn-drf.
 */
public class TestApplicationMasterServiceYarnDrf extends ApplicationMasterServiceTestBase {
  private static final String DEFAULT_QUEUE = "default";

  @Before
  @Override
  public void setup() {
    conf = createYarnConfig();
  }

  @Override
  protected YarnConfiguration createYarnConfig() {
    YarnConfiguration yarnConf = new YarnConfiguration();
    yarnConf.setClass(YarnConfiguration.RM_SCHEDULER, YarnDrfScheduler.class,
        ResourceScheduler.class);
    return yarnConf;
  }

  /** The usage of the queue's apps' containers, as yarn-drf's queue (root.default) counts it. */
  @Override
  protected Resource getResourceUsageForQueue(ResourceManager rm, String queue) {
    AbstractYarnScheduler<?, ?> scheduler = (AbstractYarnScheduler<?, ?>) rm.getResourceScheduler();
    for (Object o : scheduler.getSchedulerApplications().values()) {
      ShimQueue q = (ShimQueue) ((SchedulerApplication<?>) o).getQueue();
      if (q.getShortName().equals(queue)) {
        return q.getUsed();
      }
    }
    return Resources.none();
  }

  @Override
  protected String getDefaultQueueName() {
    return DEFAULT_QUEUE;
  }
}

package org.yarndrf.shim;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;

/**
 * Apps in a MockRM whose scheduler allocates off the heartbeat: an AM container is allocated as
 * soon as its attempt asks, without waiting for a NodeManager, so MockRM's helpers that wait for
 * the attempt to sit in SCHEDULED (it has gone past) cannot be used; MockRM's own helper for
 * CapacityScheduler's asynchronous scheduling can.
 */
final class AsyncApps {
  private AsyncApps() {
  }

  /** Submits and waits until YARN has accepted the app (the core placed it). */
  static RMApp submit(MockRM rm, MockRMAppSubmissionData.Builder data) throws Exception {
    RMApp app = MockRMAppSubmitter.submit(rm, data.withWaitForAppAcceptedState(false).build());
    rm.waitForState(app.getApplicationId(), RMAppState.ACCEPTED);
    return app;
  }

  /** Launches and registers the AM once the core has placed its container. */
  static MockAM launch(MockRM rm, RMApp app) throws Exception {
    MockAM am = MockRM.launchAMWhenAsyncSchedulingEnabled(app, rm);
    am.registerAppAttempt();
    rm.waitForState(app.getApplicationId(), RMAppState.RUNNING);
    return am;
  }

  /**
   * Heartbeats the nodes and allocates (no new asks) until the AM has `count` containers in
   * `got`, for about two seconds at most; returns `got`.
   */
  static List<Container> collect(MockAM am, List<Container> got, int count, MockNM... nodes)
      throws Exception {
    for (int i = 0; i < 100 && got.size() < count; i++) {
      for (MockNM nm : nodes) {
        nm.nodeHeartbeat(true);
      }
      Thread.sleep(20);
      got.addAll(am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<ContainerId>())
          .getAllocatedContainers());
    }
    return got;
  }
}

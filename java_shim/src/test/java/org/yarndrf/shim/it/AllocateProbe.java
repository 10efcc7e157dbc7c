package org.yarndrf.shim.it;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * An unmanaged ApplicationMaster for the integration tests: it talks to a real ResourceManager
 * with YARN's own AMRMClient, as any AM does, and prints what each allocate call answered, so a
 * test can see the headroom an AM is told and where its containers land.
 *
 * <p>usage: AllocateProbe QUEUE CONTAINERS MEMORY_MB [BLACKLISTED_NODE]. It asks for CONTAINERS
 * containers of MEMORY_MB and 1 vcore (with the node blacklisted first, if one is named), then
 * calls allocate every 300 ms and prints one line per call:
 * {@code allocate granted=N memory=M vcores=V nodes=host:port,...}, where memory and vcores are
 * the headroom of the response and nodes those of the containers granted so far. It stops
 * {@code settle} calls after the last container came, releasing everything.
 */
public final class AllocateProbe {
  private AllocateProbe() {
  }

  public static void main(String[] args) throws Exception {
    String queue = args[0];
    int containers = Integer.parseInt(args[1]);
    int memory = Integer.parseInt(args[2]);
    String blacklisted = args.length > 3 ? args[3] : null;
    Configuration conf = new YarnConfiguration();
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(conf);
    yarn.start();
    YarnClientApplication app = yarn.createApplication();
    ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
    ApplicationId id = ctx.getApplicationId();
    ctx.setApplicationName("allocate-probe");
    ctx.setQueue(queue);
    ctx.setUnmanagedAM(true);
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
    ctx.setResource(Resource.newInstance(128, 1));
    yarn.submitApplication(ctx);
    System.out.println("submitted " + id);
    ApplicationAttemptId attempt = launchedAttempt(yarn, id);
    org.apache.hadoop.security.token.Token<?> token = yarn.getAMRMToken(id);
    token.setService(ClientRMProxy.getAMRMTokenService(conf));
    UserGroupInformation.getCurrentUser().addToken(token);
    AMRMClient<ContainerRequest> amrm = AMRMClient.createAMRMClient();
    amrm.init(conf);
    amrm.start();
    amrm.registerApplicationMaster("", 0, "");
    if (blacklisted != null) {
      amrm.updateBlacklist(Collections.singletonList(blacklisted), null);
    }
    for (int i = 0; i < containers; i++) {
      amrm.addContainerRequest(new ContainerRequest(Resource.newInstance(memory, 1), null, null,
          Priority.newInstance(1)));
    }
    List<Container> granted = new ArrayList<>();
    int settle = 6;
    for (int call = 0; call < 200 && settle > 0; call++) {
      AllocateResponse r = amrm.allocate(0.5f);
      for (Container c : r.getAllocatedContainers()) {
        granted.add(c);
        amrm.removeContainerRequest(new ContainerRequest(Resource.newInstance(memory, 1), null,
            null, Priority.newInstance(1)));
      }
      Resource room = r.getAvailableResources();
      StringBuilder nodes = new StringBuilder();
      for (Container c : granted) {
        nodes.append(nodes.length() == 0 ? "" : ",").append(c.getNodeId());
      }
      System.out.println("allocate granted=" + granted.size() + " memory=" + room.getMemorySize()
          + " vcores=" + room.getVirtualCores() + " nodes=" + nodes);
      if (granted.size() >= containers) {
        settle--;
      }
      Thread.sleep(300);
    }
    amrm.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "", "");
    amrm.stop();
    yarn.stop();
    System.out.println("attempt " + attempt + " done");
  }

  /** The app's attempt once YARN has launched it (for an unmanaged AM: once it is scheduled). */
  private static ApplicationAttemptId launchedAttempt(YarnClient yarn, ApplicationId id)
      throws Exception {
    for (int i = 0; i < 600; i++) {
      ApplicationAttemptId attempt = yarn.getApplicationReport(id).getCurrentApplicationAttemptId();
      if (attempt != null && yarn.getApplicationAttemptReport(attempt)
          .getYarnApplicationAttemptState() == YarnApplicationAttemptState.LAUNCHED) {
        return attempt;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(id + " was not launched within 60 s");
  }
}

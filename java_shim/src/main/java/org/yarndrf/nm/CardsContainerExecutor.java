package org.yarndrf.nm;

import java.io.IOException;
import java.io.OutputStream;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.api.ApplicationConstants.Environment;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;

/**
 * YARN's DefaultContainerExecutor that tells each container which GPU cards it may use: its launch
 * environment gets {@value #VARIABLE} set to the cards yarn-drf chose for it (the card indices of
 * its {@link GpuCards} allocation tag, e.g. {@code 1} or {@code 0,1}). On a node that declares
 * cards, a container given none (it asked for no GPU memory) gets an empty value: it sees no card.
 * The value replaces any the application set. Set as the NodeManager's
 * {@code yarn.nodemanager.container-executor.class} (README, "GPU cards").
 */
public class CardsContainerExecutor extends DefaultContainerExecutor {
  public static final String VARIABLE = "CUDA_VISIBLE_DEVICES";

  private volatile Context nmContext;

  @Override
  public void init(Context context) throws IOException {
    this.nmContext = context;
    super.init(context);
  }

  @Override
  public void writeLaunchEnv(OutputStream out, Map<String, String> environment,
      Map<Path, List<String>> resources, List<String> command, Path logDir, String user,
      String outFilename, LinkedHashSet<String> nmVars) throws IOException {
    String visible = environment == null ? null : visibleCards(environment.get(Environment.CONTAINER_ID.name()));
    if (visible != null) {
      environment.put(VARIABLE, visible);
      nmVars.add(VARIABLE);  // written as the NodeManager's own: the application's value cannot win
    }
    super.writeLaunchEnv(out, environment, resources, command, logDir, user, outFilename, nmVars);
  }

  /**
   * The value of {@value #VARIABLE} for the container, or null to leave its environment alone (a
   * container this NodeManager does not know, on a node without cards).
   * @throws IOException for a cards tag that is not well formed: the launch fails with the reason
   *     rather than the container running on cards nobody chose
   */
  String visibleCards(String containerId) throws IOException {
    Container container = containerId == null || nmContext == null ? null
        : nmContext.getContainers().get(ContainerId.fromString(containerId));
    List<Integer> cards;
    try {
      cards = container == null ? null
          : GpuCards.fromTags(container.getContainerTokenIdentifier().getAllcationTags());  // (sic: Hadoop's name)
    } catch (IllegalArgumentException e) {
      throw new IOException("container " + containerId + ": " + e.getMessage(), e);
    }
    if (cards != null) {
      StringBuilder b = new StringBuilder();
      for (int card : cards) {
        b.append(b.length() == 0 ? "" : ",").append(card);
      }
      return b.toString();
    }
    return declaresCards() ? "" : null;
  }

  /** Whether this NodeManager declares its cards (the node attribute in its configuration). */
  private boolean declaresCards() {
    String attributes = getConf().get(YarnConfiguration.NM_PROVIDER_CONFIGURED_NODE_ATTRIBUTES, "");
    for (String a : attributes.split(":")) {
      if (a.trim().startsWith(GpuCards.ATTRIBUTE + ",")) {
        return true;
      }
    }
    return false;
  }
}

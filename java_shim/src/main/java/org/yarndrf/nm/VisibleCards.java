package org.yarndrf.nm;

import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.ApplicationConstants.Environment;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;

/**
 * Which GPU cards a container may use, written into its launch environment as {@value #VARIABLE}:
 * the card indices of its {@link GpuCards} allocation tag ({@code 1}, {@code 0,1}). On a node that
 * declares cards, a container given none (it asked for no GPU memory) gets an empty value: it sees
 * no card. The value replaces any the application set.
 *
 * <p>It works through {@code ContainerExecutor.writeLaunchEnv}, which YARN's {@code ContainerLaunch}
 * calls for every executor and every runtime to write the container's launch script (under
 * LinuxContainerExecutor's Docker runtime that script runs inside the container), so one rule serves
 * each executor class that adds it: {@link CardsContainerExecutor} and
 * {@link CardsLinuxContainerExecutor}. docs/deploy.md, "GPU cards on the NodeManagers", says why these are
 * subclasses rather than a wrapper around any executor, or YARN's pluggable device framework.
 */
final class VisibleCards {
  static final String VARIABLE = "CUDA_VISIBLE_DEVICES";

  private final Context nmContext;
  private final boolean nodeDeclaresCards;

  VisibleCards(Context nmContext, Configuration conf) {
    this.nmContext = nmContext;
    this.nodeDeclaresCards = declaresCards(conf);
  }

  /**
   * Sets {@value #VARIABLE} in a launch environment, as one of the NodeManager's own variables so
   * the application's value cannot win (left alone for a container this NodeManager does not know
   * on a node without cards).
   * @throws IOException for a cards tag that is not well formed: the launch fails with the reason
   *     rather than the container running on cards nobody chose
   */
  void export(Map<String, String> environment, LinkedHashSet<String> nmVars) throws IOException {
    String visible = environment == null ? null : of(environment.get(Environment.CONTAINER_ID.name()));
    if (visible != null) {
      environment.put(VARIABLE, visible);
      nmVars.add(VARIABLE);
    }
  }

  /** The value of {@value #VARIABLE} for the container, or null to leave its environment alone. */
  String of(String containerId) throws IOException {
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
    return nodeDeclaresCards ? "" : null;
  }

  /** Whether this NodeManager declares its cards (the node attribute in its configuration). */
  private static boolean declaresCards(Configuration conf) {
    String attributes = conf == null ? "" : conf.get(YarnConfiguration.NM_PROVIDER_CONFIGURED_NODE_ATTRIBUTES, "");
    for (String a : attributes.split(":")) {
      if (a.trim().startsWith(GpuCards.ATTRIBUTE + ",")) {
        return true;
      }
    }
    return false;
  }
}

package org.yarndrf.nm;

import java.io.IOException;
import java.io.OutputStream;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor;

/**
 * YARN's LinuxContainerExecutor (containers run as their users through the setuid
 * {@code container-executor}; Docker and runc runtimes) that tells each container which GPU cards it
 * may use ({@link VisibleCards}). Set as the NodeManager's
 * {@code yarn.nodemanager.container-executor.class} in place of LinuxContainerExecutor; every
 * LinuxContainerExecutor setting applies unchanged (docs/deploy.md, "GPU cards on the NodeManagers").
 */
public class CardsLinuxContainerExecutor extends LinuxContainerExecutor {
  // The same two overrides as CardsContainerExecutor's, on YARN's other executor: Java cannot share
  // them across two superclasses, and what they do is VisibleCards' (so the copy check skips them).
  // CPD-OFF
  private volatile VisibleCards cards;

  @Override
  public void init(Context context) throws IOException {
    this.cards = new VisibleCards(context, getConf());
    super.init(context);
  }

  @Override
  public void writeLaunchEnv(OutputStream out, Map<String, String> environment,
      Map<Path, List<String>> resources, List<String> command, Path logDir, String user,
      String outFilename, LinkedHashSet<String> nmVars) throws IOException {
    cards.export(environment, nmVars);
    super.writeLaunchEnv(out, environment, resources, command, logDir, user, outFilename, nmVars);
  }
  // CPD-ON
}

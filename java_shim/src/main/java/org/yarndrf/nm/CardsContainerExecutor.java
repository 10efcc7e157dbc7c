package org.yarndrf.nm;

import java.io.IOException;
import java.io.OutputStream;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor;

/**
 * YARN's DefaultContainerExecutor that tells each container which GPU cards it may use
 * ({@link VisibleCards}). Set as the NodeManager's {@code yarn.nodemanager.container-executor.class}
 * (docs/deploy.md, "GPU cards on the NodeManagers"); {@link CardsLinuxContainerExecutor} is the same for
 * YARN's LinuxContainerExecutor.
 */
public class CardsContainerExecutor extends DefaultContainerExecutor {
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
}

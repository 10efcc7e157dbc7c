package org.yarndrf.nm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.security.ContainerTokenIdentifier;
import org.apache.hadoop.yarn.server.api.ContainerType;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;
import org.apache.hadoop.yarn.server.nodemanager.executor.ContainerStartContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cards reach a container launched by YARN's LinuxContainerExecutor: the executor is
 * initialised and launches through its real path (privileged-operation executor, default Linux
 * runtime), with a script standing in for the setuid {@code container-executor} binary, as Hadoop's
 * own TestLinuxContainerExecutorWithMocks does. The stand-in runs the launch script the executor
 * wrote in the container's work directory, as the binary does once it has switched to the user; the
 * container's command writes what it sees.
 */
class CardsLinuxContainerExecutorTest {
  // The privileged-operation executor is one per JVM and keeps the first binary path it is given.
  @TempDir
  static File dir;
  private static File binary;

  @BeforeAll
  static void standInForTheSetuidBinary() throws IOException {
    binary = new File(dir, "container-executor");
    Files.write(binary.toPath(), String.join("\n",
        "#!/bin/sh",
        "# --checksetup succeeds; a launch (command 1: user, user, 1, app, container, work dir,",
        "# script, tokens, ...) runs the launch script in the work directory.",
        "[ \"$1\" = --checksetup ] && exit 0",
        "[ \"$3\" = 1 ] && cd \"$6\" && exec /bin/bash \"$7\"",
        "exit 0", "").getBytes(StandardCharsets.UTF_8));
    binary.setExecutable(true);
  }

  @Test
  void aContainerLaunchedByLinuxContainerExecutorSeesTheCardsOfItsToken() throws Exception {
    assertEquals("1", cardsSeenBy(Collections.singleton("yarn-drf.gpu-cards=1"), "container-1"));
  }

  @Test
  void aContainerWithoutCardsLaunchedByLinuxContainerExecutorSeesNone() throws Exception {
    assertEquals("", cardsSeenBy(Collections.emptySet(), "container-2"));
  }

  @Test
  void theExecutorIsALinuxContainerExecutor() {
    // YARN casts the executor to LinuxContainerExecutor to delete Docker containers.
    assertEquals(LinuxContainerExecutor.class, CardsLinuxContainerExecutor.class.getSuperclass());
  }

  /** What CUDA_VISIBLE_DEVICES the container's process had, launched through the executor. */
  private static String cardsSeenBy(Set<String> tags, String name) throws Exception {
    File work = new File(dir, name);
    File logs = new File(work, "logs");
    logs.mkdirs();
    ContainerId id = ContainerId.newContainerId(
        ApplicationAttemptId.newInstance(ApplicationId.newInstance(1700000000000L, 1), 1), name.hashCode() & 0xffff);
    ContainerTokenIdentifier token = new ContainerTokenIdentifier(id, 0, "host:8041", "alice",
        Resource.newInstance(1024, 1), 0L, 0, 0L, Priority.newInstance(1), 0L, null, null,
        ContainerType.TASK, ExecutionType.GUARANTEED, 0L, tags);
    Map<String, Object> answers = new HashMap<>();
    answers.put("getContainerId", id);
    answers.put("getContainerTokenIdentifier", token);
    answers.put("getResource", token.getResource());
    answers.put("getUser", "alice");
    answers.put("getLaunchContext", ContainerLaunchContext.newInstance(Collections.emptyMap(),
        Collections.emptyMap(), Collections.emptyList(), null, null, null));
    Container container = stub(Container.class, answers);
    ConcurrentMap<ContainerId, Container> containers = new ConcurrentHashMap<>();
    containers.put(id, container);

    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.NM_LINUX_CONTAINER_EXECUTOR_PATH, binary.getAbsolutePath());
    conf.set(YarnConfiguration.NM_PROVIDER_CONFIGURED_NODE_ATTRIBUTES, "yarn-drf-gpu-cards,STRING,10240_10240");
    conf.set(YarnConfiguration.NM_LOCAL_DIRS, work.getAbsolutePath());
    conf.set(YarnConfiguration.NM_LOG_DIRS, logs.getAbsolutePath());
    CardsLinuxContainerExecutor executor = new CardsLinuxContainerExecutor();
    executor.setConf(conf);
    executor.init(stub(Context.class, Collections.singletonMap("getContainers", containers)));

    // The launch script as ContainerLaunch has the executor write it: the application's own value
    // of the variable, which must not win, and a command that records what the process sees.
    File script = new File(work, "launch_container.sh");
    Map<String, String> env = new HashMap<>();
    env.put("CONTAINER_ID", id.toString());
    env.put(VisibleCards.VARIABLE, "0,1");
    LinkedHashSet<String> nmVars = new LinkedHashSet<>(Collections.singleton("CONTAINER_ID"));
    // printenv fails for an unset variable, which fails the launch
    List<String> command = Collections.singletonList("printenv CUDA_VISIBLE_DEVICES > seen.txt");
    executor.writeLaunchEnv(new FileOutputStream(script), env, Collections.emptyMap(), command,
        new Path(logs.getAbsolutePath()), "alice", script.getName(), nmVars);

    executor.activateContainer(id, new Path(work.getAbsolutePath(), "pid"));
    List<String> dirs = Collections.singletonList(work.getAbsolutePath());
    int exit = executor.launchContainer(new ContainerStartContext.Builder()
        .setContainer(container)
        .setNmPrivateContainerScriptPath(new Path(script.getAbsolutePath()))
        .setNmPrivateTokensPath(new Path("/dev/null"))
        .setUser("alice").setAppId(id.getApplicationAttemptId().getApplicationId().toString())
        .setContainerWorkDir(new Path(work.getAbsolutePath()))
        .setLocalDirs(dirs).setLogDirs(Collections.singletonList(logs.getAbsolutePath()))
        .setFilecacheDirs(dirs).setUserLocalDirs(dirs).setContainerLocalDirs(dirs)
        .setContainerLogDirs(dirs).setUserFilecacheDirs(dirs).setApplicationLocalDirs(dirs)
        .build());
    File seen = new File(work, "seen.txt");
    assertEquals(0, exit, () -> "launch failed; script:\n" + read(script) + "\nlogs: " + read(new File(logs, "prelaunch.err")));
    return read(seen).trim();
  }

  private static String read(File f) {
    try {
      return new String(Files.readAllBytes(f.toPath()), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "<" + f + ": " + e + ">";
    }
  }

  /** An interface whose methods named in `answers` return those values (every other: null). */
  private static <T> T stub(Class<T> type, Map<String, ?> answers) {
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (proxy, method, args) -> answers.get(method.getName())));
  }
}

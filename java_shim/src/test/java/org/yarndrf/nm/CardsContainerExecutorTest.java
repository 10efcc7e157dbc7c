package org.yarndrf.nm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.DataInputBuffer;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.security.ContainerTokenIdentifier;
import org.apache.hadoop.yarn.server.api.ContainerType;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;
import org.junit.jupiter.api.Test;

/**
 * The executor's launch script, written by YARN's own script writer: the container's environment
 * carries the cards of its token's allocation tag. The NodeManager's context and container are
 * stand-ins (only the container map and the token are read); the token is a real one, written
 * and read back as it travels from the RM to the NodeManager.
 */
class CardsContainerExecutorTest {
  private static final String CARDS_ATTRIBUTE = "yarn-drf-gpu-cards,STRING,10240_10240";

  @Test
  void aContainerOnCardsSeesExactlyThoseCardsWhateverTheApplicationSet() throws IOException {
    String script = launchScript(CARDS_ATTRIBUTE, Collections.singleton("yarn-drf.gpu-cards=1"),
        Collections.singletonMap("CUDA_VISIBLE_DEVICES", "0,1"));
    assertTrue(script.contains("export CUDA_VISIBLE_DEVICES=\"1\""), script);
    assertFalse(script.contains("CUDA_VISIBLE_DEVICES=\"0,1\""), script);
  }

  @Test
  void aMultiCardContainerSeesAllOfItsCards() throws IOException {
    String script = launchScript(CARDS_ATTRIBUTE, Collections.singleton("yarn-drf.gpu-cards=0,1"),
        Collections.emptyMap());
    assertTrue(script.contains("export CUDA_VISIBLE_DEVICES=\"0,1\""), script);
  }

  @Test
  void aContainerWithoutCardsOnANodeWithCardsSeesNone() throws IOException {
    String script = launchScript(CARDS_ATTRIBUTE, Collections.emptySet(),
        Collections.singletonMap("CUDA_VISIBLE_DEVICES", "0"));
    assertTrue(script.contains("export CUDA_VISIBLE_DEVICES=\"\""), script);
  }

  @Test
  void onANodeWithoutCardsTheEnvironmentIsLeftAlone() throws IOException {
    String script = launchScript("", Collections.emptySet(), Collections.singletonMap("CUDA_VISIBLE_DEVICES", "3"));
    assertTrue(script.contains("export CUDA_VISIBLE_DEVICES=\"3\""), script);
  }

  @Test
  void aMalformedCardsTagFailsTheLaunchWithTheReason() {
    IOException e = assertThrows(IOException.class, () -> launchScript(CARDS_ATTRIBUTE,
        Collections.singleton("yarn-drf.gpu-cards=0;rm -rf /"), Collections.emptyMap()));
    assertTrue(e.getMessage().contains("is not yarn-drf.gpu-cards= followed by distinct card indices"), e.getMessage());
  }

  private static String launchScript(String attributes, Set<String> tags, Map<String, String> appEnv)
      throws IOException {
    ContainerId id = ContainerId.newContainerId(
        ApplicationAttemptId.newInstance(ApplicationId.newInstance(1700000000000L, 1), 1), 2);
    ContainerTokenIdentifier token = viaTheWire(new ContainerTokenIdentifier(id, 0, "host:8041", "alice",
        Resource.newInstance(1024, 1), 0L, 0, 0L, Priority.newInstance(1), 0L, null, null,
        ContainerType.TASK, ExecutionType.GUARANTEED, 0L, tags));
    ConcurrentMap<ContainerId, Container> containers = new ConcurrentHashMap<>();
    containers.put(id, stub(Container.class, "getContainerTokenIdentifier", token));
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.NM_PROVIDER_CONFIGURED_NODE_ATTRIBUTES, attributes);
    CardsContainerExecutor executor = new CardsContainerExecutor();
    executor.setConf(conf);
    executor.init(stub(Context.class, "getContainers", containers));

    Map<String, String> env = new HashMap<>(appEnv);
    env.put("CONTAINER_ID", id.toString());
    LinkedHashSet<String> nmVars = new LinkedHashSet<>(Collections.singleton("CONTAINER_ID"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    executor.writeLaunchEnv(out, env, Collections.emptyMap(), Collections.singletonList("true"),
        new Path("/tmp/logs"), "alice", "launch_container.sh", nmVars);
    return out.toString(StandardCharsets.UTF_8.name());
  }

  /** The token as the NodeManager reads it from the bytes the RM wrote. */
  private static ContainerTokenIdentifier viaTheWire(ContainerTokenIdentifier token) throws IOException {
    byte[] bytes = token.getBytes();
    DataInputBuffer in = new DataInputBuffer();
    in.reset(bytes, bytes.length);
    ContainerTokenIdentifier read = new ContainerTokenIdentifier();
    read.readFields(new DataInputStream(in));
    return read;
  }

  /** An interface whose one method `name` answers `value` (every other method: null). */
  private static <T> T stub(Class<T> type, String name, Object value) {
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (proxy, method, args) -> method.getName().equals(name) ? value : null));
  }
}

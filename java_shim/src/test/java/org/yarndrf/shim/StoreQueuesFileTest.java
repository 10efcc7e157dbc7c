package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.FileSystemBasedConfigurationProvider;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.api.protocolrecords.RefreshQueuesRequest;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yarndrf.shim.bridge.LiveProcesses;

/**
 * The queue file read through the RM's configuration provider (issue 27, item 3): with a
 * FileSystemBasedConfigurationProvider, yarn-drf.queues.file names a file of the provider's store
 * (here a directory on the local file system, in production a shared FS both RMs read), and the
 * real core reads private copies of it. `yarn rmadmin -refreshQueues` (AdminService.refreshQueues)
 * re-reads the store.
 */
class StoreQueuesFileTest {
  @TempDir
  Path tmp;
  private Path store;
  private MockRM rm;

  @BeforeEach
  void start() throws Exception {
    store = Files.createDirectories(tmp.resolve("store"));
    Files.write(store.resolve("queues.yaml"), RealCore.QUEUES.getBytes(StandardCharsets.UTF_8));
    YarnConfiguration conf = new RealCore(tmp).rmConf(0);
    conf.set(YarnConfiguration.RM_CONFIGURATION_PROVIDER_CLASS,
        FileSystemBasedConfigurationProvider.class.getName());
    conf.set(YarnConfiguration.FS_BASED_RM_CONF_STORE, store.toUri().toString());
    conf.set(ShimConf.QUEUES_FILE, "queues.yaml");  // relative: in the store
    rm = new MockRM(conf);
    rm.start();
  }

  @AfterEach
  void stop() {
    if (rm != null) {
      rm.stop();
    }
  }

  private YarnDrfScheduler scheduler() {
    return (YarnDrfScheduler) rm.getResourceScheduler();
  }

  private void storeQueues(String yaml) throws IOException {
    Files.write(store.resolve("queues.yaml"), yaml.getBytes(StandardCharsets.UTF_8));
  }

  private void refreshQueues() throws Exception {
    rm.getRMContext().getRMAdminService().refreshQueues(RefreshQueuesRequest.newInstance());
  }

  private boolean hasQueue(String path) {
    try {
      return scheduler().getQueueInfo(path, false, false) != null;
    } catch (IOException unknown) {
      return false;
    }
  }

  /** The file names in the core's private directory. */
  private List<String> privateFiles() throws IOException {
    try (Stream<Path> files = Files.list(scheduler().corePrivateDir())) {
      return files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    }
  }

  /** The core's `--queues` file, and its content, of its live process. */
  private String liveCoresQueues() throws IOException {
    Map<Integer, List<String>> cores = LiveProcesses.withArgument(
        scheduler().corePrivateDir().resolve("token").toString());
    assertEquals(1, cores.size(), cores.toString());
    String file = LiveProcesses.option(cores.values().iterator().next(), "--queues");
    return new String(Files.readAllBytes(java.nio.file.Paths.get(file)), StandardCharsets.UTF_8);
  }

  @Test
  void theCoreStartsWithTheStoresFileAndRefreshQueuesRereadsTheStore() throws Exception {
    assertTrue(hasQueue("root.a") && hasQueue("root.b") && !hasQueue("root.c"));
    assertEquals(RealCore.QUEUES, liveCoresQueues(), "a copy of the store's file");
    storeQueues(RealCore.QUEUES + "      c:\n        submit-acl: \"*\"\n");
    refreshQueues();
    assertTrue(hasQueue("root.c"), "the store's new file is in force");
    assertEquals(Arrays.asList("ports", "queues.yaml", "token"), privateFiles());
    assertTrue(liveCoresQueues().contains("      c:\n"), "the core's copy, rewritten");
  }

  @Test
  void aRefusedFileKeepsTheOldTreeAndNoRestartedCoreEverReadsIt() throws Exception {
    storeQueues(RealCore.QUEUES + "      c:\n        submit-acl: \"*\"\n");
    refreshQueues();
    storeQueues(RealCore.QUEUES.replace("weight: 2", "weight: -2"));
    YarnException refused = assertThrows(YarnException.class, this::refreshQueues);
    assertTrue(refused.getMessage().contains("queue configuration refused")
        && refused.getMessage().contains("weight"), refused.getMessage());
    assertTrue(hasQueue("root.c"));
    assertTrue(liveCoresQueues().contains("      c:\n") && !liveCoresQueues().contains("-2"),
        "the copy holds the file in force again");
    // A crash: the supervisor starts another child, which must read the file in force.
    Map<Integer, List<String>> cores = LiveProcesses.withArgument(
        scheduler().corePrivateDir().resolve("token").toString());
    int pid = cores.keySet().iterator().next();
    assertEquals(0, new ProcessBuilder("kill", "-9", String.valueOf(pid)).start().waitFor());
    Waits.until(() -> {
      try {
        Map<Integer, List<String>> now = LiveProcesses.withArgument(
            scheduler().corePrivateDir().resolve("token").toString());
        return !now.isEmpty() && !now.containsKey(pid);
      } catch (IOException e) {
        return false;
      }
    }, "a new child after the crash");
    assertTrue(liveCoresQueues().contains("      c:\n"), "the accepted file, not the refused one");
  }

  @Test
  void aFileMissingFromTheStoreOrTooLargeIsRefusedNamingWhereItWasLooked() throws Exception {
    Files.write(store.resolve("yarn-site.xml"), ("<configuration><property><name>"
        + ShimConf.QUEUES_FILE + "</name><value>missing.yaml</value></property></configuration>")
        .getBytes(StandardCharsets.UTF_8));
    YarnException missing = assertThrows(YarnException.class, this::refreshQueues);
    assertTrue(missing.getMessage().contains(store.resolve("missing.yaml").toString())
        && missing.getMessage().contains("is not in the configuration store"),
        missing.getMessage());
    Files.delete(store.resolve("yarn-site.xml"));
    byte[] big = new byte[QueuesFile.MAX_BYTES + 1];
    Arrays.fill(big, (byte) '#');
    Files.write(store.resolve("queues.yaml"), big);
    YarnException large = assertThrows(YarnException.class, this::refreshQueues);
    assertTrue(large.getMessage().contains("is larger than 1048576 bytes"), large.getMessage());
    assertNotNull(scheduler().getQueueInfo("root.a", false, false), "the old tree stays");
    assertEquals(RealCore.QUEUES, liveCoresQueues(), "nothing copied");
    assertEquals(Arrays.asList("ports", "queues.yaml", "token"), privateFiles());
  }
}

package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.yarndrf.shim.Waits.until;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.util.curator.ZKCuratorManager;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yarndrf.shim.store.FsRecordStore;
import org.yarndrf.shim.store.RecordStore;
import org.yarndrf.shim.store.ZkRecordStore;

/**
 * Where the preemption state is kept for the next active RM ({@link PreemptionStore}): on a
 * Hadoop FileSystem and in a real ZooKeeper server (in-process, on a loopback port). What one
 * store saved, the next one reads; a record that is not one (garbage, not an object, too large)
 * is ignored and the core starts without it; a save that is stuck never holds up the caller, and
 * one that fails is retried; an RM fenced off ZKRMStateStore's root (another became active)
 * cannot overwrite it.
 */
class PreemptionStoreTest {
  private static final String RECORD = "{\"v\":1,\"marks\":[],\"leaves\":[{\"queue\":\"root.b\","
      + "\"below_fair_since_ms\":1700000000000,\"starved\":\"fair-share\"}]}";

  @TempDir
  Path dir;
  private ServerCnxnFactory zkServer;
  private ZKCuratorManager zk;

  @AfterEach
  void stop() {
    if (zk != null) {
      zk.close();
    }
    if (zkServer != null) {
      zkServer.shutdown();
    }
  }

  private PreemptionStore onFiles() throws Exception {
    return new PreemptionStore(new FsRecordStore(new Configuration(), dir.toUri().toString(),
        PreemptionStore.MAX_RECORD_BYTES));
  }

  @Test
  void whatOneRmSavesOnAFileSystemTheNextReadsAndGivesBack() throws Exception {
    PreemptionStore first = onFiles();
    first.load();
    assertNull(first.latest(), "nothing saved yet");
    first.update("{\"v\":1,\"marks\":[],\"leaves\":[]}");
    first.update(RECORD);  // the newest is what is saved
    assertEquals(RECORD, first.latest());
    until(() -> first.saves.get() >= 1 && RECORD.equals(read("preemption-state.json")), "saved");
    first.close();
    PreemptionStore next = onFiles();
    next.load();
    assertEquals(RECORD, next.latest());
    next.close();
  }

  @Test
  void aRecordLeftHalfReplacedIsReadFromTheFileWrittenBeforeTheRename() throws Exception {
    Files.write(dir.resolve("preemption-state.json.tmp"), RECORD.getBytes(StandardCharsets.UTF_8));
    PreemptionStore store = onFiles();
    store.load();
    assertEquals(RECORD, store.latest());
    store.close();
  }

  @Test
  void aCorruptForeignOrOversizedRecordIsIgnoredAndTheCoreStartsWithoutIt() throws Exception {
    char[] big = new char[PreemptionStore.MAX_RECORD_BYTES + 1];
    Arrays.fill(big, ' ');
    for (String bad : Arrays.asList("\u0000\u00ff garbage", "[1,2]", "\"v\"", "{\"v\":1,",
        "{\"v\":1,\"marks\":[]}" + new String(big))) {
      Files.deleteIfExists(dir.resolve(".preemption-state.json.crc"));  // (else a checksum error)
      Files.write(dir.resolve("preemption-state.json"), bad.getBytes(StandardCharsets.UTF_8));
      PreemptionStore store = onFiles();
      store.load();
      assertNull(store.latest(), "ignored: " + Messages.abbreviate(bad));
      store.update(RECORD);  // and the next save replaces it
      until(() -> RECORD.equals(read("preemption-state.json")), "replaced");
      store.close();
    }
  }

  @Test
  void aStuckSaveNeverHoldsUpTheSchedulerAndOnlyTheNewestRecordIsSavedAfterIt() throws Exception {
    CountDownLatch stuck = new CountDownLatch(1);
    List<String> written = new CopyOnWriteArrayList<>();
    PreemptionStore store = new PreemptionStore(new RecordStore() {
      @Override
      public String read() {
        return null;
      }

      @Override
      public void write(String record) throws Exception {
        stuck.await();  // a store that does not answer (ZooKeeper down, a hung file system)
        written.add(record);
      }

      @Override
      public void close() {
      }

      @Override
      public String describe() {
        return "a stuck store";
      }
    });
    for (int i = 0; i < 100; i++) {  // returns although every save waits
      store.update("{\"v\":1,\"n\":" + i + "}");
    }
    assertEquals("{\"v\":1,\"n\":99}", store.latest(), "the next snapshot gets the newest");
    stuck.countDown();
    until(() -> written.contains("{\"v\":1,\"n\":99}"), "the newest saved once the store answers");
    assertTrue(written.size() <= 2, "the records in between are never written: " + written);
    store.close();
  }

  @Test
  void aFailingSaveIsRetriedUntilItSucceeds() throws Exception {
    Path blocked = dir.resolve("blocked");
    Files.write(blocked, new byte[0]);  // a file where the directory should be
    PreemptionStore store = new PreemptionStore(new FsRecordStore(new Configuration(),
        blocked.toUri().toString(), PreemptionStore.MAX_RECORD_BYTES));
    store.update(RECORD);
    assertEquals(RECORD, store.latest(), "the next snapshot still gets it");
    until(() -> store.failures.get() >= 2, "tried again after failing: " + store.counters());
    Files.delete(blocked);
    until(() -> store.saves.get() == 1, "saved once the directory can be made: " + store.counters());
    assertEquals(RECORD, new String(Files.readAllBytes(blocked.resolve("preemption-state.json")),
        StandardCharsets.UTF_8));
    store.close();
  }

  /** A real ZooKeeper server on a free loopback port and a client of it, as the RM makes one. */
  private String startZooKeeper() throws Exception {
    File data = dir.resolve("zk").toFile();
    ZooKeeperServer server = new ZooKeeperServer(data, data, 2000);
    zkServer = ServerCnxnFactory.createFactory(new InetSocketAddress("127.0.0.1", 0), 20);
    zkServer.startup(server);
    Configuration conf = new Configuration();
    conf.set(CommonConfigurationKeys.ZK_ADDRESS, "127.0.0.1:" + zkServer.getLocalPort());
    zk = new ZKCuratorManager(conf);
    zk.start();
    String root = "/rmstore/ZKRMStateRoot";
    zk.createRootDirRecursively(root);
    return root;
  }

  @Test
  void whatOneRmSavesInZooKeeperTheNextReadsAndAFencedRmCannotOverwrite() throws Exception {
    String root = startZooKeeper();
    PreemptionStore active = new PreemptionStore(new ZkRecordStore(zk, false, root,
        ZooDefs.Ids.OPEN_ACL_UNSAFE));
    active.load();
    assertNull(active.latest());
    active.update(RECORD);
    until(() -> active.saves.get() == 1, "saved in ZooKeeper: " + active.counters());
    assertEquals(RECORD, zk.getStringData(root + "/YarnDrfPreemptionState"));
    PreemptionStore next = new PreemptionStore(new ZkRecordStore(zk, false, root,
        ZooDefs.Ids.OPEN_ACL_UNSAFE));
    next.load();
    assertEquals(RECORD, next.latest());

    // Another RM became active: ZKRMStateStore takes CREATE and DELETE on its root away from
    // the others, so this one's writes (each creates the fencing node) fail.
    zk.getCurator().setACL().withACL(Collections.singletonList(
        new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.WRITE, ZooDefs.Ids.ANYONE_ID_UNSAFE))).forPath(root);
    active.update("{\"v\":1,\"marks\":[],\"leaves\":[]}");
    until(() -> active.failures.get() >= 1, "the fenced RM's save fails: " + active.counters());
    assertEquals(RECORD, zk.getStringData(root + "/YarnDrfPreemptionState"), "not overwritten");
    active.close();
    next.close();
  }

  @Test
  void aCorruptZnodeIsIgnoredAndTheCoreStartsWithoutIt() throws Exception {
    String root = startZooKeeper();
    zk.create(root + "/YarnDrfPreemptionState");
    zk.setData(root + "/YarnDrfPreemptionState", new byte[] {(byte) 0xff, 0, 1, 2}, -1);
    PreemptionStore store = new PreemptionStore(new ZkRecordStore(zk, false, root,
        ZooDefs.Ids.OPEN_ACL_UNSAFE));
    store.load();
    assertNull(store.latest());
    store.close();
  }

  private String read(String name) {
    try {
      return new String(Files.readAllBytes(dir.resolve(name)), StandardCharsets.UTF_8);
    } catch (Exception e) {
      return null;
    }
  }

}

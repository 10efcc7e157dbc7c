package org.yarndrf.shim.store;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.util.curator.ZKCuratorManager;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.ACL;

/**
 * The record as a znode under ZKRMStateStore's root, written as that store writes its own nodes:
 * in a transaction with its fencing node, so an RM that lost the active role (whose root-node
 * ACL the new active one has taken away) cannot overwrite the record after the new one read it.
 * It lives and goes with the RM's state: `yarn resourcemanager -format-state-store` removes it.
 *
 * <p>The ZooKeeper connection is the RM's own when it has one (the curator leader elector);
 * otherwise one made the way the RM makes its store's (same quorum, auth and ACL keys), closed
 * with this store.
 */
public final class ZkRecordStore implements RecordStore {
  static final String NODE_NAME = "YarnDrfPreemptionState";
  /** ZKRMStateStore's fencing node (its FENCING_LOCK), created and deleted by every write. */
  private static final String FENCING_LOCK = "RM_ZK_FENCING_LOCK";

  private final ZKCuratorManager zk;
  private final boolean owned;
  private final String path;
  private final String fencingPath;
  private final List<ACL> acl;

  /**
   * The record under `root` (ZKRMStateStore's root node), over `zk`, closed with this store if
   * `owned`; its node gets `acl`, as the RM's store gives its nodes yarn.resourcemanager.zk-acl.
   */
  public ZkRecordStore(ZKCuratorManager zk, boolean owned, String root, List<ACL> acl) {
    this.zk = zk;
    this.owned = owned;
    this.path = root + "/" + NODE_NAME;
    this.fencingPath = root + "/" + FENCING_LOCK;
    this.acl = acl;
  }

  /** The store of the RM whose state store is a ZKRMStateStore configured by `conf`. */
  public static ZkRecordStore of(ResourceManager rm, Configuration conf) throws Exception {
    String root = conf.get(YarnConfiguration.ZK_RM_STATE_STORE_PARENT_PATH,
        YarnConfiguration.DEFAULT_ZK_RM_STATE_STORE_PARENT_PATH) + "/" + ZKRMStateStore.ROOT_ZNODE_NAME;
    ZKCuratorManager shared = rm.getZKManager();
    ZKCuratorManager zk = shared != null ? shared : rm.createAndStartZKManager(conf);
    return new ZkRecordStore(zk, shared == null, root, ZKCuratorManager.getZKAcls(conf));
  }

  @Override
  public String read() throws Exception {
    return zk.exists(path) ? zk.getStringData(path) : null;
  }

  @Override
  public void write(String record) throws Exception {
    byte[] data = record.getBytes(StandardCharsets.UTF_8);
    if (zk.exists(path)) {
      zk.safeSetData(path, data, -1, acl, fencingPath);
    } else {
      zk.safeCreate(path, data, acl, CreateMode.PERSISTENT, acl, fencingPath);
    }
  }

  @Override
  public void close() {
    if (owned) {
      zk.close();
    }
  }

  @Override
  public String describe() {
    return "ZooKeeper node " + path;
  }
}

package org.yarndrf.shim;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.shim.store.FsRecordStore;
import org.yarndrf.shim.store.RecordStore;
import org.yarndrf.shim.store.ZkRecordStore;

/**
 * The core's preemption state (its marks and each queue's starvation clocks: docs/bridge.md,
 * "Preemption state"), kept where the next active ResourceManager reads it. YARN's state
 * store keeps no scheduler state, so without this a restarted or failed-over RM would start a core
 * that tells AMs again with a fresh grace and lets a starved queue wait its whole timeout again.
 *
 * <p>The shim does not read the record: it is the core's, which checks every item when it gets
 * it back. The shim keeps the latest one a reply carried ({@link #update}), gives it back with
 * every snapshot ({@link #latest}: after a failed call or a core restart the rebuilt core goes on
 * from it too), and saves it, off the scheduling loop's thread, in the first of:
 * <ul>
 *   <li>a directory of any Hadoop FileSystem named by {@code yarn-drf.preemption.state-dir};
 *   <li>ZooKeeper, under ZKRMStateStore's root, when that is the RM's state store (HA);
 *   <li>{@code <yarn.resourcemanager.fs.state-store.uri>/yarn-drf} when FileSystemRMStateStore is;
 * </ul>
 * else (no recovery, or another store) in this RM's memory only. An RM reads it when its
 * scheduler starts, which an HA RM does when it becomes active. A record that cannot be read, is
 * not a JSON object or is larger than {@link #MAX_RECORD_BYTES} is logged and ignored: the core
 * then starts without it. A save that fails is logged and retried; the scheduling goes on.
 *
 * <p>Locking: its own. {@link #update} and {@link #latest} are cheap and called under the
 * scheduler's lock; reads and writes of the store run on the store's own thread.
 */
final class PreemptionStore {
  private static final Logger LOG = LoggerFactory.getLogger(PreemptionStore.class);
  /** Below a ZooKeeper node's limit (jute.maxbuffer, 1 MB); the core's record stays far below. */
  static final int MAX_RECORD_BYTES = 1_000_000;
  /** How long a starting scheduler waits for the saved record before it starts without it. */
  static final long LOAD_WAIT_MS = 5_000;
  /** How long a stopping scheduler waits for the last save (serviceStop returns within 1 s). */
  static final long CLOSE_WAIT_MS = 200;
  private static final long RETRY_MIN_MS = 500;
  private static final long RETRY_MAX_MS = 30_000;

  private final RecordStore store;  // null: in memory only
  private final ScheduledExecutorService saver;
  private final AtomicReference<String> unsaved = new AtomicReference<>();
  private final AtomicBoolean saving = new AtomicBoolean();
  private volatile String latest;
  private long retryMs = RETRY_MIN_MS;
  final AtomicLong saves = new AtomicLong();
  final AtomicLong failures = new AtomicLong();

  PreemptionStore(RecordStore store) {
    this.store = store;
    this.saver = store == null ? null : Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "yarn-drf-preemption-store");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * The store this RM's configuration names (above); never fails: a store that cannot be opened
   * is logged, and the state is kept in memory.
   */
  static PreemptionStore open(Configuration conf, RMContext context) {
    String dir = conf.getTrimmed(ShimConf.PREEMPTION_STATE_DIR, "");
    RMStateStore rmStore = context == null ? null : context.getStateStore();
    try {
      if (!dir.isEmpty()) {
        return new PreemptionStore(new FsRecordStore(conf, dir, MAX_RECORD_BYTES));
      }
      if (rmStore instanceof ZKRMStateStore) {
        return new PreemptionStore(ZkRecordStore.of(context.getResourceManager(), conf));
      }
      if (rmStore instanceof FileSystemRMStateStore) {
        return new PreemptionStore(new FsRecordStore(conf,
            conf.get(YarnConfiguration.FS_RM_STATE_STORE_URI) + "/yarn-drf", MAX_RECORD_BYTES));
      }
    } catch (Exception e) {
      LOG.error("yarn-drf: cannot open the store of the preemption state ({}); it is kept in "
          + "this ResourceManager's memory only, and a restart or failover starts without it",
          e.toString());
      return new PreemptionStore(null);
    }
    LOG.info("yarn-drf: the preemption state is kept in this ResourceManager's memory only (its "
        + "state store is {}); set {} to keep it across restarts",
        rmStore == null ? "none" : rmStore.getClass().getSimpleName(), ShimConf.PREEMPTION_STATE_DIR);
    return new PreemptionStore(null);
  }

  /** Reads the saved record, waiting at most LOAD_WAIT_MS; the next snapshot gives it back. */
  void load() {
    if (store == null) {
      return;
    }
    Future<String> read = saver.submit(store::read);
    String text;
    try {
      text = read.get(LOAD_WAIT_MS, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      read.cancel(true);
      LOG.warn("yarn-drf: the preemption state in {} was not read within {} ms; the core starts "
          + "without it", store.describe(), LOAD_WAIT_MS);
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    } catch (ExecutionException e) {
      LOG.warn("yarn-drf: cannot read the preemption state in {} ({}); the core starts without it",
          store.describe(), e.getCause().toString());
      return;
    }
    if (text == null) {
      LOG.info("yarn-drf: no preemption state saved in {} yet", store.describe());
      return;
    }
    String record = checked(text, store.describe());
    if (record != null) {
      latest = record;
      LOG.info("yarn-drf: preemption state read from {} ({} bytes); the core goes on from it",
          store.describe(), record.length());
    }
  }

  /**
   * The record as compact JSON if `text` is one the shim can give back (a JSON object within
   * MAX_RECORD_BYTES); else null, logged. Whether its items make sense is the core's to check.
   */
  static String checked(String text, String where) {
    int bytes = text.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_RECORD_BYTES) {
      LOG.warn("yarn-drf: the preemption state in {} is {} bytes, more than a record ({}): "
          + "ignored, the core starts without it", where, bytes, MAX_RECORD_BYTES);
      return null;
    }
    JsonNode node;
    try {
      node = Messages.JSON.readTree(text);
    } catch (Exception e) {
      node = null;
    }
    if (node == null || !node.isObject()) {
      LOG.warn("yarn-drf: the preemption state in {} is not a JSON object ({}): ignored, the "
          + "core starts without it", where, Messages.abbreviate(text));
      return null;
    }
    return Messages.compactJson(node);
  }

  /** The latest record, for the next snapshot; null if there is none. */
  String latest() {
    return latest;
  }

  /** A reply's record: the latest from now on, saved soon (the newest one only, if several wait). */
  void update(String record) {
    if (record.getBytes(StandardCharsets.UTF_8).length > MAX_RECORD_BYTES) {
      LOG.warn("yarn-drf: a preemption state of more than {} bytes is kept in memory, not saved",
          MAX_RECORD_BYTES);
      latest = record;
      return;
    }
    latest = record;
    if (store == null) {
      return;
    }
    unsaved.set(record);
    if (saving.compareAndSet(false, true)) {
      try {
        saver.execute(this::save);
      } catch (RejectedExecutionException e) {
        // closed: the scheduler is stopping, and a reply committed meanwhile is not saved
      }
    }
  }

  /** On the store's thread: writes the newest unsaved record; after a failure, again later. */
  private void save() {
    String record;
    while ((record = unsaved.getAndSet(null)) != null) {
      try {
        store.write(record);
        saves.incrementAndGet();
        retryMs = RETRY_MIN_MS;
      } catch (Exception e) {
        unsaved.compareAndSet(null, record);
        failures.incrementAndGet();
        LOG.warn("yarn-drf: cannot save the preemption state to {} ({}); trying again in {} ms "
            + "[failures={}]", store.describe(), e.toString(), retryMs, failures.get());
        saver.schedule(this::save, retryMs, TimeUnit.MILLISECONDS);
        retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
        return;
      }
    }
    saving.set(false);
    if (unsaved.get() != null && saving.compareAndSet(false, true)) {
      save();  // one came while this one was finishing
    }
  }

  /** Waits up to CLOSE_WAIT_MS for the last record to be saved, then lets the store go. */
  void close() {
    if (store == null) {
      return;
    }
    Future<?> last = saver.submit(() -> {  // (the store's one thread: no save runs meanwhile)
      saving.set(true);
      save();
    });
    try {
      last.get(CLOSE_WAIT_MS, TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // told below
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    saver.shutdownNow();
    if (unsaved.get() != null) {
      LOG.warn("yarn-drf: the last preemption state was not saved to {} before the scheduler "
          + "stopped; the next active RM goes on from the one saved before", store.describe());
    }
    store.close();
  }

  String counters() {
    return "preemption-state saves=" + saves.get() + " save-errors=" + failures.get();
  }
}

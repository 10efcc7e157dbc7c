package org.yarndrf.shim;

import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.HAUtil;

/**
 * yarn-site.xml keys of the shim (documented in docs/yarn-site.md). Each may be given per
 * ResourceManager with HA's convention, `yarn-drf.bridge.port.rm1` as
 * `yarn.resourcemanager.address.rm1`: {@link #forRm} resolves them.
 */
public final class ShimConf {
  private ShimConf() {
  }

  public static final String PREFIX = "yarn-drf.";
  /** "child" (default): the RM starts and supervises `yarn-drf serve`; "external": connect only. */
  public static final String SERVE_MODE = PREFIX + "serve.mode";
  /** Command line of the core service, without the bridge arguments the shim appends. */
  public static final String SERVE_COMMAND = PREFIX + "serve.command";
  public static final String DEFAULT_SERVE_COMMAND = "yarn-drf serve";
  /** The queue YAML, passed to the child as --queues and re-read on refreshQueues. */
  public static final String QUEUES_FILE = PREFIX + "queues.file";
  /** File receiving the child's stdout/stderr; unset: the RM's own output. */
  public static final String SERVE_LOG = PREFIX + "serve.log";
  /**
   * Loopback port the Python service listens on; 0 (child mode only): any free port, which the
   * child reports in a file of its private directory.
   */
  public static final String PORT = PREFIX + "bridge.port";
  public static final int DEFAULT_PORT = 25334;
  /**
   * How long serviceStart waits for the core's first answer before the RM goes on without it
   * (allocating nothing until it answers); in child mode a child that exits ends the wait sooner.
   */
  public static final String START_TIMEOUT_MS = PREFIX + "serve.start-timeout-ms";
  public static final long DEFAULT_START_TIMEOUT_MS = 30_000;
  /**
   * The address of the core's dashboard as the RM's Scheduler page links it, for one reached
   * through a proxy or a tunnel; unset: http://127.0.0.1:PORT/ui/ with the status port the
   * child reported.
   */
  public static final String DASHBOARD_URL = PREFIX + "dashboard.url";
  /**
   * File holding the bridge token (mode 600, owned by the RM's user); unset in child mode: a fresh
   * random token per RM start.
   */
  public static final String TOKEN_FILE = PREFIX + "bridge.token-file";
  /** How long one call may take before it counts as failed (nothing allocated from it). */
  public static final String TIMEOUT_MS = PREFIX + "bridge.timeout-ms";
  public static final int DEFAULT_TIMEOUT_MS = 250;
  /** Timeout of snapshots and reloads, whose size grows with the cluster: the base, ... */
  public static final String SNAPSHOT_TIMEOUT_MS = PREFIX + "bridge.snapshot-timeout-ms";
  public static final int DEFAULT_SNAPSHOT_TIMEOUT_MS = 1000;
  /** ... plus this for every 1,000 nodes, apps, containers and asks of the last snapshot. */
  public static final String SNAPSHOT_TIMEOUT_PER_1000_ITEMS_MS =
      PREFIX + "bridge.snapshot-timeout-per-1000-items-ms";
  public static final int DEFAULT_SNAPSHOT_TIMEOUT_PER_1000_ITEMS_MS = 50;
  public static final String BACKOFF_INITIAL_MS = PREFIX + "bridge.backoff.initial-ms";
  public static final long DEFAULT_BACKOFF_INITIAL_MS = 200;
  public static final String BACKOFF_MAX_MS = PREFIX + "bridge.backoff.max-ms";
  public static final long DEFAULT_BACKOFF_MAX_MS = 5000;
  /**
   * Child mode: a child that is alive but has not answered for this long, over at least
   * RESTART_AFTER_FAILURES calls in a row, is killed and restarted. 0 turns it off.
   */
  public static final String RESTART_AFTER_MS = PREFIX + "serve.restart-after-ms";
  public static final long DEFAULT_RESTART_AFTER_MS = 30_000;
  public static final String RESTART_AFTER_FAILURES = PREFIX + "serve.restart-after-failures";
  public static final int DEFAULT_RESTART_AFTER_FAILURES = 3;
  /**
   * While YARN has asks outstanding, the scheduling loop calls the core at least this often even
   * if nothing changed in YARN (a reload on the core's side or a starvation timeout may make room
   * for them). 0: only on changes. An idle cluster (no asks) makes no calls either way.
   */
  public static final String RECHECK_MS = PREFIX + "scheduler.recheck-ms";
  public static final long DEFAULT_RECHECK_MS = 1000;
  /**
   * A schedule call lists at most this many nodes with room; the next calls, made at once, list
   * the rest (NodeOffers). Bounds a call's work on a large cluster to what the bridge timeout
   * allows.
   */
  public static final String MAX_NODES_PER_CALL = PREFIX + "scheduler.max-nodes-per-call";
  public static final int DEFAULT_MAX_NODES_PER_CALL = 1000;
  /**
   * A directory of any Hadoop FileSystem where the core's preemption state is kept for the next
   * active RM; unset: under ZKRMStateStore's root or FileSystemRMStateStore's URI, whichever the
   * RM's state store is (PreemptionStore).
   */
  public static final String PREEMPTION_STATE_DIR = PREFIX + "preemption.state-dir";

  /**
   * false (default): a node is offered to the core once per NodeManager heartbeat, as
   * CapacityScheduler and FairScheduler decide for a node at its heartbeat. true: calls offer every
   * node with room, between heartbeats too, as CapacityScheduler's asynchronous scheduling does.
   */
  public static final String OFFER_BETWEEN_HEARTBEATS =
      PREFIX + "scheduler.offer-between-heartbeats";
  public static final boolean DEFAULT_OFFER_BETWEEN_HEARTBEATS = false;

  /**
   * The most of the scheduling loop's assignments that commits give back behind AMs asked for
   * while a call was out (LateAmAsks, DeferralBudget): 1 (default) every such assignment, 0 none
   * (the AM waits for the next call while the reply is committed whole).
   */
  public static final String MAX_DEFERRED_SHARE = PREFIX + "scheduler.max-deferred-share";
  public static final double DEFAULT_MAX_DEFERRED_SHARE = 1.0;

  /**
   * The RM id whose per-RM keys apply: this RM's HA id (HAUtil, as for its addresses), or null
   * without HA.
   */
  public static String rmId(Configuration conf) {
    return HAUtil.isHAEnabled(conf) ? HAUtil.getRMHAId(conf) : null;
  }

  /**
   * `conf` as the RM `rmId` reads it: every `yarn-drf.KEY.RMID` in it overrides `yarn-drf.KEY`.
   * A copy when there is something to override; `conf` itself otherwise.
   */
  public static Configuration forRm(Configuration conf, String rmId) {
    if (rmId == null || rmId.isEmpty()) {
      return conf;
    }
    String suffix = "." + rmId;
    Configuration out = null;
    for (Map.Entry<String, String> e : conf.getPropsWithPrefix(PREFIX).entrySet()) {
      String key = e.getKey();
      if (key.endsWith(suffix) && key.length() > suffix.length()) {
        if (out == null) {
          out = new Configuration(conf);
        }
        out.set(PREFIX + key.substring(0, key.length() - suffix.length()), e.getValue());
      }
    }
    return out == null ? conf : out;
  }
}

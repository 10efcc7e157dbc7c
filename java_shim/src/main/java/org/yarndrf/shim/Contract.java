// Generated from yarn_bridge/contract.yaml by `make contract` (python -m yarn_bridge.contract_gen).
// Do not edit: edit the spec and regenerate.
package org.yarndrf.shim;

/**
 * The bridge's wire contract as the spec states it: the version, the request types, the delta
 * ops, every object's field names and every row's positions. The generated value classes
 * (RequestValues, ReplyValues) write and read the messages with these; ContractSpecTest checks
 * {@link #SPEC_SHA256} against the spec.
 */
public final class Contract {
  public static final int VERSION = 7;
  /** The SHA-256 of the spec's bytes this file was generated from. */
  public static final String SPEC_SHA256 = "4df3e377dd8aa1003436126207094277582e10e71ed1e30d8919466c12f4526a";

  private Contract() {
  }

  /** The request types. */
  public static final class Types {
    public static final String SNAPSHOT = "snapshot";
    public static final String SCHEDULE = "schedule";
    public static final String RELOAD = "reload";
    public static final String MOVE = "move";

    private Types() {
    }
  }

  /** The delta ops, and the field that names a delta's op. */
  public static final class Ops {
    public static final String OP = "op";
    public static final String NODE_ADDED = "node_added";
    public static final String NODE_UPDATED = "node_updated";
    public static final String NODE_REMOVED = "node_removed";
    public static final String APP_ADDED = "app_added";
    public static final String APP_REMOVED = "app_removed";
    public static final String ATTEMPT_ADDED = "attempt_added";
    public static final String ASSIGNMENT_REFUSED = "assignment_refused";
    public static final String BLACKLIST = "blacklist";
    public static final String APP_PRIORITY = "app_priority";
    public static final String LABELS = "labels";
    public static final String NODE_LABEL = "node_label";

    private Ops() {
    }
  }

  /** The requests of the spec. */
  public static final class Requests {

    /** What every request has before its own fields. */
    public static final class Envelope {
      public static final String V = "v";
      public static final String TYPE = "type";
      public static final String EPOCH = "epoch";

      private Envelope() {
      }
    }

    /**
     * YARN's whole state; the core rebuilds itself from it (first contact, and after any failure).
     */
    public static final class Snapshot {
      public static final String RESOURCES = "resources";
      public static final String NODES = "nodes";
      public static final String APPS = "apps";
      public static final String CONTAINERS = "containers";
      public static final String ASKS = "asks";
      public static final String COUNTS = "counts";
      public static final String AM_ASKS = "am_asks";
      public static final String LABELS = "labels";
      public static final String PREEMPTION_STATE = "preemption_state";

      private Snapshot() {
      }
    }

    /**
     * Everything that changed since the last call, in the order the core applies it (deltas,
     * started, finished, asks, counts, submissions), and every node with room for some ask to
     * decide for.
     */
    public static final class Schedule {
      public static final String SEQ = "seq";
      public static final String DELTAS = "deltas";
      public static final String STARTED = "started";
      public static final String FINISHED = "finished";
      public static final String ASKS = "asks";
      public static final String COUNTS = "counts";
      public static final String AM_ASKS = "am_asks";
      public static final String SUBMISSIONS = "submissions";
      public static final String NODES = "nodes";
      public static final String HEARTBEATS = "heartbeats";
      public static final String RTT_MS = "rtt_ms";

      private Schedule() {
      }
    }

    /** `yarn rmadmin -refreshQueues`: the core re-reads its queue file. */
    public static final class Reload {
      public static final String PATH = "path";

      private Reload() {
      }
    }

    /**
     * `yarn application -movetoqueue`: the app to another queue, checked for its user (YARN has
     * checked the caller's rights).
     */
    public static final class Move {
      public static final String APP = "app";
      public static final String QUEUE = "queue";
      public static final String USER = "user";
      public static final String GROUPS = "groups";

      private Move() {
      }
    }

    private Requests() {
    }
  }

  /** The items of the spec. */
  public static final class Items {

    /** A node as a snapshot lists it and node_added carries it. */
    public static final class Node {
      public static final String NODE = "node";
      public static final String CAPACITY = "capacity";
      public static final String RACK = "rack";
      public static final String CARDS = "cards";
      public static final String LABEL = "label";

      private Node() {
      }
    }

    /**
     * An app YARN runs, as a snapshot lists it and app_added carries it: taken into its queue
     * without placement or ACLs.
     */
    public static final class App {
      public static final String APP = "app";
      public static final String USER = "user";
      public static final String QUEUE = "queue";
      public static final String GROUPS = "groups";
      public static final String PRIORITY = "priority";
      public static final String BLACKLIST = "blacklist";

      private App() {
      }
    }

    /** An app to place (placement rules, then the submit ACL), the queue as submitted. */
    public static final class Submission {
      public static final String APP = "app";
      public static final String USER = "user";
      public static final String QUEUE = "queue";
      public static final String GROUPS = "groups";
      public static final String PRIORITY = "priority";
      public static final String LABEL = "label";

      private Submission() {
      }
    }

    private Items() {
    }
  }

  /** The deltas of the spec. */
  public static final class Deltas {

    // node_added: the fields of Items.Node

    /**
     * a node's capacity changed; `cards` only when its cards changed ([]: it declares none any
     * more)
     */
    public static final class NodeUpdated {
      public static final String NODE = "node";
      public static final String CAPACITY = "capacity";
      public static final String CARDS = "cards";

      private NodeUpdated() {
      }
    }

    /** a node left */
    public static final class NodeRemoved {
      public static final String NODE = "node";

      private NodeRemoved() {
      }
    }

    // app_added: the fields of Items.App

    /** an app ended */
    public static final class AppRemoved {
      public static final String APP = "app";

      private AppRemoved() {
      }
    }

    /**
     * a new attempt: outstanding asks cleared, their ids forgotten (for an app that had an attempt
     * before, a blacklist delta with the new attempt's whole blacklist follows in the same request)
     */
    public static final class AttemptAdded {
      public static final String APP = "app";

      private AttemptAdded() {
      }
    }

    /** the shim refused an assignment at commit */
    public static final class AssignmentRefused {
      public static final String ASSIGNMENT_ID = "assignment_id";
      public static final String REASON = "reason";

      private AssignmentRefused() {
      }
    }

    /** the app's whole blacklist after an allocate call or a new attempt changed it */
    public static final class Blacklist {
      public static final String APP = "app";
      public static final String PLACES = "places";

      private Blacklist() {
      }
    }

    /** `yarn application -updatePriority` */
    public static final class AppPriority {
      public static final String APP = "app";
      public static final String PRIORITY = "priority";

      private AppPriority() {
      }
    }

    /**
     * the cluster's node labels changed (YARN's RMNodeLabelsManager; the shim compares at each
     * call)
     */
    public static final class Labels {
      public static final String LABELS = "labels";

      private Labels() {
      }
    }

    /**
     * a node moved to another partition (rmadmin -replaceLabelsOnNode, or the NodeManager's own
     * labels)
     */
    public static final class NodeLabel {
      public static final String NODE = "node";
      public static final String LABEL = "label";

      private NodeLabel() {
      }
    }

    private Deltas() {
    }
  }

  /** The rows of the spec. */
  public static final class Rows {

    /** A container YARN started ("started"), or a running one (a snapshot's "containers"). */
    public static final class ContainerRow {
      public static final int CONTAINER = 0;
      public static final int APP = 1;
      public static final int NODE = 2;
      public static final int PRIORITY = 3;
      public static final int ALLOCATION_ID = 4;
      public static final int ASSIGNMENT_ID = 5;
      /**
       * Where the tail begins: one amount per resource type in the snapshot's `resources` order;
       * then, for a container with the allocation tag yarn-drf.gpu-cards (since 6), the indices of
       * its cards as a list
       */
      public static final int TAIL = 6;

      private ContainerRow() {
      }
    }

    /** An ask in full ("asks"); later count changes go by its id ("counts"). */
    public static final class AskRow {
      public static final int ID = 0;
      public static final int COUNT = 1;
      public static final int APP = 2;
      public static final int PRIORITY = 3;
      public static final int ALLOCATION_ID = 4;
      public static final int LOCATION = 5;
      public static final int RELAX_LOCALITY = 6;
      /**
       * Where the tail begins: one amount per resource type in the snapshot's `resources` order;
       * then optionally (since 6) its request key's node label expression (absent: its queue's
       * default applies)
       */
      public static final int TAIL = 7;

      private AskRow() {
      }
    }

    /** A node with free room (a schedule's "nodes"). */
    public static final class NodeRow {
      public static final int NODE = 0;
      /**
       * Where the tail begins: its unallocated amounts as YARN has them, in the snapshot's
       * `resources` order
       */
      public static final int TAIL = 1;

      private NodeRow() {
      }
    }

    /** A container that ended: flat pairs in "finished". */
    public static final class FinishedPair {
      public static final int CONTAINER = 0;
      public static final int STATE = 1;

      private FinishedPair() {
      }
    }

    /** An ask's new count: flat pairs in "counts". */
    public static final class CountPair {
      public static final int ID = 0;
      public static final int COUNT = 1;

      private CountPair() {
      }
    }

    /** An app's headroom (a schedule reply's "headroom"), only for the apps where it changed. */
    public static final class HeadroomRow {
      public static final int APP = 0;
      /**
       * Where the tail begins: what it could still get, one amount per resource type in the
       * snapshot's `resources` order
       */
      public static final int TAIL = 1;

      private HeadroomRow() {
      }
    }

    /**
     * A node the core holds for one request (a schedule reply's "holds"): nothing else starts there
     * until the request fits.
     */
    public static final class HoldRow {
      public static final int NODE = 0;
      public static final int APP = 1;
      public static final int PRIORITY = 2;
      public static final int ALLOCATION_ID = 3;
      /**
       * Where the tail begins: the size of one container of the request, one amount per resource
       * type in the snapshot's `resources` order
       */
      public static final int TAIL = 4;

      private HoldRow() {
      }
    }

    /** Why an app's AM waits (a schedule reply's "am_diagnostics"). */
    public static final class AmDiagnosticPair {
      public static final int APP = 0;
      public static final int TEXT = 1;

      private AmDiagnosticPair() {
      }
    }

    private Rows() {
    }
  }

  /** The replies of the spec. */
  public static final class Replies {

    /** What every reply has before its own fields. */
    public static final class Envelope {
      public static final String V = "v";
      public static final String OK = "ok";
      public static final String ERROR = "error";

      private Envelope() {
      }
    }

    /** The core's queue tree, rebuilt. */
    public static final class Snapshot {
      public static final String QUEUES = "queues";

      private Snapshot() {
      }
    }

    /** The call's decisions; each optional field only when it says something. */
    public static final class Schedule {
      public static final String SEQ = "seq";
      public static final String ASSIGNMENTS = "assignments";
      public static final String PLACEMENTS = "placements";
      public static final String QUEUES = "queues";
      public static final String QUEUES_BUILT = "queues_built";
      public static final String QUEUES_CREATED = "queues_created";
      public static final String HEADROOM = "headroom";
      public static final String AM_DIAGNOSTICS = "am_diagnostics";
      public static final String PREEMPT = "preempt";
      public static final String KILL = "kill";
      public static final String CALL_IN_MS = "call_in_ms";
      public static final String PREEMPTION_STATE = "preemption_state";
      public static final String HOLDS = "holds";
      public static final String HOLDS_ENDED = "holds_ended";
      public static final String CARRIED = "carried";

      private Schedule() {
      }
    }

    /** A reload applied or refused. */
    public static final class Reload {
      public static final String ACCEPTED = "accepted";
      public static final String CHANGES = "changes";
      public static final String QUEUES = "queues";
      public static final String ERRORS = "errors";

      private Reload() {
      }
    }

    /** The core's answer to a move. */
    public static final class Move {
      public static final String ACCEPTED = "accepted";
      public static final String QUEUE = "queue";
      public static final String REASON = "reason";

      private Move() {
      }
    }

    private Replies() {
    }
  }

  /** The reply items of the spec. */
  public static final class ReplyItems {

    /** A container the core decided to start on a node, for the shim to re-check and commit. */
    public static final class Assignment {
      public static final String ASSIGNMENT_ID = "assignment_id";
      public static final String APP = "app";
      public static final String NODE = "node";
      public static final String QUEUE = "queue";
      public static final String PRIORITY = "priority";
      public static final String ALLOCATION_ID = "allocation_id";
      public static final String RESOURCES = "resources";
      public static final String CARDS = "cards";

      private Assignment() {
      }
    }

    /** The core's placement of a submitted app. */
    public static final class Placement {
      public static final String APP = "app";
      public static final String ACCEPTED = "accepted";
      public static final String QUEUE = "queue";
      public static final String REASON = "reason";

      private Placement() {
      }
    }

    /** A container of the preemption plan ("preempt", "kill"). */
    public static final class Preemption {
      public static final String CONTAINER = "container";
      public static final String APP = "app";
      public static final String NODE = "node";
      public static final String QUEUE = "queue";
      public static final String FOR_QUEUE = "for_queue";
      public static final String REASON = "reason";
      public static final String KILL_IN_MS = "kill_in_ms";

      private Preemption() {
      }
    }

    /**
     * One queue of a "queues" list, what the shim needs for getQueueInfo, ACLs, limits and labels.
     */
    public static final class QueueEntry {
      public static final String NAME = "name";
      public static final String LEAF = "leaf";
      public static final String WEIGHT = "weight";
      public static final String MAX = "max";
      public static final String MAX_FRACTION = "max_fraction";
      public static final String SUBMIT_ACL = "submit_acl";
      public static final String ADMIN_ACL = "admin_acl";
      public static final String DRAINING = "draining";
      public static final String MAX_CONTAINER = "max_container";
      public static final String LABELS = "labels";
      public static final String DEFAULT_LABEL = "default_label";

      private QueueEntry() {
      }
    }

    /**
     * The core's preemption state record: its own version (a saved record outlives the processes);
     * times in ms since 1970.
     */
    public static final class PreemptionState {
      public static final String V = "v";
      public static final String MARKS = "marks";
      public static final String LEAVES = "leaves";

      private PreemptionState() {
      }
    }

    /** A container marked for preemption. */
    public static final class Mark {
      public static final String CONTAINER = "container";
      public static final String NODE = "node";
      public static final String APP = "app";
      public static final String PRIORITY = "priority";
      public static final String ALLOCATION_ID = "allocation_id";
      public static final String REASON = "reason";
      public static final String MARKED_AT_MS = "marked_at_ms";
      public static final String DEADLINE_MS = "deadline_ms";
      public static final String WAITING_UNTIL_MS = "waiting_until_ms";

      private Mark() {
      }
    }

    /** A leaf's starvation clocks (those it has). */
    public static final class Leaf {
      public static final String QUEUE = "queue";
      public static final String BELOW_FAIR_SINCE_MS = "below_fair_since_ms";
      public static final String BELOW_MIN_SINCE_MS = "below_min_since_ms";
      public static final String STARVED = "starved";
      public static final String WAITING_UNTIL_MS = "waiting_until_ms";

      private Leaf() {
      }
    }

    private ReplyItems() {
    }
  }
}

// Generated from yarn_bridge/contract.yaml by `make contract` (python -m yarn_bridge.contract_gen).
// Do not edit: edit the spec and regenerate.
package org.yarndrf.shim;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The requests the shim sends as the spec states them: one value class each (and for the
 * objects, deltas and rows in them), a field per field of the spec, and its writer, which writes
 * the fields in the spec's order ({@link Messages#encode} writes a request with them).
 */
public final class RequestValues {
  /** The SHA-256 of the spec's bytes this file was generated from (ContractSpecTest). */
  static final String SPEC_SHA256 = "4df3e377dd8aa1003436126207094277582e10e71ed1e30d8919466c12f4526a";

  private RequestValues() {
  }

  /** What every request has before its own fields: v, type, epoch. */
  public abstract static class Request {
    public final String type;
    public final long epoch;

    Request(String type, long epoch) {
      this.type = type;
      this.epoch = epoch;
    }

    /** Writes the whole request: the envelope, then its own fields. */
    final void write(JsonGenerator g) throws IOException {
      g.writeStartObject();
      g.writeNumberField(Contract.Requests.Envelope.V, Contract.VERSION);
      g.writeStringField(Contract.Requests.Envelope.TYPE, type);
      g.writeNumberField(Contract.Requests.Envelope.EPOCH, epoch);
      writeFields(g);
      g.writeEndObject();
    }

    abstract void writeFields(JsonGenerator g) throws IOException;
  }

  /**
   * YARN's whole state; the core rebuilds itself from it (first contact, and after any failure).
   */
  public static final class Snapshot extends Request {
    /** YARN's resource type names, in YARN's order: the order of every row's amounts */
    public final List<String> resources;
    /** the cluster's nodes */
    public final List<NodeInfo> nodes = new ArrayList<>();
    /** the apps YARN runs, each taken into the queue it names */
    public final List<AppInfo> apps = new ArrayList<>();
    /** the running containers */
    public final List<ContainerRow> containers = new ArrayList<>();
    /** every outstanding ask in full */
    public final List<AskRow> asks = new ArrayList<>();
    /** empty (a snapshot sends every ask in full) */
    public final List<Long> counts = new ArrayList<>();
    /** the ids of the asks that are their attempt's AM ask */
    public final List<Long> amAsks = new ArrayList<>();
    /** the cluster's node labels, name -> exclusive; absent when none */
    public final Map<String, Boolean> labels = new TreeMap<>();
    /**
     * last: the latest a schedule reply carried, or the one the RM read at start (the preemption
     * state record)
     */
    public String preemptionState;

    public Snapshot(long epoch, List<String> resources) {
      super(Contract.Types.SNAPSHOT, epoch);
      this.resources = resources;
    }

    @Override
    void writeFields(JsonGenerator g) throws IOException {
      writeTexts(g, Contract.Requests.Snapshot.RESOURCES, resources);
      g.writeArrayFieldStart(Contract.Requests.Snapshot.NODES);
      for (NodeInfo x : nodes) {
        g.writeStartObject();
        writeNode(g, x);
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeArrayFieldStart(Contract.Requests.Snapshot.APPS);
      for (AppInfo x : apps) {
        g.writeStartObject();
        writeApp(g, x);
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeArrayFieldStart(Contract.Requests.Snapshot.CONTAINERS);
      for (ContainerRow x : containers) {
        writeContainerRow(g, x);
      }
      g.writeEndArray();
      g.writeArrayFieldStart(Contract.Requests.Snapshot.ASKS);
      for (AskRow x : asks) {
        writeAskRow(g, x);
      }
      g.writeEndArray();
      writeNumbers(g, Contract.Requests.Snapshot.COUNTS, counts);
      writeNumbers(g, Contract.Requests.Snapshot.AM_ASKS, amAsks);
      if (!labels.isEmpty()) {
        writeLabels(g, Contract.Requests.Snapshot.LABELS, labels);
      }
      if (preemptionState != null) {
        g.writeFieldName(Contract.Requests.Snapshot.PREEMPTION_STATE);
        g.writeRawValue(preemptionState);
      }
    }
  }

  /**
   * Everything that changed since the last call, in the order the core applies it (deltas, started,
   * finished, asks, counts, submissions), and every node with room for some ask to decide for.
   */
  public static final class Schedule extends Request {
    /**
     * the call's number in its epoch; the reply echoes it, a repeated call gets the stored reply
     */
    public final long seq;
    /** app and node events (the deltas below), in YARN's order */
    public final List<Delta> deltas = new ArrayList<>();
    /** the containers YARN started */
    public final List<ContainerRow> started = new ArrayList<>();
    /** the containers that ended */
    public final List<String> finished = new ArrayList<>();
    /**
     * asks in full: on first sight, and under a new id when their shape, relax_locality, label or
     * AM-ness changes
     */
    public final List<AskRow> asks = new ArrayList<>();
    /** the new counts of asks sent before */
    public final List<Long> counts = new ArrayList<>();
    /** the ids of this request's asks in full that are their attempt's AM ask */
    public final List<Long> amAsks = new ArrayList<>();
    /** apps YARN holds in SUBMITTED: every one goes again with each call until a reply places it */
    public final List<AppInfo> submissions = new ArrayList<>();
    /**
     * every node whose unallocated room fits YARN's minimum allocation and some outstanding ask;
     * none while no ask waits
     */
    public final List<NodeRow> nodes = new ArrayList<>();
    /** NodeManager heartbeats since the last call, for the metrics */
    public long heartbeats;
    /** the previous schedule call as the shim timed it; absent after a failure */
    public Double rttMs;

    public Schedule(long epoch, long seq) {
      super(Contract.Types.SCHEDULE, epoch);
      this.seq = seq;
    }

    @Override
    void writeFields(JsonGenerator g) throws IOException {
      g.writeNumberField(Contract.Requests.Schedule.SEQ, seq);
      g.writeArrayFieldStart(Contract.Requests.Schedule.DELTAS);
      for (Delta x : deltas) {
        x.write(g);
      }
      g.writeEndArray();
      g.writeArrayFieldStart(Contract.Requests.Schedule.STARTED);
      for (ContainerRow x : started) {
        writeContainerRow(g, x);
      }
      g.writeEndArray();
      writeTexts(g, Contract.Requests.Schedule.FINISHED, finished);
      g.writeArrayFieldStart(Contract.Requests.Schedule.ASKS);
      for (AskRow x : asks) {
        writeAskRow(g, x);
      }
      g.writeEndArray();
      writeNumbers(g, Contract.Requests.Schedule.COUNTS, counts);
      writeNumbers(g, Contract.Requests.Schedule.AM_ASKS, amAsks);
      g.writeArrayFieldStart(Contract.Requests.Schedule.SUBMISSIONS);
      for (AppInfo x : submissions) {
        g.writeStartObject();
        writeSubmission(g, x);
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeArrayFieldStart(Contract.Requests.Schedule.NODES);
      for (NodeRow x : nodes) {
        writeNodeRow(g, x);
      }
      g.writeEndArray();
      g.writeNumberField(Contract.Requests.Schedule.HEARTBEATS, heartbeats);
      if (rttMs != null) {
        g.writeNumberField(Contract.Requests.Schedule.RTT_MS, rttMs);
      }
    }
  }

  /** `yarn rmadmin -refreshQueues`: the core re-reads its queue file. */
  public static final class Reload extends Request {
    /**
     * the file YARN's configuration names; must be the file the service runs (any other is refused
     * unread)
     */
    public String path;

    public Reload(long epoch) {
      super(Contract.Types.RELOAD, epoch);
    }

    @Override
    void writeFields(JsonGenerator g) throws IOException {
      if (path != null) {
        g.writeStringField(Contract.Requests.Reload.PATH, path);
      }
    }
  }

  /**
   * `yarn application -movetoqueue`: the app to another queue, checked for its user (YARN has
   * checked the caller's rights).
   */
  public static final class Move extends Request {
    /** the app */
    public final String app;
    /** the target as the caller named it */
    public final String queue;
    /** the app's user */
    public final String user;
    /** the user's groups */
    public final List<String> groups = new ArrayList<>();

    public Move(long epoch, String app, String queue, String user) {
      super(Contract.Types.MOVE, epoch);
      this.app = app;
      this.queue = queue;
      this.user = user;
    }

    @Override
    void writeFields(JsonGenerator g) throws IOException {
      g.writeStringField(Contract.Requests.Move.APP, app);
      g.writeStringField(Contract.Requests.Move.QUEUE, queue);
      g.writeStringField(Contract.Requests.Move.USER, user);
      writeTexts(g, Contract.Requests.Move.GROUPS, groups);
    }
  }

  /** A node as a snapshot lists it and node_added carries it. */
  public static final class NodeInfo {
    /** YARN's node id, host:port */
    public final String node;
    /** its capacity, resource name -> amount */
    public final Map<String, Long> capacity;
    /** its rack (absent: /default-rack) */
    public String rack;
    /**
     * the MiB of each of its GPU cards as its NodeManager declares them (their sum is its gpu-mem);
     * checked apart: a node whose cards are wrong comes in without them
     */
    public List<Long> cards;
    /** its node label (partition); absent: none */
    public String label;

    public NodeInfo(String node, Map<String, Long> capacity) {
      this.node = node;
      this.capacity = capacity;
    }

    public NodeInfo withRack(String rack) {
      this.rack = rack;
      return this;
    }

    public NodeInfo withCards(List<Long> cards) {
      this.cards = cards;
      return this;
    }

    public NodeInfo withLabel(String label) {
      this.label = label;
      return this;
    }
  }

  /** Writes node's fields (the object's braces are the caller's). */
  static void writeNode(JsonGenerator g, NodeInfo x) throws IOException {
    g.writeStringField(Contract.Items.Node.NODE, x.node);
    writeAmounts(g, Contract.Items.Node.CAPACITY, x.capacity);
    if (x.rack != null) {
      g.writeStringField(Contract.Items.Node.RACK, x.rack);
    }
    if (x.cards != null) {
      writeNumbers(g, Contract.Items.Node.CARDS, x.cards);
    }
    if (x.label != null && !x.label.isEmpty()) {
      g.writeStringField(Contract.Items.Node.LABEL, x.label);
    }
  }

  /**
   * An app YARN runs, as a snapshot lists it and app_added carries it: taken into its queue without
   * placement or ACLs. An app to place (placement rules, then the submit ACL), the queue as
   * submitted.
   */
  public static final class AppInfo {
    /** YARN's application id */
    public final String app;
    /** the submitting user */
    public final String user;
    /** the queue it runs in (full path) */
    public final String queue;
    /** the user's groups */
    public List<String> groups = Collections.emptyList();
    /** its application priority as the RM capped it; only when not 0 */
    public int priority;
    /** a snapshot's app: the nodes and racks its AM blacklisted, as the blacklist delta's places */
    public List<String> blacklist = Collections.emptyList();
    /** its AM's node label expression; absent: none */
    public String label;

    public AppInfo(String app, String user, String queue) {
      this.app = app;
      this.user = user;
      this.queue = queue;
    }

    public AppInfo withGroups(List<String> groups) {
      this.groups = groups;
      return this;
    }

    public AppInfo withPriority(int priority) {
      this.priority = priority;
      return this;
    }

    public AppInfo withBlacklist(List<String> blacklist) {
      this.blacklist = blacklist;
      return this;
    }

    public AppInfo withLabel(String label) {
      this.label = label;
      return this;
    }
  }

  /** Writes app's fields (the object's braces are the caller's). */
  static void writeApp(JsonGenerator g, AppInfo x) throws IOException {
    g.writeStringField(Contract.Items.App.APP, x.app);
    g.writeStringField(Contract.Items.App.USER, x.user);
    g.writeStringField(Contract.Items.App.QUEUE, x.queue);
    writeTexts(g, Contract.Items.App.GROUPS, x.groups);
    if (x.priority != 0) {
      g.writeNumberField(Contract.Items.App.PRIORITY, x.priority);
    }
    if (!x.blacklist.isEmpty()) {
      writeTexts(g, Contract.Items.App.BLACKLIST, x.blacklist);
    }
  }

  /** Writes submission's fields (the object's braces are the caller's). */
  static void writeSubmission(JsonGenerator g, AppInfo x) throws IOException {
    g.writeStringField(Contract.Items.Submission.APP, x.app);
    g.writeStringField(Contract.Items.Submission.USER, x.user);
    g.writeStringField(Contract.Items.Submission.QUEUE, x.queue);
    writeTexts(g, Contract.Items.Submission.GROUPS, x.groups);
    if (x.priority != 0) {
      g.writeNumberField(Contract.Items.Submission.PRIORITY, x.priority);
    }
    if (x.label != null) {
      g.writeStringField(Contract.Items.Submission.LABEL, x.label);
    }
  }

  /**
   * An app or node event (docs/bridge.md, "Deltas"): its op and that op's fields; the others
   * are null (0). A delta that shares an object's fields holds them in that object.
   */
  public static final class Delta {
    public final String op;
    public final NodeInfo node;
    public final AppInfo app;
    public final String assignmentId;
    public final String reason;
    public final List<String> places;
    public final int priority;
    public final Map<String, Boolean> labels;
    public final String label;

    private Delta(String op, NodeInfo node, AppInfo app, String assignmentId, String reason,
        List<String> places, int priority, Map<String, Boolean> labels, String label) {
      this.op = op;
      this.node = node;
      this.app = app;
      this.assignmentId = assignmentId;
      this.reason = reason;
      this.places = places;
      this.priority = priority;
      this.labels = labels;
      this.label = label;
    }

    /** a node joined */
    public static Delta nodeAdded(NodeInfo node) {
      return new Delta(Contract.Ops.NODE_ADDED, node, null, null, null, null, 0, null, null);
    }

    /**
     * a node's capacity changed; `cards` only when its cards changed ([]: it declares none any
     * more)
     */
    public static Delta nodeUpdated(String node, Map<String, Long> capacity, List<Long> cards) {
      return new Delta(Contract.Ops.NODE_UPDATED, new NodeInfo(node, capacity).withCards(cards),
          null, null, null, null, 0, null, null);
    }

    /** a node left */
    public static Delta nodeRemoved(String node) {
      return new Delta(Contract.Ops.NODE_REMOVED, new NodeInfo(node, null), null, null, null, null,
          0, null, null);
    }

    /** an app YARN recovered after an RM restart, in the queue it ran in */
    public static Delta appAdded(AppInfo app) {
      return new Delta(Contract.Ops.APP_ADDED, null, app, null, null, null, 0, null, null);
    }

    /** an app ended */
    public static Delta appRemoved(String app) {
      return new Delta(Contract.Ops.APP_REMOVED, null, new AppInfo(app, null, null), null, null,
          null, 0, null, null);
    }

    /**
     * a new attempt: outstanding asks cleared, their ids forgotten (for an app that had an attempt
     * before, a blacklist delta with the new attempt's whole blacklist follows in the same request)
     */
    public static Delta attemptAdded(String app) {
      return new Delta(Contract.Ops.ATTEMPT_ADDED, null, new AppInfo(app, null, null), null, null,
          null, 0, null, null);
    }

    /** the shim refused an assignment at commit */
    public static Delta assignmentRefused(String assignmentId, String reason) {
      return new Delta(Contract.Ops.ASSIGNMENT_REFUSED, null, null, assignmentId, reason, null, 0,
          null, null);
    }

    /** the app's whole blacklist after an allocate call or a new attempt changed it */
    public static Delta blacklist(String app, List<String> places) {
      return new Delta(Contract.Ops.BLACKLIST, null, new AppInfo(app, null, null), null, null,
          places, 0, null, null);
    }

    /** `yarn application -updatePriority` */
    public static Delta appPriority(String app, int priority) {
      return new Delta(Contract.Ops.APP_PRIORITY, null, new AppInfo(app, null, null), null, null,
          null, priority, null, null);
    }

    /**
     * the cluster's node labels changed (YARN's RMNodeLabelsManager; the shim compares at each
     * call)
     */
    public static Delta labels(Map<String, Boolean> labels) {
      return new Delta(Contract.Ops.LABELS, null, null, null, null, null, 0, labels, null);
    }

    /**
     * a node moved to another partition (rmadmin -replaceLabelsOnNode, or the NodeManager's own
     * labels)
     */
    public static Delta nodeLabel(String node, String label) {
      return new Delta(Contract.Ops.NODE_LABEL, new NodeInfo(node, null), null, null, null, null, 0,
          null, label);
    }

    /** Writes the delta: its op, then the op's fields. */
    void write(JsonGenerator g) throws IOException {
      g.writeStartObject();
      g.writeStringField(Contract.Ops.OP, op);
      switch (op) {
        case Contract.Ops.NODE_ADDED:
          writeNode(g, node);
          break;
        case Contract.Ops.NODE_UPDATED:
          g.writeStringField(Contract.Deltas.NodeUpdated.NODE, node.node);
          writeAmounts(g, Contract.Deltas.NodeUpdated.CAPACITY, node.capacity);
          if (node.cards != null) {
            writeNumbers(g, Contract.Deltas.NodeUpdated.CARDS, node.cards);
          }
          break;
        case Contract.Ops.NODE_REMOVED:
          g.writeStringField(Contract.Deltas.NodeRemoved.NODE, node.node);
          break;
        case Contract.Ops.APP_ADDED:
          writeApp(g, app);
          break;
        case Contract.Ops.APP_REMOVED:
          g.writeStringField(Contract.Deltas.AppRemoved.APP, app.app);
          break;
        case Contract.Ops.ATTEMPT_ADDED:
          g.writeStringField(Contract.Deltas.AttemptAdded.APP, app.app);
          break;
        case Contract.Ops.ASSIGNMENT_REFUSED:
          g.writeStringField(Contract.Deltas.AssignmentRefused.ASSIGNMENT_ID, assignmentId);
          g.writeStringField(Contract.Deltas.AssignmentRefused.REASON, reason);
          break;
        case Contract.Ops.BLACKLIST:
          g.writeStringField(Contract.Deltas.Blacklist.APP, app.app);
          writeTexts(g, Contract.Deltas.Blacklist.PLACES, places);
          break;
        case Contract.Ops.APP_PRIORITY:
          g.writeStringField(Contract.Deltas.AppPriority.APP, app.app);
          g.writeNumberField(Contract.Deltas.AppPriority.PRIORITY, priority);
          break;
        case Contract.Ops.LABELS:
          writeLabels(g, Contract.Deltas.Labels.LABELS, labels);
          break;
        case Contract.Ops.NODE_LABEL:
          g.writeStringField(Contract.Deltas.NodeLabel.NODE, node.node);
          g.writeStringField(Contract.Deltas.NodeLabel.LABEL, label);
          break;
        default:
          throw new IllegalStateException("no delta op " + op);
      }
      g.writeEndObject();
    }
  }

  /** A container YARN started ("started"), or a running one (a snapshot's "containers"). */
  public static final class ContainerRow {
    /** YARN's container id */
    public final String container;
    /** its app */
    public final String app;
    /** its node */
    public final String node;
    /** its request's priority */
    public final int priority;
    /** its request's allocation id */
    public final long allocationId;
    /** the core's assignment it applies; null for one the core did not assign (recovered) */
    public final String assignmentId;
    /** its size */
    public final long[] amounts;
    /** the cards it runs on as its allocation tag names them; null: no tag */
    public List<Integer> cards;

    public ContainerRow(String container, String app, String node, int priority, long allocationId,
        String assignmentId, long[] amounts) {
      this.container = container;
      this.app = app;
      this.node = node;
      this.priority = priority;
      this.allocationId = allocationId;
      this.assignmentId = assignmentId;
      this.amounts = amounts;
    }

    public ContainerRow withCards(List<Integer> cards) {
      this.cards = cards;
      return this;
    }
  }

  /** Writes one row: its fixed elements in position order, then its tail. */
  static void writeContainerRow(JsonGenerator g, ContainerRow r) throws IOException {
    g.writeStartArray();
    g.writeString(r.container);
    g.writeString(r.app);
    g.writeString(r.node);
    g.writeNumber(r.priority);
    g.writeNumber(r.allocationId);
    g.writeString(r.assignmentId);
    for (long a : r.amounts) {
      g.writeNumber(a);
    }
    if (r.cards != null) {
      g.writeStartArray();
      for (long a : r.cards) {
        g.writeNumber(a);
      }
      g.writeEndArray();
    }
    g.writeEndArray();
  }

  /** An ask in full ("asks"); later count changes go by its id ("counts"). */
  public static final class AskRow {
    /** the shim's id for it, never reused */
    public final long id;
    /** how many containers (absolute; 0 withdraws it) */
    public final int count;
    /** its app */
    public final String app;
    /** its priority */
    public final int priority;
    /** its allocation request id */
    public final long allocationId;
    /** *, a rack or a node */
    public final String location;
    /** YARN's relaxLocality */
    public final boolean relax;
    /** its size */
    public final long[] amounts;
    /** its request key's node label expression; null: none */
    public String label;

    public AskRow(long id, int count, String app, int priority, long allocationId, String location,
        boolean relax, long[] amounts) {
      this.id = id;
      this.count = count;
      this.app = app;
      this.priority = priority;
      this.allocationId = allocationId;
      this.location = location;
      this.relax = relax;
      this.amounts = amounts;
    }

    public AskRow withLabel(String label) {
      this.label = label;
      return this;
    }
  }

  /** Writes one row: its fixed elements in position order, then its tail. */
  static void writeAskRow(JsonGenerator g, AskRow r) throws IOException {
    g.writeStartArray();
    g.writeNumber(r.id);
    g.writeNumber(r.count);
    g.writeString(r.app);
    g.writeNumber(r.priority);
    g.writeNumber(r.allocationId);
    g.writeString(r.location);
    g.writeBoolean(r.relax);
    for (long a : r.amounts) {
      g.writeNumber(a);
    }
    if (r.label != null) {
      g.writeString(r.label);
    }
    g.writeEndArray();
  }

  /** A node with free room (a schedule's "nodes"). */
  public static final class NodeRow {
    /** YARN's node id */
    public final String node;
    /** its unallocated amounts */
    public final long[] free;

    public NodeRow(String node, long[] free) {
      this.node = node;
      this.free = free;
    }
  }

  /** Writes one row: its fixed elements in position order, then its tail. */
  static void writeNodeRow(JsonGenerator g, NodeRow r) throws IOException {
    g.writeStartArray();
    g.writeString(r.node);
    for (long a : r.free) {
      g.writeNumber(a);
    }
    g.writeEndArray();
  }

  private static void writeTexts(JsonGenerator g, String field, List<String> texts)
      throws IOException {
    g.writeArrayFieldStart(field);
    for (String t : texts) {
      g.writeString(t);
    }
    g.writeEndArray();
  }

  private static void writeNumbers(JsonGenerator g, String field, List<Long> values)
      throws IOException {
    g.writeArrayFieldStart(field);
    for (long x : values) {
      g.writeNumber(x);
    }
    g.writeEndArray();
  }

  /** An object of amounts, in the map's order (the tests' reply writers write theirs with it). */
  static void writeAmounts(JsonGenerator g, String field, Map<String, Long> amounts)
      throws IOException {
    g.writeObjectFieldStart(field);
    for (Map.Entry<String, Long> e : amounts.entrySet()) {
      g.writeNumberField(e.getKey(), e.getValue());
    }
    g.writeEndObject();
  }

  private static void writeLabels(JsonGenerator g, String field, Map<String, Boolean> labels)
      throws IOException {
    g.writeObjectFieldStart(field);
    for (Map.Entry<String, Boolean> e : labels.entrySet()) {
      g.writeBooleanField(e.getKey(), e.getValue());
    }
    g.writeEndObject();
  }
}

package org.yarndrf.shim;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.nm.GpuCards;
import org.yarndrf.shim.Contract.Items;
import org.yarndrf.shim.Contract.Ops;
import org.yarndrf.shim.Contract.Replies;
import org.yarndrf.shim.Contract.ReplyItems;
import org.yarndrf.shim.Contract.ReplyItems.QueueEntry;
import org.yarndrf.shim.Contract.Requests;
import org.yarndrf.shim.Contract.Rows;
import org.yarndrf.shim.Contract.Types;
import org.yarndrf.shim.ReplyValues.Assignment;
import org.yarndrf.shim.ReplyValues.MoveReply;
import org.yarndrf.shim.ReplyValues.Placement;
import org.yarndrf.shim.ReplyValues.ScheduleReply;
import org.yarndrf.shim.bridge.MalformedReplyException;

/**
 * The bridge's message format, version {@link #VERSION} (docs/bridge.md): every request the
 * shim builds and every reply it decodes, as the typed values below, here and nowhere else. The
 * golden messages of tests/bridge/contract/ are what both sides are checked against: ContractTest
 * builds each golden request through this class and decodes each golden reply; the Python tests
 * check that the service decodes the same requests and answers with the same replies. The core's
 * side (requests read, replies written), which only the tests need, is ServiceCodec in the test
 * sources.
 *
 * <p>Requests are written with Jackson's streaming generator, in the golden messages' field
 * order. Replies are read as trees and checked field by field; anything else is a {@link
 * MalformedReplyException} naming what is wrong.
 */
public final class Messages {
  public static final int VERSION = Contract.VERSION;
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Logger LOG = LoggerFactory.getLogger(Messages.class);

  private Messages() {
  }

  // ================================================================== values

  /**
   * A node as a snapshot lists it and node_added carries it; `cards`: the MiB of each of its GPU
   * cards when its NodeManager declares them, else null (node_updated: null when they did not
   * change, empty when the node no longer declares any). `label`: its node label (partition),
   * null for none (a node_label delta: "" for none).
   */
  public static final class NodeInfo {
    public final String node;
    public final Map<String, Long> capacity;
    public final String rack;
    public final List<Long> cards;
    public final String label;

    public NodeInfo(String node, Map<String, Long> capacity, String rack) {
      this(node, capacity, rack, null);
    }

    public NodeInfo(String node, Map<String, Long> capacity, String rack, List<Long> cards) {
      this(node, capacity, rack, cards, null);
    }

    public NodeInfo(String node, Map<String, Long> capacity, String rack, List<Long> cards,
        String label) {
      this.node = node;
      this.capacity = capacity;
      this.rack = rack;
      this.cards = cards;
      this.label = label;
    }
  }

  /**
   * An app as a snapshot lists it and app_added carries it (one YARN runs, in its queue), or as a
   * schedule's submissions carry it (submitted to `queue` as the user named it, not yet placed).
   */
  public static final class AppInfo {
    public final String app;
    public final String user;
    public final String queue;
    public final List<String> groups;
    /** Its application priority as the RM capped it. */
    public final int priority;
    /** A snapshot's app: the nodes (bridge names) and racks its AM blacklisted; empty: none. */
    public final List<String> blacklist;
    /** A submission: its AM's node label expression, or null (none: its queue's default). */
    public final String label;

    public AppInfo(String app, String user, String queue, List<String> groups) {
      this(app, user, queue, groups, 0, Collections.<String>emptyList());
    }

    public AppInfo(String app, String user, String queue, List<String> groups, int priority,
        List<String> blacklist) {
      this(app, user, queue, groups, priority, blacklist, null);
    }

    public AppInfo(String app, String user, String queue, List<String> groups, int priority,
        List<String> blacklist, String label) {
      this.app = app;
      this.user = user;
      this.queue = queue;
      this.groups = groups;
      this.priority = priority;
      this.blacklist = blacklist;
      this.label = label;
    }
  }

  /** An app or node event; which fields it has depends on its op (docs/bridge.md, "Deltas"). */
  public static final class Delta {
    public final String op;
    public final NodeInfo node;  // node_added; node_updated and node_removed use part of it
    public final AppInfo app;  // app_added; app_removed and attempt_added use its id
    public final String assignmentId;  // assignment_refused
    public final String reason;
    public final List<String> places;  // blacklist
    public final int priority;  // app_priority
    public final Map<String, Boolean> labels;  // labels: the cluster's, name -> exclusive

    private Delta(String op, NodeInfo node, AppInfo app, String assignmentId, String reason) {
      this(op, node, app, assignmentId, reason, null, 0);
    }

    private Delta(String op, NodeInfo node, AppInfo app, String assignmentId, String reason,
        List<String> places, int priority) {
      this(op, node, app, assignmentId, reason, places, priority, null);
    }

    private Delta(String op, NodeInfo node, AppInfo app, String assignmentId, String reason,
        List<String> places, int priority, Map<String, Boolean> labels) {
      this.op = op;
      this.node = node;
      this.app = app;
      this.assignmentId = assignmentId;
      this.reason = reason;
      this.places = places;
      this.priority = priority;
      this.labels = labels;
    }

    public static Delta nodeAdded(NodeInfo node) {
      return new Delta(Ops.NODE_ADDED, node, null, null, null);
    }

    public static Delta nodeUpdated(String node, Map<String, Long> capacity, List<Long> cards) {
      return new Delta(Ops.NODE_UPDATED, new NodeInfo(node, capacity, null, cards), null, null, null);
    }

    public static Delta nodeRemoved(String node) {
      return new Delta(Ops.NODE_REMOVED, new NodeInfo(node, null, null), null, null, null);
    }

    public static Delta appAdded(AppInfo app) {
      return new Delta(Ops.APP_ADDED, null, app, null, null);
    }

    public static Delta appRemoved(String app) {
      return new Delta(Ops.APP_REMOVED, null, new AppInfo(app, null, null, null), null, null);
    }

    public static Delta attemptAdded(String app) {
      return new Delta(Ops.ATTEMPT_ADDED, null, new AppInfo(app, null, null, null), null, null);
    }

    public static Delta assignmentRefused(String assignmentId, String reason) {
      return new Delta(Ops.ASSIGNMENT_REFUSED, null, null, assignmentId, reason);
    }

    /** The app's whole blacklist (bridge node names and racks) after its AM changed it. */
    public static Delta blacklist(String app, List<String> places) {
      return new Delta(Ops.BLACKLIST, null, new AppInfo(app, null, null, null), null, null, places,
          0);
    }

    /** The cluster's node labels, whole (name -> exclusive), after YARN's changed. */
    public static Delta labels(Map<String, Boolean> labels) {
      return new Delta(Ops.LABELS, null, null, null, null, null, 0, labels);
    }

    /** The node's new node label ("" for none), after YARN's changed. */
    public static Delta nodeLabel(String node, String label) {
      return new Delta(Ops.NODE_LABEL, new NodeInfo(node, null, null, null, label), null, null, null);
    }

    /** `yarn application -updatePriority`: the priority the RM set. */
    public static Delta appPriority(String app, int priority) {
      return new Delta(Ops.APP_PRIORITY, null, new AppInfo(app, null, null, null), null, null, null,
          priority);
    }
  }

  /** A container YARN started ("started"; a snapshot's "containers"). */
  public static final class ContainerRow {
    public final String container;
    public final String app;
    public final String node;
    public final int priority;
    public final long allocationId;
    /** The core's assignment it applies; null for one the core did not assign (recovered). */
    public final String assignmentId;
    public final long[] amounts;
    /**
     * The GPU cards it runs on, as its allocation tag names them (null: no cards tag), so a core
     * rebuilt from a snapshot or told of a recovered container charges the cards it really uses.
     */
    public final List<Integer> cards;

    public ContainerRow(String container, String app, String node, int priority, long allocationId,
        String assignmentId, long[] amounts) {
      this(container, app, node, priority, allocationId, assignmentId, amounts, null);
    }

    public ContainerRow(String container, String app, String node, int priority, long allocationId,
        String assignmentId, long[] amounts, List<Integer> cards) {
      this.container = container;
      this.app = app;
      this.node = node;
      this.priority = priority;
      this.allocationId = allocationId;
      this.assignmentId = assignmentId;
      this.amounts = amounts;
      this.cards = cards;
    }
  }

  /** An ask sent in full ("asks"); later count changes go by its id ("counts"). */
  public static final class AskRow {
    public final long id;
    public final int count;
    public final String app;
    public final int priority;
    public final long allocationId;
    public final String location;
    public final boolean relax;
    public final long[] amounts;
    /** Its request key's node label expression (YARN's, of its ANY ask), or null for none. */
    public final String label;

    public AskRow(long id, int count, String app, int priority, long allocationId, String location,
        boolean relax, long[] amounts) {
      this(id, count, app, priority, allocationId, location, relax, amounts, null);
    }

    public AskRow(long id, int count, String app, int priority, long allocationId, String location,
        boolean relax, long[] amounts, String label) {
      this.id = id;
      this.count = count;
      this.app = app;
      this.priority = priority;
      this.allocationId = allocationId;
      this.location = location;
      this.relax = relax;
      this.amounts = amounts;
      this.label = label;
    }
  }

  /** A node with free room: the nodes a schedule call decides for. */
  public static final class NodeRow {
    public final String node;
    public final long[] free;

    public NodeRow(String node, long[] free) {
      this.node = node;
      this.free = free;
    }
  }

  /** What every request has: its type and the epoch of the snapshot it follows. */
  public abstract static class Request {
    public final String type;
    public final long epoch;

    Request(String type, long epoch) {
      this.type = type;
      this.epoch = epoch;
    }
  }

  /** YARN's whole state: the core rebuilds itself from it (first contact, and after any failure). */
  public static final class Snapshot extends Request {
    public final List<String> resources;
    public final List<NodeInfo> nodes = new ArrayList<>();
    public final List<AppInfo> apps = new ArrayList<>();
    public final List<ContainerRow> containers = new ArrayList<>();
    public final List<AskRow> asks = new ArrayList<>();
    /** Flat id, count pairs; a snapshot sends every ask in full, so it stays empty. */
    public final List<Long> counts = new ArrayList<>();
    /** The ids of the asks above that are their attempt's AM ask. */
    public final List<Long> amAsks = new ArrayList<>();
    /** The cluster's node labels, name -> exclusive; empty: none. */
    public final Map<String, Boolean> labels = new TreeMap<>();
    /**
     * The core's preemption state as the shim last had it (compact JSON of an object, opaque
     * here: the core reads it), or null: the rebuilt core goes on from it ({@link PreemptionStore}).
     */
    public String preemptionState;

    public Snapshot(long epoch, List<String> resources) {
      super(Types.SNAPSHOT, epoch);
      this.resources = resources;
    }

    /** Nodes, apps, containers and asks: what the core's work on it grows with. */
    public long items() {
      return nodes.size() + apps.size() + containers.size() + asks.size();
    }
  }

  /**
   * Everything that changed since the last call, in the order the core applies it (deltas,
   * started, finished, asks, counts, submissions), and every node with room for some ask to
   * decide for.
   */
  public static final class Schedule extends Request {
    public final long seq;
    public final List<Delta> deltas = new ArrayList<>();
    public final List<ContainerRow> started = new ArrayList<>();
    /** Flat container, state pairs. */
    public final List<String> finished = new ArrayList<>();
    public final List<AskRow> asks = new ArrayList<>();
    /** Flat id, count pairs. */
    public final List<Long> counts = new ArrayList<>();
    /** The ids of the asks above that are their attempt's AM ask. */
    public final List<Long> amAsks = new ArrayList<>();
    public final List<AppInfo> submissions = new ArrayList<>();
    public final List<NodeRow> nodes = new ArrayList<>();
    /** NodeManager heartbeats since the last call (for the service's metrics). */
    public long heartbeats;
    /** The last call's round trip as the shim measured it, or null (first call, or after a failure). */
    public Double rttMs;

    public Schedule(long epoch, long seq) {
      super(Types.SCHEDULE, epoch);
      this.seq = seq;
    }

    /** Whether it carries any change: without one, a call could only repeat the last decision. */
    public boolean hasChanges() {
      return !(deltas.isEmpty() && started.isEmpty() && finished.isEmpty() && asks.isEmpty()
          && counts.isEmpty() && submissions.isEmpty());
    }
  }

  /** `yarn rmadmin -refreshQueues`: the core re-reads its queue file. */
  public static final class Reload extends Request {
    /** The file YARN's configuration names, or null. */
    public final String path;

    public Reload(long epoch, String path) {
      super(Types.RELOAD, epoch);
      this.path = path;
    }
  }

  /** `yarn application -movetoqueue`: the app to `queue`, checked for its user in `groups`. */
  public static final class Move extends Request {
    public final String app;
    public final String queue;
    public final String user;
    public final List<String> groups;

    public Move(long epoch, String app, String queue, String user, List<String> groups) {
      super(Types.MOVE, epoch);
      this.app = app;
      this.queue = queue;
      this.user = user;
      this.groups = groups;
    }
  }

  /**
   * A node the core began holding for one request of an app (its reservation, or a node it holds
   * while preemption drains it), which YARN shows as a reserved container ({@link CoreHolds}).
   */
  public static final class Hold {
    public final String node;
    public final String app;
    public final int priority;
    public final long allocationId;
    /** The size of one container of the request, in the snapshot's resource order. */
    public final long[] amounts;

    public Hold(String node, String app, int priority, long allocationId, long[] amounts) {
      this.node = node;
      this.app = app;
      this.priority = priority;
      this.allocationId = allocationId;
      this.amounts = amounts;
    }
  }

  /** A schedule reply's "call_in_ms" when it has none: no call is due without a change. */
  public static final long NO_CALL_DUE = -1;

  public static final class ReloadReply {
    public final boolean accepted;
    /** Every error of a refused file, each naming its field and line. */
    public final List<String> errors;
    /** Queues added, removed, changed and draining, as the core sent them (for the log). */
    public final String changes;
    public final List<QueueSettings> queues;

    ReloadReply(boolean accepted, List<String> errors, String changes, List<QueueSettings> queues) {
      this.accepted = accepted;
      this.errors = errors;
      this.changes = changes;
      this.queues = queues;
    }
  }

  // ================================================================== from YARN's records

  /** {name: amount} in name order: capacities in snapshots and node deltas. */
  public static Map<String, Long> amounts(Resource r) {
    Map<String, Long> out = new TreeMap<>();
    for (ResourceInformation ri : r.getResources()) {
      out.put(ri.getName(), ri.getValue());
    }
    return out;
  }

  /** Amounts in YARN's resource type order, the order of the snapshot's "resources". */
  public static long[] vector(Resource r) {
    ResourceInformation[] infos = r.getResources();
    long[] out = new long[infos.length];
    for (int i = 0; i < infos.length; i++) {
      out[i] = infos[i].getValue();
    }
    return out;
  }

  /**
   * The inverse of {@link #vector}: amounts in YARN's resource type order (a headroom, an ask's
   * shape) as a Resource; null if they are not one per type.
   */
  static Resource resource(long[] amounts) {
    ResourceInformation[] types = ResourceUtils.getResourceTypesArray();
    if (amounts.length != types.length) {
      LOG.warn("yarn-drf: headroom of {} amounts for {} resource types ignored", amounts.length,
          types.length);
      return null;
    }
    Resource r = Resource.newInstance(0, 0);
    for (int i = 0; i < amounts.length; i++) {
      r.setResourceValue(i, amounts[i]);
    }
    return r;
  }

  /**
   * A container YARN runs: one the core assigned (`assignmentId`) or not (null: recovered), with
   * the cards of its allocation tag. The tag is in the container's record: set by the shim when it
   * allocated the container, and after a work-preserving RM restart from the NodeManager's report
   * (NMContainerStatus carries the token's allocation tags; the RM's recovery puts them back).
   */
  public static ContainerRow containerRow(RMContainer c, String assignmentId) {
    return new ContainerRow(c.getContainerId().toString(),
        c.getApplicationAttemptId().getApplicationId().toString(), c.getAllocatedNode().toString(),
        c.getAllocatedSchedulerKey().getPriority().getPriority(),
        c.getAllocatedSchedulerKey().getAllocationRequestId(), assignmentId,
        vector(c.getAllocatedResource()), tagCards(c));
  }

  /** The cards a container's allocation tag names, or null (no tag, or one that names no cards). */
  private static List<Integer> tagCards(RMContainer c) {
    Set<String> tags = c.getContainer() == null ? null : c.getContainer().getAllocationTags();
    if (tags == null || tags.isEmpty()) {
      return null;  // every container off card nodes: nothing more on its row
    }
    try {
      return GpuCards.fromTags(tags);
    } catch (IllegalArgumentException e) {
      LOG.warn("yarn-drf: container {}: {}; sent without cards (the core places it by its rule)",
          c.getContainerId(), e.getMessage());
      return null;
    }
  }

  // ================================================================== requests out

  public static String encode(Request request) {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = JSON.getFactory().createGenerator(out)) {
      g.writeStartObject();
      g.writeNumberField(Requests.Envelope.V, VERSION);
      g.writeStringField(Requests.Envelope.TYPE, request.type);
      g.writeNumberField(Requests.Envelope.EPOCH, request.epoch);
      if (request instanceof Schedule) {
        writeSchedule(g, (Schedule) request);
      } else if (request instanceof Snapshot) {
        writeSnapshot(g, (Snapshot) request);
      } else if (request instanceof Move) {
        Move m = (Move) request;
        g.writeStringField(Requests.Move.APP, m.app);
        g.writeStringField(Requests.Move.QUEUE, m.queue);
        g.writeStringField(Requests.Move.USER, m.user);
        writeTexts(g, Requests.Move.GROUPS, m.groups);
      } else if (((Reload) request).path != null) {
        g.writeStringField(Requests.Reload.PATH, ((Reload) request).path);
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode a bridge message", e);
    }
    return out.toString();
  }

  private static void writeSchedule(JsonGenerator g, Schedule s) throws IOException {
    g.writeNumberField(Requests.Schedule.SEQ, s.seq);
    g.writeArrayFieldStart(Requests.Schedule.DELTAS);
    for (Delta d : s.deltas) {
      writeDelta(g, d);
    }
    g.writeEndArray();
    writeContainers(g, Requests.Schedule.STARTED, s.started);
    g.writeArrayFieldStart(Requests.Schedule.FINISHED);
    for (String x : s.finished) {
      g.writeString(x);
    }
    g.writeEndArray();
    writeAsks(g, s.asks, s.counts, s.amAsks);
    writeApps(g, Requests.Schedule.SUBMISSIONS, s.submissions);
    g.writeArrayFieldStart(Requests.Schedule.NODES);
    for (NodeRow n : s.nodes) {
      g.writeStartArray();
      Rows.NodeRow.writeFixed(g, n);
      writeLongs(g, n.free);
      g.writeEndArray();
    }
    g.writeEndArray();
    g.writeNumberField(Requests.Schedule.HEARTBEATS, s.heartbeats);
    if (s.rttMs != null) {
      g.writeNumberField(Requests.Schedule.RTT_MS, s.rttMs);
    }
  }

  private static void writeSnapshot(JsonGenerator g, Snapshot s) throws IOException {
    writeTexts(g, Requests.Snapshot.RESOURCES, s.resources);
    g.writeArrayFieldStart(Requests.Snapshot.NODES);
    for (NodeInfo n : s.nodes) {
      g.writeStartObject();
      writeNode(g, n);
      g.writeEndObject();
    }
    g.writeEndArray();
    writeApps(g, Requests.Snapshot.APPS, s.apps);
    writeContainers(g, Requests.Snapshot.CONTAINERS, s.containers);
    writeAsks(g, s.asks, s.counts, s.amAsks);
    if (!s.labels.isEmpty()) {
      writeLabels(g, s.labels);
    }
    if (s.preemptionState != null) {
      g.writeFieldName(Requests.Snapshot.PREEMPTION_STATE);
      g.writeRawValue(s.preemptionState);
    }
  }

  private static void writeDelta(JsonGenerator g, Delta d) throws IOException {
    g.writeStartObject();
    g.writeStringField(Ops.OP, d.op);
    switch (d.op) {
      case Ops.NODE_ADDED:
      case Ops.NODE_UPDATED:
      case Ops.NODE_REMOVED:
        writeNode(g, d.node);
        break;
      case Ops.APP_ADDED:
        writeApp(g, d.app);
        break;
      case Ops.ASSIGNMENT_REFUSED:
        g.writeStringField(Contract.Deltas.AssignmentRefused.ASSIGNMENT_ID, d.assignmentId);
        g.writeStringField(Contract.Deltas.AssignmentRefused.REASON, d.reason);
        break;
      case Ops.BLACKLIST:
        g.writeStringField(Contract.Deltas.Blacklist.APP, d.app.app);
        writeTexts(g, Contract.Deltas.Blacklist.PLACES, d.places);
        break;
      case Ops.APP_PRIORITY:
        g.writeStringField(Contract.Deltas.AppPriority.APP, d.app.app);
        g.writeNumberField(Contract.Deltas.AppPriority.PRIORITY, d.priority);
        break;
      case Ops.LABELS:
        writeLabels(g, d.labels);
        break;
      case Ops.NODE_LABEL:
        g.writeStringField(Contract.Deltas.NodeLabel.NODE, d.node.node);
        g.writeStringField(Contract.Deltas.NodeLabel.LABEL, d.node.label);
        break;
      default:  // app_removed, attempt_added
        g.writeStringField(Contract.Deltas.AppRemoved.APP, d.app.app);
    }
    g.writeEndObject();
  }

  /**
   * node, then capacity, rack and cards when it has them (node_removed has none, node_updated no
   * rack).
   */
  private static void writeNode(JsonGenerator g, NodeInfo n) throws IOException {
    g.writeStringField(Items.Node.NODE, n.node);
    if (n.capacity != null) {
      g.writeObjectFieldStart(Items.Node.CAPACITY);
      for (Map.Entry<String, Long> e : n.capacity.entrySet()) {
        g.writeNumberField(e.getKey(), e.getValue());
      }
      g.writeEndObject();
    }
    if (n.rack != null) {
      g.writeStringField(Items.Node.RACK, n.rack);
    }
    if (n.cards != null) {
      g.writeArrayFieldStart(Items.Node.CARDS);
      for (long mib : n.cards) {
        g.writeNumber(mib);
      }
      g.writeEndArray();
    }
    if (n.label != null && !n.label.isEmpty()) {
      g.writeStringField(Items.Node.LABEL, n.label);
    }
  }

  private static void writeLabels(JsonGenerator g, Map<String, Boolean> labels)
      throws IOException {
    g.writeObjectFieldStart(Requests.Snapshot.LABELS);
    for (Map.Entry<String, Boolean> e : labels.entrySet()) {
      g.writeBooleanField(e.getKey(), e.getValue());
    }
    g.writeEndObject();
  }

  private static void writeApps(JsonGenerator g, String field, List<AppInfo> apps)
      throws IOException {
    g.writeArrayFieldStart(field);
    for (AppInfo a : apps) {
      g.writeStartObject();
      writeApp(g, a);
      g.writeEndObject();
    }
    g.writeEndArray();
  }

  private static void writeApp(JsonGenerator g, AppInfo a) throws IOException {
    g.writeStringField(Items.App.APP, a.app);
    g.writeStringField(Items.App.USER, a.user);
    g.writeStringField(Items.App.QUEUE, a.queue);
    writeTexts(g, Items.App.GROUPS, a.groups);
    if (a.priority != 0) {
      g.writeNumberField(Items.App.PRIORITY, a.priority);
    }
    if (!a.blacklist.isEmpty()) {
      writeTexts(g, Items.App.BLACKLIST, a.blacklist);
    }
    if (a.label != null) {
      g.writeStringField(Items.Submission.LABEL, a.label);
    }
  }

  private static void writeContainers(JsonGenerator g, String field, List<ContainerRow> rows)
      throws IOException {
    g.writeArrayFieldStart(field);
    for (ContainerRow r : rows) {
      g.writeStartArray();
      Rows.ContainerRow.writeFixed(g, r);
      writeLongs(g, r.amounts);
      if (r.cards != null) {  // optional trailing element: only rows of containers on cards
        g.writeStartArray();
        for (int card : r.cards) {
          g.writeNumber(card);
        }
        g.writeEndArray();
      }
      g.writeEndArray();
    }
    g.writeEndArray();
  }

  private static void writeAsks(JsonGenerator g, List<AskRow> asks, List<Long> counts,
      List<Long> amAsks) throws IOException {
    g.writeArrayFieldStart(Requests.Schedule.ASKS);
    for (AskRow a : asks) {
      g.writeStartArray();
      Rows.AskRow.writeFixed(g, a);
      writeLongs(g, a.amounts);
      if (a.label != null) {  // optional trailing element
        g.writeString(a.label);
      }
      g.writeEndArray();
    }
    g.writeEndArray();
    writeNumbers(g, Requests.Schedule.COUNTS, counts);
    writeNumbers(g, Requests.Schedule.AM_ASKS, amAsks);
  }

  private static void writeNumbers(JsonGenerator g, String field, List<Long> values)
      throws IOException {
    g.writeArrayFieldStart(field);
    for (long x : values) {
      g.writeNumber(x);
    }
    g.writeEndArray();
  }

  static void writeLongs(JsonGenerator g, long[] values) throws IOException {
    for (long v : values) {
      g.writeNumber(v);
    }
  }

  private static void writeTexts(JsonGenerator g, String field, List<String> texts)
      throws IOException {
    g.writeArrayFieldStart(field);
    for (String t : texts) {
      g.writeString(t);
    }
    g.writeEndArray();
  }

  // ================================================================== replies in

  /** A snapshot's reply: the core's queue tree. */
  public static List<QueueSettings> snapshotReply(String text) throws MalformedReplyException {
    return queues(envelope(text).get(Replies.Snapshot.QUEUES));
  }

  public static ScheduleReply scheduleReply(String text) throws MalformedReplyException {
    return ScheduleReply.read(envelope(text));
  }

  // The checked readers of the reply fields read apart (the spec's `java_read`), for the
  // generated ReplyValues: each takes the object and the field's name.

  /** How one object of a list is read (a generated class's read). */
  interface ItemReader<T> {
    T read(JsonNode item) throws MalformedReplyException;
  }

  /** A list of objects, each read by `reader`; an optional one absent is empty. */
  static <T> List<T> items(JsonNode n, String field, boolean required, ItemReader<T> reader)
      throws MalformedReplyException {
    List<T> out = new ArrayList<>();
    for (JsonNode item : required ? array(n, field) : optionalArray(n, field)) {
      out.add(reader.read(item));
    }
    return out;
  }

  /** A placement's or a move's queue: named when accepted, else null (whatever it says). */
  static String queueIfAccepted(JsonNode n, String field) throws MalformedReplyException {
    return bool(n, ReplyItems.Placement.ACCEPTED) ? text(n, field) : null;
  }

  /** A placement's or a move's reason: "" when absent. */
  static String textOrEmpty(JsonNode n, String field) {
    return n.path(field).asText("");
  }

  /** The whole queue list, or null when absent. */
  static List<QueueSettings> queueList(JsonNode n, String field) throws MalformedReplyException {
    JsonNode tree = n.get(field);
    return tree == null ? null : queues(tree);
  }

  /** Queue entries to add or replace (absent: none), each checked as in a whole list. */
  static List<QueueSettings> queuesBuilt(JsonNode n, String field) throws MalformedReplyException {
    List<QueueSettings> built = new ArrayList<>();
    for (JsonNode spec : optionalArray(n, field)) {
      built.add(queue(spec));
    }
    return built;
  }

  /** [app, amounts...] rows (absent: none) by app. */
  static Map<String, long[]> headroom(JsonNode n, String field) throws MalformedReplyException {
    Map<String, long[]> headroom = new LinkedHashMap<>();
    for (JsonNode row : optionalArray(n, field)) {
      if (!row.isArray() || row.size() < 1 || !row.get(0).isTextual()) {
        throw new MalformedReplyException("headroom row is not [app, amounts...]: "
            + abbreviate(row.toString()));
      }
      long[] amounts = new long[row.size() - 1];
      for (int i = 0; i < amounts.length; i++) {
        JsonNode v = row.get(i + 1);
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 0) {
          throw new MalformedReplyException("headroom amount " + v + " is not an integer from 0 to "
              + Long.MAX_VALUE + " in " + abbreviate(row.toString()));
        }
        amounts[i] = v.asLong();
      }
      headroom.put(row.get(0).asText(), amounts);
    }
    return headroom;
  }

  /** [app, text] pairs (absent: none) by app. */
  static Map<String, String> amDiagnostics(JsonNode n, String field)
      throws MalformedReplyException {
    Map<String, String> amDiagnostics = new LinkedHashMap<>();
    for (JsonNode pair : optionalArray(n, field)) {
      if (!pair.isArray() || pair.size() != 2 || !pair.get(0).isTextual()
          || !pair.get(1).isTextual()) {
        throw new MalformedReplyException("am_diagnostics entry is not [app, text]: "
            + abbreviate(pair.toString()));
      }
      amDiagnostics.put(pair.get(0).asText(), pair.get(1).asText());
    }
    return amDiagnostics;
  }

  /** A reply's "holds" rows: [node, app, priority, allocation id, amounts...]. */
  static List<Hold> holds(JsonNode n, String field) throws MalformedReplyException {
    List<Hold> out = new ArrayList<>();
    for (JsonNode row : optionalArray(n, field)) {
      if (!row.isArray() || row.size() < Rows.HoldRow.TAIL || !row.get(Rows.HoldRow.NODE).isTextual()
          || !row.get(Rows.HoldRow.APP).isTextual()
          || !row.get(Rows.HoldRow.PRIORITY).canConvertToInt()
          || !row.get(Rows.HoldRow.ALLOCATION_ID).canConvertToLong()) {
        throw new MalformedReplyException("holds row is not [node, app, priority, allocation id, "
            + "amounts...]: " + abbreviate(row.toString()));
      }
      long[] amounts = new long[row.size() - Rows.HoldRow.TAIL];
      for (int i = 0; i < amounts.length; i++) {
        JsonNode v = row.get(Rows.HoldRow.TAIL + i);
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 0) {
          throw new MalformedReplyException("holds amount " + v + " is not an integer from 0 to "
              + Long.MAX_VALUE + " in " + abbreviate(row.toString()));
        }
        amounts[i] = v.asLong();
      }
      out.add(new Hold(row.get(Rows.HoldRow.NODE).asText(), row.get(Rows.HoldRow.APP).asText(),
          row.get(Rows.HoldRow.PRIORITY).asInt(), row.get(Rows.HoldRow.ALLOCATION_ID).asLong(),
          amounts));
    }
    return out;
  }

  /** A reply's "holds_ended": node names. */
  static List<String> holdsEnded(JsonNode n, String field) throws MalformedReplyException {
    List<String> out = new ArrayList<>();
    for (JsonNode node : optionalArray(n, field)) {
      if (!node.isTextual()) {
        throw new MalformedReplyException("holds_ended entry is not a node name: "
            + abbreviate(node.toString()));
      }
      out.add(node.asText());
    }
    return out;
  }

  /**
   * A reply's "queues_created": parent path -> the new leaves' names, each a non-empty name
   * without a dot under a full path from root; empty when absent.
   */
  static Map<String, List<String>> queuesCreated(JsonNode n, String field)
      throws MalformedReplyException {
    JsonNode created = n.get(field);
    if (created == null) {
      return Collections.emptyMap();
    }
    if (!created.isObject()) {
      throw new MalformedReplyException("reply field \"queues_created\" is not an object");
    }
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = created.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String parent = e.getKey();
      if (!(parent.equals("root") || parent.startsWith("root."))) {
        throw new MalformedReplyException("queues_created: " + shown(parent)
            + " is not a full path from root");
      }
      if (!e.getValue().isArray()) {
        throw new MalformedReplyException("queues_created: " + parent + ": not a list of names");
      }
      List<String> names = new ArrayList<>(e.getValue().size());
      for (JsonNode name : e.getValue()) {
        if (!name.isTextual() || name.asText().isEmpty() || name.asText().contains(".")) {
          throw new MalformedReplyException("queues_created: " + parent + ": " + shown(name)
              + " is not a queue name");
        }
        names.add(name.asText());
      }
      out.put(parent, names);
    }
    return out;
  }

  /** Milliseconds from 0, or {@link #NO_CALL_DUE} when absent. */
  static long callInMs(JsonNode n, String field) throws MalformedReplyException {
    return n.has(field) ? integer(n, field, 0, Long.MAX_VALUE) : NO_CALL_DUE;
  }

  /** A count from 0, or 0 when absent. */
  static long countOrZero(JsonNode n, String field) throws MalformedReplyException {
    return n.has(field) ? integer(n, field, 0, Long.MAX_VALUE) : 0;
  }

  /** The preemption state: absent (null), or an object, kept as compact JSON. */
  static String preemptionState(JsonNode n, String field) throws MalformedReplyException {
    JsonNode state = n.get(field);
    if (state == null) {
      return null;
    }
    if (!state.isObject()) {
      throw new MalformedReplyException("reply field \"" + field + "\" is not an object");
    }
    return compactJson(state);
  }

  /** A JSON value as compact text (Jackson keeps an object's field order). */
  static String compactJson(JsonNode value) {
    try {
      return JSON.writeValueAsString(value);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write a JSON value back", e);
    }
  }

  /** An optional array field of a reply: absent is empty. */
  private static JsonNode optionalArray(JsonNode node, String field) throws MalformedReplyException {
    return node.has(field) ? array(node, field) : JSON.createArrayNode();
  }

  public static ReloadReply reloadReply(String text) throws MalformedReplyException {
    JsonNode reply = envelope(text);
    if (!bool(reply, Replies.Reload.ACCEPTED)) {
      List<String> errors = new ArrayList<>();
      for (JsonNode e : array(reply, Replies.Reload.ERRORS)) {
        errors.add(e.asText());
      }
      return new ReloadReply(false, errors, null, null);
    }
    return new ReloadReply(true, Collections.<String>emptyList(),
        reply.path(Replies.Reload.CHANGES).toString(), queues(reply.get(Replies.Reload.QUEUES)));
  }

  public static MoveReply moveReply(String text) throws MalformedReplyException {
    return MoveReply.read(envelope(text));
  }

  /**
   * Parses and checks a reply's envelope.
   * @throws MalformedReplyException naming what is wrong, if it is not a JSON object of this version
   *     with "ok": true (an "ok": false reply carries the core's "error").
   */
  static JsonNode envelope(String text) throws MalformedReplyException {
    JsonNode node;
    try {
      node = JSON.readTree(text);
    } catch (IOException e) {
      throw new MalformedReplyException("reply is not JSON: " + abbreviate(text));
    }
    if (node == null || !node.isObject()) {
      throw new MalformedReplyException("reply is not a JSON object: " + abbreviate(text));
    }
    JsonNode v = node.get(Replies.Envelope.V);
    if (v == null || !v.isInt() || v.asInt() != VERSION) {
      throw new MalformedReplyException("reply has version " + v + ", expected " + VERSION);
    }
    JsonNode ok = node.get(Replies.Envelope.OK);
    if (ok == null || !ok.isBoolean()) {
      throw new MalformedReplyException("reply has no boolean \"ok\"");
    }
    if (!ok.asBoolean()) {
      throw new MalformedReplyException("core error: "
          + node.path(Replies.Envelope.ERROR).asText("(none given)"));
    }
    return node;
  }

  /** An object of amounts (resource name -> an integer from 0), in the order it lists them. */
  static Map<String, Long> amounts(JsonNode a, String field) throws MalformedReplyException {
    JsonNode r = a.get(field);
    if (r == null || !r.isObject()) {
      throw new MalformedReplyException("entry without " + field + " (an object of amounts): "
          + abbreviate(a.toString()));
    }
    Map<String, Long> out = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = r.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> e = it.next();
      out.put(e.getKey(), integer(r, e.getKey(), 0, Long.MAX_VALUE));
    }
    return out;
  }

  /** Card indices: absent (none), or distinct integers 0 to MAX_CARDS-1. */
  static List<Integer> cards(JsonNode a, String field) throws MalformedReplyException {
    JsonNode c = a.get(field);
    if (c == null) {
      return Collections.emptyList();
    }
    List<Integer> out = new ArrayList<>();
    boolean valid = c.isArray() && c.size() <= GpuCards.MAX_CARDS;
    for (int i = 0; valid && i < c.size(); i++) {
      JsonNode x = c.get(i);
      valid = x.isInt() && x.asInt() >= 0 && x.asInt() < GpuCards.MAX_CARDS && !out.contains(x.asInt());
      out.add(x.asInt());
    }
    if (!valid) {
      throw new MalformedReplyException("field \"" + field + "\" must be distinct card indices from 0 to "
          + (GpuCards.MAX_CARDS - 1) + " in " + abbreviate(a.toString()));
    }
    return out;
  }

  private static JsonNode array(JsonNode node, String field) throws MalformedReplyException {
    JsonNode a = node.get(field);
    if (a == null || !a.isArray()) {
      throw new MalformedReplyException("reply field \"" + field + "\" is not an array");
    }
    return a;
  }

  static String text(JsonNode node, String field) throws MalformedReplyException {
    JsonNode t = node.get(field);
    if (t == null || !t.isTextual()) {
      throw new MalformedReplyException("field \"" + field + "\" is not a string in "
          + abbreviate(node.toString()));
    }
    return t.asText();
  }

  static boolean bool(JsonNode node, String field) throws MalformedReplyException {
    JsonNode b = node.get(field);
    if (b == null || !b.isBoolean()) {
      throw new MalformedReplyException("field \"" + field + "\" is not true or false in "
          + abbreviate(node.toString()));
    }
    return b.asBoolean();
  }

  /** An integer from min to max, checked: Jackson's asLong() would wrap 2^64+5 to 5. */
  static long integer(JsonNode node, String field, long min, long max)
      throws MalformedReplyException {
    JsonNode t = node.get(field);
    if (t == null || !t.isIntegralNumber() || !t.canConvertToLong() || t.asLong() < min
        || t.asLong() > max) {
      throw new MalformedReplyException("field \"" + field + "\" is not an integer from " + min
          + " to " + max + " in " + abbreviate(node.toString()));
    }
    return t.asLong();
  }

  static String abbreviate(String s) {
    if (s == null) {
      return "null";
    }
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }

  // ================================================================== the queue list

  /**
   * The core's "queues" list (docs/bridge.md), every entry read and checked before any queue changes;
   * the exception names the queue and the field. Numbers are checked, never wrapped or rounded
   * into range: a limit read as Jackson's asLong() reads 18446744073709551621 (as 5) would let a
   * queue past its max. Parents come before their children.
   */
  public static List<QueueSettings> queues(JsonNode queues) throws MalformedReplyException {
    if (queues == null || !queues.isArray()) {
      throw new MalformedReplyException("\"queues\" is not an array");
    }
    List<QueueSettings> out = new ArrayList<>(queues.size());
    java.util.Set<String> listed = new java.util.HashSet<>();
    for (JsonNode spec : queues) {
      QueueSettings s = queue(spec);
      String parent = s.path.substring(0, Math.max(0, s.path.lastIndexOf('.')));
      if (!s.path.equals("root") && !listed.contains(parent)) {
        throw new MalformedReplyException("queue " + s.path + " listed before its parent");
      }
      listed.add(s.path);
      out.add(s);
    }
    return out;
  }

  private static QueueSettings queue(JsonNode spec) throws MalformedReplyException {
    if (spec == null || !spec.isObject()) {
      throw new MalformedReplyException("queue entry " + shown(spec) + " is not an object");
    }
    JsonNode name = spec.get(QueueEntry.NAME);
    String path = name != null && name.isTextual() ? name.asText() : null;
    if (path == null || !(path.equals("root") || path.startsWith("root."))) {
      throw new MalformedReplyException("queue name " + shown(name) + " is not a full path from root");
    }
    QueueReader r = new QueueReader(path);
    Map<String, Long> amounts = new HashMap<>();
    Map<String, Double> fractions = new HashMap<>();
    r.max(spec.get(QueueEntry.MAX), amounts, fractions);
    JsonNode mf = spec.get(QueueEntry.MAX_FRACTION);
    return new QueueSettings(path, r.bool(spec.get(QueueEntry.LEAF), QueueEntry.LEAF, true),
        r.weight(spec.get(QueueEntry.WEIGHT)), amounts, fractions,
        mf == null || mf.isNull() ? Double.NaN : r.fraction(mf, QueueEntry.MAX_FRACTION),
        r.amounts(spec.get(QueueEntry.MAX_CONTAINER), QueueEntry.MAX_CONTAINER),
        r.text(spec.get(QueueEntry.SUBMIT_ACL), QueueEntry.SUBMIT_ACL),
        r.text(spec.get(QueueEntry.ADMIN_ACL), QueueEntry.ADMIN_ACL),
        r.labels(spec.get(QueueEntry.LABELS)),
        r.text(spec.get(QueueEntry.DEFAULT_LABEL), QueueEntry.DEFAULT_LABEL));
  }

  /** Reads the fields of one queue entry, naming its queue in every error. */
  private static final class QueueReader {
    private final String path;

    QueueReader(String path) {
      this.path = path;
    }

    boolean bool(JsonNode n, String field, boolean absent) throws MalformedReplyException {
      if (n == null || n.isNull()) {
        return absent;
      }
      if (!n.isBoolean()) {
        throw bad(field, n, "is not true or false");
      }
      return n.booleanValue();
    }

    /** accessible-node-labels: absent means every label ("*"), as CapacityScheduler's root has. */
    java.util.Set<String> labels(JsonNode n) throws MalformedReplyException {
      if (n == null || n.isNull()) {
        return Collections.singleton(QueueSettings.ALL_LABELS);
      }
      if (!n.isArray()) {
        throw bad("labels", n, "is not a list of node labels");
      }
      java.util.Set<String> out = new java.util.TreeSet<>();
      for (JsonNode x : n) {
        out.add(text(x, "labels"));
      }
      return out;
    }

    String text(JsonNode n, String field) throws MalformedReplyException {
      if (n == null || n.isNull()) {
        return "";
      }
      if (!n.isTextual()) {
        throw bad(field, n, "is not a string");
      }
      return n.textValue();
    }

    double weight(JsonNode w) throws MalformedReplyException {
      if (w == null || w.isNull()) {
        return 1.0;
      }
      if (!w.isObject()) {
        return positive(w, "weight");
      }
      double largest = 0;
      for (Iterator<Map.Entry<String, JsonNode>> it = w.fields(); it.hasNext();) {
        Map.Entry<String, JsonNode> e = it.next();
        largest = Math.max(largest, positive(e.getValue(), "weight." + e.getKey()));
      }
      return largest > 0 ? largest : 1.0;
    }

    void max(JsonNode max, Map<String, Long> amounts, Map<String, Double> fractions)
        throws MalformedReplyException {
      if (max == null || max.isNull()) {
        return;
      }
      if (!max.isObject()) {
        throw bad("max", max, "is not an object");
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = max.fields(); it.hasNext();) {
        Map.Entry<String, JsonNode> e = it.next();
        String field = "max." + e.getKey();
        JsonNode v = e.getValue();
        if (v.isIntegralNumber()) {
          amounts.put(e.getKey(), amount(v, field));
        } else {
          fractions.put(e.getKey(), fraction(v, field));
        }
      }
    }

    /** An optional object of whole amounts by resource type (absent: none). */
    Map<String, Long> amounts(JsonNode node, String field) throws MalformedReplyException {
      Map<String, Long> out = new HashMap<>();
      if (node == null || node.isNull()) {
        return out;
      }
      if (!node.isObject()) {
        throw bad(field, node, "is not an object");
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
        Map.Entry<String, JsonNode> e = it.next();
        out.put(e.getKey(), amount(e.getValue(), field + "." + e.getKey()));
      }
      return out;
    }

    long amount(JsonNode v, String field) throws MalformedReplyException {
      if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < 0) {
        throw bad(field, v, "is not a whole number from 0 to " + Long.MAX_VALUE);
      }
      return v.longValue();
    }

    double positive(JsonNode n, String field) throws MalformedReplyException {
      if (!n.isNumber() || !(n.doubleValue() > 0) || Double.isInfinite(n.doubleValue())) {
        throw bad(field, n, "is not a finite number above 0");
      }
      return n.doubleValue();
    }

    double fraction(JsonNode n, String field) throws MalformedReplyException {
      if (!n.isNumber() || !(n.doubleValue() >= 0 && n.doubleValue() <= 1)) {
        throw bad(field, n, "is not a fraction of the cluster from 0 to 1");
      }
      return n.doubleValue();
    }

    MalformedReplyException bad(String field, JsonNode value, String problem) {
      return new MalformedReplyException("queue " + shown(path) + ": " + field + " " + shown(value)
          + " " + problem);
    }
  }

  private static String shown(Object value) {
    String s = String.valueOf(value);
    return s.length() <= 60 ? s : s.substring(0, 59) + "…";
  }
}

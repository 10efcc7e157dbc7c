package org.yarndrf.shim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.yarndrf.shim.bridge.CoreChannel;
import org.yarndrf.shim.bridge.CoreUnavailableException;

/**
 * An in-process stand-in for the Python core, reading requests and writing replies through
 * {@link ServiceCodec} (the core's side of the format). It keeps the outstanding ANY asks it is
 * told about (by ask id) and, at each schedule call, assigns all of them (plus `extra` more),
 * spread over the call's nodes with room, a different node first each call, without checking
 * anything, so the shim's own re-checks are what the tests observe. A refused assignment gives
 * its ask back, as in the core. Submissions are accepted into root.a, except mallory's. With
 * `amWaits` set it assigns no AM ask (those named in "am_asks") and says so once per app in the
 * reply's "am_diagnostics", then "" once it is cleared; `headroom` goes with the next reply. It
 * accepts a move to root.b and refuses any other, saying so. A preemption state set in
 * `stateNext` goes with the next schedule reply; the marks of one a snapshot gives back are
 * taken back as the core does (scheduler.preemption.Preemptor.restore, without its checks):
 * once its container runs, told again in "preempt" with the grace left, and at its deadline
 * (milliseconds since 1970) killed once.
 */
final class FakeCore implements CoreChannel {
  enum Mode { OK, MALFORMED, DOWN, WRONG_VERSION }

  volatile Mode mode = Mode.OK;
  volatile int extra;
  /** Each call takes this long (heartbeats pile up meanwhile). */
  volatile long delayMs;
  /** Sent once with the next schedule reply, as the core does after a reload. */
  volatile ArrayNode pushQueues;
  /** Sent once with the next schedule reply: the preemption plan's "preempt" and "kill". */
  volatile List<ReplyValues.Preemption> preemptNext = Collections.emptyList();
  volatile List<ReplyValues.Preemption> killNext = Collections.emptyList();
  /**
   * The next this many schedule calls are applied but their reply never comes (a timeout). As the
   * core does, the same request again gets the reply it gave (counted in {@link #repeats}), not
   * applied twice.
   */
  volatile int scheduleThenTimeOut;
  volatile int repeats;
  private String lastSchedule;
  private String lastScheduleReply;
  /** Set: the next reload is applied (this becomes the queue tree) but its reply never comes. */
  volatile ArrayNode reloadThenTimeOut;
  /** The GPU cards every assignment names (as the core does on a node with cards). */
  volatile List<Integer> cards = Collections.emptyList();
  /** Set: AM asks are held back with this reason. */
  volatile String amWaits;
  /** Sent once with the next schedule reply. */
  volatile Map<String, long[]> headroom;
  /** Sent with every schedule reply: when the core wants its next call. */
  volatile long callInMs = Messages.NO_CALL_DUE;
  /** Sent once with the next schedule reply: the core's preemption state (compact JSON). */
  volatile String stateNext;
  /** Sent once with the next schedule reply: holds begun and ended. */
  volatile List<Messages.Hold> holdsNext = Collections.emptyList();
  volatile List<String> holdsEndedNext = Collections.emptyList();
  /** The wall clock restored marks are due by (ms since 1970); -1: the real one. */
  volatile long nowMs = -1;
  /** Marks a snapshot gave back, by container: each its saved mark; told and running ones. */
  private final Map<String, JsonNode> restored = new LinkedHashMap<>();
  private final Set<String> retold = new HashSet<>();
  private final Set<String> running = new HashSet<>();
  /** When (System.nanoTime) each schedule call came. */
  final List<Long> scheduleNanos = new ArrayList<>();
  private final Set<Long> amAsks = new HashSet<>();
  /** What each app with a held AM ask was last told. */
  private final Map<String, String> amTold = new LinkedHashMap<>();
  private ArrayNode queueTree = queues();
  final List<RequestValues.Request> requests = new ArrayList<>();
  final List<RequestValues.Delta> deltas = new ArrayList<>();
  final List<RequestValues.ContainerRow> started = new ArrayList<>();
  /** Containers finished, as "container=state". */
  final List<String> finished = new ArrayList<>();
  private final Map<Long, Ask> asks = new LinkedHashMap<>();
  /** assignment id -> the ask it was made for, so a refusal gives the ask back as the core does. */
  private final Map<String, Ask> assigned = new LinkedHashMap<>();
  private List<String> resourceTypes;
  private int nextId;
  private int firstNode;

  private static final class Ask {
    final RequestValues.AskRow row;
    int count;

    Ask(RequestValues.AskRow row) {
      this.row = row;
      this.count = row.count;
    }
  }

  @Override
  public String call(String message) throws CoreUnavailableException {
    if (mode == Mode.DOWN) {
      throw new CoreUnavailableException("fake core is down", null, false);
    }
    RequestValues.Request req = received(message);
    if (delayMs > 0) {
      try {
        Thread.sleep(delayMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (!(req instanceof RequestValues.Schedule)) {
      return answer(req);
    }
    return scheduleOnce(message, req);
  }

  private synchronized String scheduleOnce(String message, RequestValues.Request req)
      throws CoreUnavailableException {
    if (!message.equals(lastSchedule)) {
      lastScheduleReply = answer(req);
      lastSchedule = message;
    } else {
      repeats++;
    }
    if (scheduleThenTimeOut > 0) {
      scheduleThenTimeOut--;
      throw new CoreUnavailableException("Read timed out", null, true);
    }
    return lastScheduleReply;
  }

  private synchronized RequestValues.Request received(String message) {
    RequestValues.Request req = ServiceCodec.parseRequest(message);
    requests.add(req);
    return req;
  }

  private synchronized String answer(RequestValues.Request req) throws CoreUnavailableException {
    if (req instanceof RequestValues.Reload && reloadThenTimeOut != null) {
      queueTree = reloadThenTimeOut;
      reloadThenTimeOut = null;
      throw new CoreUnavailableException("Read timed out", null, true);
    }
    if (mode == Mode.MALFORMED) {
      return "{\"v\":" + Messages.VERSION + ",\"ok\":true,\"seq\":1,\"assignments\":[{\"app\":";
    }
    if (mode == Mode.WRONG_VERSION) {
      return "{\"v\":99,\"ok\":true}";
    }
    if (req instanceof RequestValues.Snapshot) {
      RequestValues.Snapshot s = (RequestValues.Snapshot) req;
      restore(s);
      asks.clear();
      resourceTypes = s.resources;
      asks(s.asks, s.counts, s.amAsks);
      return ServiceCodec.snapshotReplyText(queueTree);
    }
    if (req instanceof RequestValues.Move) {
      RequestValues.Move m = (RequestValues.Move) req;
      boolean ok = "b".equals(m.queue) || "root.b".equals(m.queue);
      return ServiceCodec.moveReplyText(ok, ok ? "root.b" : null,
          ok ? "" : "fake core: queue " + m.queue + " takes no moves");
    }
    if (req instanceof RequestValues.Reload) {
      ObjectNode changes = Messages.JSON.createObjectNode();
      changes.putArray("added");
      return ServiceCodec.reloadReplyText(true, changes, queueTree);
    }
    return schedule((RequestValues.Schedule) req);
  }

  private String schedule(RequestValues.Schedule s) {
    scheduleNanos.add(System.nanoTime());
    deltas.addAll(s.deltas);
    for (RequestValues.Delta d : s.deltas) {
      Ask ask = "assignment_refused".equals(d.op) ? assigned.remove(d.assignmentId) : null;
      if (ask != null) {
        ask.count++;
      }
    }
    started.addAll(s.started);
    for (RequestValues.ContainerRow row : s.started) {
      running.add(row.container);
    }
    for (int i = 0; i < s.finished.size(); i += 2) {
      finished.add(s.finished.get(i) + "=" + s.finished.get(i + 1));
      running.remove(s.finished.get(i));
    }
    asks(s.asks, s.counts, s.amAsks);
    List<ReplyValues.Placement> placements = new ArrayList<>();
    for (RequestValues.AppInfo sub : s.submissions) {
      boolean ok = !"mallory".equals(sub.user);
      placements.add(new ReplyValues.Placement(sub.app, ok, ok ? "root.a" : null,
          ok ? "" : "user 'mallory' may not submit to queue 'root.a'"));
    }
    List<ReplyValues.Assignment> out = new ArrayList<>();
    Map<String, String> amDiagnostics = amDiagnostics();
    if (!s.nodes.isEmpty()) {
      for (Ask a : asks.values()) {
        if (amWaits != null && amAsks.contains(a.row.id)) {
          continue;
        }
        for (int i = 0; i < a.count + extra; i++) {
          String node = s.nodes.get((firstNode + out.size()) % s.nodes.size()).node;
          ReplyValues.Assignment as = new ReplyValues.Assignment("fake-" + (++nextId), a.row.app, node,
              "root.a", a.row.priority, a.row.allocationId, resources(a.row), cards);
          out.add(as);
          if (i < a.count) {  // the extra ones were never asked for
            assigned.put(as.id, a);
          }
        }
        a.count = 0;
      }
      firstNode++;
    }
    ArrayNode tree = pushQueues;
    pushQueues = null;
    List<ReplyValues.Preemption> preempt = new ArrayList<>(preemptNext);
    List<ReplyValues.Preemption> kill = new ArrayList<>(killNext);
    preemptNext = Collections.emptyList();
    killNext = Collections.emptyList();
    long due = takeBack(preempt, kill);
    Map<String, long[]> room = headroom;
    headroom = null;
    String state = stateNext;
    stateNext = null;
    List<Messages.Hold> holds = holdsNext;
    List<String> holdsEnded = holdsEndedNext;
    holdsNext = Collections.emptyList();
    holdsEndedNext = Collections.emptyList();
    return ServiceCodec.scheduleReplyText(s.seq, out, placements, tree, null, null,
        room == null ? Collections.<String, long[]>emptyMap() : room, amDiagnostics,
        preempt, kill, due == Messages.NO_CALL_DUE ? callInMs
            : callInMs == Messages.NO_CALL_DUE ? due : Math.min(due, callInMs), state, holds,
        holdsEnded);
  }

  /** The marks of a snapshot's preemption state, waiting for their containers. */
  private void restore(RequestValues.Snapshot s) {
    running.clear();
    for (RequestValues.ContainerRow row : s.containers) {
      running.add(row.container);
    }
    restored.clear();
    retold.clear();
    if (s.preemptionState == null) {
      return;
    }
    try {
      for (JsonNode mark : Messages.JSON.readTree(s.preemptionState).path("marks")) {
        restored.put(mark.get("container").asText(), mark);
      }
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException(e);
    }
  }

  /**
   * Restored marks whose container runs: told again with the grace left, killed once at their
   * deadline. Returns the milliseconds until the next of those deadlines (or NO_CALL_DUE).
   */
  private long takeBack(List<ReplyValues.Preemption> preempt, List<ReplyValues.Preemption> kill) {
    long now = nowMs < 0 ? System.currentTimeMillis() : nowMs;
    long due = Messages.NO_CALL_DUE;
    for (java.util.Iterator<Map.Entry<String, JsonNode>> it = restored.entrySet().iterator();
        it.hasNext();) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!running.contains(e.getKey())) {
        continue;
      }
      long left = e.getValue().get("deadline_ms").asLong() - now;
      if (left <= 0) {
        kill.add(restoredEntry(e.getValue(), 0));
        it.remove();
        continue;
      }
      if (retold.add(e.getKey())) {
        preempt.add(restoredEntry(e.getValue(), left));
      }
      due = due == Messages.NO_CALL_DUE ? left : Math.min(due, left);
    }
    return due;
  }

  private static ReplyValues.Preemption restoredEntry(JsonNode mark, long killInMs) {
    String container = mark.get("container").asText();
    String app = org.apache.hadoop.yarn.api.records.ContainerId.fromString(container)
        .getApplicationAttemptId().getApplicationId().toString();
    return new ReplyValues.Preemption(container, app, mark.get("node").asText(), "root.a", "root.b",
        mark.get("reason").asText(), killInMs);
  }

  /** The AM diagnostics that changed: `amWaits` for each app with a held AM ask, then "". */
  private Map<String, String> amDiagnostics() {
    Map<String, String> out = new LinkedHashMap<>();
    for (Ask a : asks.values()) {
      if (amAsks.contains(a.row.id) && a.count > 0 && amWaits != null
          && !amWaits.equals(amTold.get(a.row.app))) {
        amTold.put(a.row.app, amWaits);
        out.put(a.row.app, amWaits);
      }
    }
    if (amWaits == null) {
      for (String app : amTold.keySet()) {
        out.put(app, "");
      }
      amTold.clear();
    }
    return out;
  }

  private Map<String, Long> resources(RequestValues.AskRow row) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (int i = 0; i < resourceTypes.size(); i++) {
      out.put(resourceTypes.get(i), row.amounts[i]);
    }
    return out;
  }

  /** Asks anywhere ("*") by id; count changes by id. */
  private void asks(List<RequestValues.AskRow> full, List<Long> counts, List<Long> am) {
    for (RequestValues.AskRow a : full) {
      if ("*".equals(a.location)) {
        asks.put(a.id, new Ask(a));
      }
    }
    amAsks.addAll(am);
    for (int i = 0; i + 1 < counts.size(); i += 2) {
      Ask known = asks.get(counts.get(i));
      if (known != null) {
        known.count = counts.get(i + 1).intValue();
      }
    }
  }

  /**
   * Starts a MockRM whose scheduler (`schedulerClass`) decides through `core`, with `conf` and
   * these: a backoff of 1 ms, allocation from the first heartbeat (no RM restart here), and, unless
   * `conf` says otherwise, offers between heartbeats (most tests drive no NodeManager heartbeats;
   * HeartbeatOffersTest covers the default).
   *
   * <p>Metrics in mini-cluster mode, as Hadoop's restart tests set it: every MockRM's constructor
   * clears QueueMetrics' cache while an RM still running keeps its sources registered (whether the
   * metrics system forgets their names depends on what earlier test classes left in this JVM), so a
   * second RM in one test could fail registering its queues' metrics.
   */
  static MockRM startRm(Class<? extends YarnDrfScheduler> schedulerClass, YarnConfiguration conf,
      FakeCore core) {
    DefaultMetricsSystem.setMiniClusterMode(true);
    conf.set(YarnConfiguration.RM_SCHEDULER, schedulerClass.getName());
    conf.setBoolean(ShimConf.OFFER_BETWEEN_HEARTBEATS,
        conf.getBoolean(ShimConf.OFFER_BETWEEN_HEARTBEATS, true));
    conf.setLong(ShimConf.BACKOFF_INITIAL_MS, 1);
    conf.setLong(ShimConf.BACKOFF_MAX_MS, 1);
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 0);
    MockRM rm = new MockRM(conf);
    ((YarnDrfScheduler) rm.getResourceScheduler()).setCoreChannel(core);
    rm.start();
    return rm;
  }

  static ArrayNode queues() {
    ArrayNode q = Messages.JSON.createArrayNode();
    q.addObject().put("name", "root").put("leaf", false).put("submit_acl", " ").put("admin_acl", " ");
    q.addObject().put("name", "root.a").put("leaf", true).put("weight", 2.0).put("submit_acl", "*");
    ObjectNode b = q.addObject().put("name", "root.b").put("leaf", true).put("submit_acl", "alice");
    b.putObject("max").put("memory-mb", 2048);
    return q;
  }

  /** The deltas of these ops, in the order the core got them. */
  synchronized List<RequestValues.Delta> deltasOf(String... ops) {
    List<String> wanted = java.util.Arrays.asList(ops);
    List<RequestValues.Delta> out = new ArrayList<>();
    for (RequestValues.Delta d : deltas) {
      if (wanted.contains(d.op)) {
        out.add(d);
      }
    }
    return out;
  }

  synchronized List<RequestValues.ContainerRow> startedRows() {
    return new ArrayList<>(started);
  }

  synchronized List<String> finishedPairs() {
    return new ArrayList<>(finished);
  }

  /** Waits until no schedule call has come for a while: the loop has done what there was to do. */
  void settle() throws InterruptedException {
    long seen = -1;
    while (seen != count("schedule")) {
      seen = count("schedule");
      Thread.sleep(300);
    }
  }

  synchronized List<Long> scheduleTimes() {
    return new ArrayList<>(scheduleNanos);
  }

  synchronized long count(String type) {
    return requests.stream().filter(r -> type.equals(r.type)).count();
  }

  /** The requests of one type, in the order they came. */
  @SuppressWarnings("unchecked")
  synchronized <T extends RequestValues.Request> List<T> requestsOf(Class<T> type) {
    List<T> out = new ArrayList<>();
    for (RequestValues.Request r : requests) {
      if (type.isInstance(r)) {
        out.add((T) r);
      }
    }
    return out;
  }

  @Override
  public void close() {
  }
}

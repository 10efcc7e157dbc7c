package org.yarndrf.shim;

import static org.yarndrf.shim.Messages.JSON;
import static org.yarndrf.shim.Messages.NO_CALL_DUE;
import static org.yarndrf.shim.Messages.VERSION;
import static org.yarndrf.shim.Messages.abbreviate;
import static org.yarndrf.shim.Messages.compactJson;
import static org.yarndrf.shim.Messages.writeLongs;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.yarndrf.shim.Messages.AppInfo;
import org.yarndrf.shim.Messages.AskRow;
import org.yarndrf.shim.ReplyValues.Assignment;
import org.yarndrf.shim.ReplyValues.Placement;
import org.yarndrf.shim.Messages.ContainerRow;
import org.yarndrf.shim.Messages.Delta;
import org.yarndrf.shim.Messages.Move;
import org.yarndrf.shim.Messages.NodeInfo;
import org.yarndrf.shim.Messages.NodeRow;
import org.yarndrf.shim.ReplyValues.Preemption;
import org.yarndrf.shim.Messages.Reload;
import org.yarndrf.shim.Messages.Request;
import org.yarndrf.shim.Messages.Schedule;
import org.yarndrf.shim.Messages.Snapshot;

/**
 * The core's side of the bridge format ({@link Messages} is the shim's): requests read and
 * replies written as the service does, in the same format and field order as
 * yarn_bridge/protocol.py. Only the tests need it (the fake core, ContractTest's round trips
 * through the golden messages), so it lives in the test sources and stays out of the shim's jar.
 */
final class ServiceCodec {
  private ServiceCodec() {
  }


  /** Reads a request as the service would (strictly: anything unexpected is an exception). */
  static Request parseRequest(String text) {
    JsonNode r;
    try {
      r = JSON.readTree(text);
    } catch (IOException e) {
      throw new IllegalArgumentException("request is not JSON: " + abbreviate(text), e);
    }
    if (r.path("v").asInt() != VERSION) {
      throw new IllegalArgumentException("request of version " + r.get("v"));
    }
    long epoch = r.get("epoch").asLong();
    switch (r.get("type").asText()) {
      case "snapshot": {
        List<String> resources = texts(r.get("resources"));
        Snapshot s = new Snapshot(epoch, resources);
        for (JsonNode n : r.get("nodes")) {
          s.nodes.add(nodeInfo(n));
        }
        for (JsonNode a : r.get("apps")) {
          s.apps.add(appInfo(a));
        }
        readContainers(r.get("containers"), s.containers);
        readAsks(r, s.asks, s.counts, s.amAsks);
        if (r.has("labels")) {
          s.labels.putAll(labels(r.get("labels")));
        }
        s.preemptionState = r.has("preemption_state") ? compactJson(r.get("preemption_state")) : null;
        return s;
      }
      case "schedule": {
        Schedule s = new Schedule(epoch, r.get("seq").asLong());
        for (JsonNode d : r.get("deltas")) {
          s.deltas.add(delta(d));
        }
        readContainers(r.get("started"), s.started);
        s.finished.addAll(texts(r.get("finished")));
        if (s.finished.size() % 2 != 0) {
          throw new IllegalArgumentException("finished is not container, state pairs: " + text);
        }
        readAsks(r, s.asks, s.counts, s.amAsks);
        for (JsonNode sub : r.get("submissions")) {
          s.submissions.add(appInfo(sub));
        }
        for (JsonNode n : r.get("nodes")) {
          s.nodes.add(new NodeRow(n.get(0).asText(), longs(n, 1)));
        }
        s.heartbeats = r.get("heartbeats").asLong();
        s.rttMs = r.has("rtt_ms") ? r.get("rtt_ms").asDouble() : null;
        return s;
      }
      case "reload":
        return new Reload(epoch, r.has("path") ? r.get("path").asText() : null);
      case "move":
        return new Move(epoch, r.get("app").asText(), r.get("queue").asText(),
            r.get("user").asText(), texts(r.get("groups")));
      default:
        throw new IllegalArgumentException("unknown request type " + r.get("type"));
    }
  }

  private static Delta delta(JsonNode d) {
    String op = d.get("op").asText();
    switch (op) {
      case "node_added":
        return Delta.nodeAdded(nodeInfo(d));
      case "node_updated":
        return Delta.nodeUpdated(d.get("node").asText(), capacity(d.get("capacity")), sizes(d.get("cards")));
      case "node_removed":
        return Delta.nodeRemoved(d.get("node").asText());
      case "app_added":
        return Delta.appAdded(appInfo(d));
      case "app_removed":
        return Delta.appRemoved(d.get("app").asText());
      case "attempt_added":
        return Delta.attemptAdded(d.get("app").asText());
      case "assignment_refused":
        return Delta.assignmentRefused(d.get("assignment_id").asText(), d.get("reason").asText());
      case "blacklist":
        return Delta.blacklist(d.get("app").asText(), texts(d.get("places")));
      case "app_priority":
        return Delta.appPriority(d.get("app").asText(), d.get("priority").asInt());
      case "labels":
        return Delta.labels(labels(d.get("labels")));
      case "node_label":
        return Delta.nodeLabel(d.get("node").asText(), d.get("label").asText());
      default:
        throw new IllegalArgumentException("unknown delta op " + op);
    }
  }

  private static NodeInfo nodeInfo(JsonNode n) {
    return new NodeInfo(n.get("node").asText(), capacity(n.get("capacity")), n.get("rack").asText(),
        sizes(n.get("cards")), n.has("label") ? n.get("label").asText() : null);
  }

  private static Map<String, Boolean> labels(JsonNode l) {
    Map<String, Boolean> out = new TreeMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = l.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> e = it.next();
      out.put(e.getKey(), e.getValue().asBoolean());
    }
    return out;
  }

  private static List<Long> sizes(JsonNode cards) {
    if (cards == null) {
      return null;
    }
    List<Long> out = new ArrayList<>();
    for (JsonNode x : cards) {
      out.add(x.asLong());
    }
    return out;
  }

  private static AppInfo appInfo(JsonNode a) {
    return new AppInfo(a.get("app").asText(), a.get("user").asText(), a.get("queue").asText(),
        texts(a.get("groups")), a.path("priority").asInt(0), a.has("blacklist")
            ? texts(a.get("blacklist")) : Collections.<String>emptyList(),
        a.has("label") ? a.get("label").asText() : null);
  }

  private static Map<String, Long> capacity(JsonNode c) {
    Map<String, Long> out = new TreeMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = c.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> e = it.next();
      out.put(e.getKey(), e.getValue().asLong());
    }
    return out;
  }

  private static void readContainers(JsonNode rows, List<ContainerRow> out) {
    for (JsonNode c : rows) {
      JsonNode last = c.get(c.size() - 1);
      List<Integer> cards = null;
      if (last.isArray()) {
        cards = new ArrayList<>();
        for (JsonNode x : last) {
          cards.add(x.asInt());
        }
      }
      long[] amounts = longs(c, 6);
      out.add(new ContainerRow(c.get(0).asText(), c.get(1).asText(), c.get(2).asText(),
          c.get(3).asInt(), c.get(4).asLong(), c.get(5).isNull() ? null : c.get(5).asText(),
          cards == null ? amounts : Arrays.copyOf(amounts, amounts.length - 1), cards));
    }
  }

  private static void readAsks(JsonNode r, List<AskRow> asks, List<Long> counts,
      List<Long> amAsks) {
    for (JsonNode a : r.get("asks")) {
      JsonNode last = a.get(a.size() - 1);
      String label = last.isTextual() ? last.asText() : null;
      long[] amounts = longs(a, 7);
      asks.add(new AskRow(a.get(0).asLong(), a.get(1).asInt(), a.get(2).asText(), a.get(3).asInt(),
          a.get(4).asLong(), a.get(5).asText(), a.get(6).asBoolean(),
          label == null ? amounts : Arrays.copyOf(amounts, amounts.length - 1), label));
    }
    for (JsonNode x : r.get("counts")) {
      counts.add(x.asLong());
    }
    for (JsonNode x : r.get("am_asks")) {
      amAsks.add(x.asLong());
    }
  }

  private static long[] longs(JsonNode row, int from) {
    long[] out = new long[row.size() - from];
    for (int i = 0; i < out.length; i++) {
      out[i] = row.get(from + i).asLong();
    }
    return out;
  }

  private static List<String> texts(JsonNode list) {
    List<String> out = new ArrayList<>();
    for (JsonNode x : list) {
      out.add(x.asText());
    }
    return out;
  }

  /** A schedule call's reply with no headroom, AM diagnostic or preemption. */
  static String scheduleReplyText(long seq, List<Assignment> assignments,
      List<Placement> placements, JsonNode queues) {
    return scheduleReplyText(seq, assignments, placements, queues, null, null,
        Collections.<String, long[]>emptyMap(), Collections.<String, String>emptyMap(),
        Collections.<Preemption>emptyList(), Collections.<Preemption>emptyList(), NO_CALL_DUE,
        null);
  }

  /**
   * A schedule call's reply; `queues` (the core's list, as is) only when the tree changed,
   * `queuesBuilt` (the built queues' entries, as is) and `queuesCreated` (as is) only when not null,
   * `headroom`, `amDiagnostics`, "preempt" and "kill" only when not empty, "call_in_ms" only
   * when not {@link #NO_CALL_DUE}, "preemption_state" (compact JSON, as is) only when not null.
   */
  static String scheduleReplyText(long seq, List<Assignment> assignments,
      List<Placement> placements, JsonNode queues, JsonNode queuesBuilt, JsonNode queuesCreated,
      Map<String, long[]> headroom, Map<String, String> amDiagnostics, List<Preemption> preempt,
      List<Preemption> kill, long callInMs, String preemptionState) {
    return scheduleReplyText(seq, assignments, placements, queues, queuesBuilt, queuesCreated,
        headroom, amDiagnostics, preempt, kill, callInMs, preemptionState,
        Collections.<Messages.Hold>emptyList(), Collections.<String>emptyList());
  }

  /** As above, with "holds" and "holds_ended" only when not empty. */
  static String scheduleReplyText(long seq, List<Assignment> assignments,
      List<Placement> placements, JsonNode queues, JsonNode queuesBuilt, JsonNode queuesCreated,
      Map<String, long[]> headroom, Map<String, String> amDiagnostics, List<Preemption> preempt,
      List<Preemption> kill, long callInMs, String preemptionState, List<Messages.Hold> holds,
      List<String> holdsEnded) {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = replyStart(out)) {
      g.writeNumberField("seq", seq);
      g.writeArrayFieldStart("assignments");
      for (Assignment a : assignments) {
        ReplyWriters.write(g, a);
      }
      g.writeEndArray();
      g.writeArrayFieldStart("placements");
      for (Placement p : placements) {
        ReplyWriters.write(g, p);
      }
      g.writeEndArray();
      if (queues != null) {
        g.writeFieldName("queues");
        g.writeTree(queues);
      }
      if (queuesBuilt != null) {
        g.writeFieldName("queues_built");
        g.writeTree(queuesBuilt);
      }
      if (queuesCreated != null) {
        g.writeFieldName("queues_created");
        g.writeTree(queuesCreated);
      }
      if (!headroom.isEmpty()) {
        g.writeArrayFieldStart("headroom");
        for (Map.Entry<String, long[]> e : headroom.entrySet()) {
          g.writeStartArray();
          g.writeString(e.getKey());
          writeLongs(g, e.getValue());
          g.writeEndArray();
        }
        g.writeEndArray();
      }
      if (!amDiagnostics.isEmpty()) {
        g.writeArrayFieldStart("am_diagnostics");
        for (Map.Entry<String, String> e : amDiagnostics.entrySet()) {
          g.writeStartArray();
          g.writeString(e.getKey());
          g.writeString(e.getValue());
          g.writeEndArray();
        }
        g.writeEndArray();
      }
      writePreemptions(g, "preempt", preempt);
      writePreemptions(g, "kill", kill);
      if (callInMs != NO_CALL_DUE) {
        g.writeNumberField("call_in_ms", callInMs);
      }
      if (preemptionState != null) {
        g.writeFieldName("preemption_state");
        g.writeRawValue(preemptionState);
      }
      if (!holds.isEmpty()) {
        g.writeArrayFieldStart("holds");
        for (Messages.Hold h : holds) {
          g.writeStartArray();
          g.writeString(h.node);
          g.writeString(h.app);
          g.writeNumber(h.priority);
          g.writeNumber(h.allocationId);
          writeLongs(g, h.amounts);
          g.writeEndArray();
        }
        g.writeEndArray();
      }
      if (!holdsEnded.isEmpty()) {
        g.writeArrayFieldStart("holds_ended");
        for (String node : holdsEnded) {
          g.writeString(node);
        }
        g.writeEndArray();
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }

  private static void writePreemptions(JsonGenerator g, String field, List<Preemption> list)
      throws IOException {
    if (list.isEmpty()) {
      return;
    }
    g.writeArrayFieldStart(field);
    for (Preemption p : list) {
      ReplyWriters.write(g, p);
    }
    g.writeEndArray();
  }

  static String snapshotReplyText(JsonNode queues) {
    return replyWith("queues", queues);
  }

  static String reloadReplyText(boolean accepted, JsonNode changesOrErrors, JsonNode queues) {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = replyStart(out)) {
      g.writeBooleanField("accepted", accepted);
      g.writeFieldName(accepted ? "changes" : "errors");
      g.writeTree(changesOrErrors);
      if (accepted) {
        g.writeFieldName("queues");
        g.writeTree(queues);
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }

  static String moveReplyText(boolean accepted, String queue, String reason) {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = replyStart(out)) {
      g.writeBooleanField("accepted", accepted);
      g.writeStringField("queue", queue);
      g.writeStringField("reason", reason);
      g.writeEndObject();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }

  static String errorText(String error) {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = JSON.getFactory().createGenerator(out)) {
      g.writeStartObject();
      g.writeNumberField("v", VERSION);
      g.writeBooleanField("ok", false);
      g.writeStringField("error", error);
      g.writeEndObject();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }

  private static String replyWith(String field, JsonNode value) {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = replyStart(out)) {
      g.writeFieldName(field);
      g.writeTree(value);
      g.writeEndObject();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }

  private static JsonGenerator replyStart(StringWriter out) throws IOException {
    JsonGenerator g = JSON.getFactory().createGenerator(out);
    g.setCodec(JSON);
    g.writeStartObject();
    g.writeNumberField("v", VERSION);
    g.writeBooleanField("ok", true);
    return g;
  }

}

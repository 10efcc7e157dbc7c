package org.yarndrf.shim;

import static org.yarndrf.shim.Messages.JSON;
import static org.yarndrf.shim.Messages.NO_CALL_DUE;
import static org.yarndrf.shim.Messages.VERSION;
import static org.yarndrf.shim.Messages.abbreviate;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.StringWriter;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.yarndrf.shim.ReplyValues.Assignment;
import org.yarndrf.shim.ReplyValues.Placement;
import org.yarndrf.shim.ReplyValues.Preemption;
import org.yarndrf.shim.RequestValues.Request;

/**
 * The core's side of the bridge format ({@link Messages} is the shim's): requests read (by the
 * generated RequestReaders) and replies written as the service does, in the same format and field
 * order as yarn_bridge/protocol.py. Only the tests need it (the fake core, ContractTest's round trips
 * through the golden messages), so it lives in the test sources and stays out of the shim's jar.
 */
final class ServiceCodec {
  private ServiceCodec() {
  }


  /**
   * Reads a request as the service would (strictly: a version, type or op it does not know, or
   * pairs of odd length, is an exception), by the readers generated from the spec.
   */
  static Request parseRequest(String text) {
    JsonNode r;
    try {
      r = JSON.readTree(text);
    } catch (IOException e) {
      throw new IllegalArgumentException("request is not JSON: " + abbreviate(text), e);
    }
    if (r.path(Contract.Requests.Envelope.V).asInt() != VERSION) {
      throw new IllegalArgumentException("request of version "
          + r.get(Contract.Requests.Envelope.V));
    }
    return RequestReaders.read(r);
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

  private static void writeLongs(JsonGenerator g, long[] values) throws IOException {
    for (long v : values) {
      g.writeNumber(v);
    }
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

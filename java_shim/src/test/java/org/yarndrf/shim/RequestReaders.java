// Generated from yarn_bridge/contract.yaml by `make contract` (python -m yarn_bridge.contract_gen).
// Do not edit: edit the spec and regenerate.
package org.yarndrf.shim;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yarndrf.shim.RequestValues.AppInfo;
import org.yarndrf.shim.RequestValues.AskRow;
import org.yarndrf.shim.RequestValues.ContainerRow;
import org.yarndrf.shim.RequestValues.Delta;
import org.yarndrf.shim.RequestValues.Move;
import org.yarndrf.shim.RequestValues.NodeInfo;
import org.yarndrf.shim.RequestValues.NodeRow;
import org.yarndrf.shim.RequestValues.Reload;
import org.yarndrf.shim.RequestValues.Request;
import org.yarndrf.shim.RequestValues.Schedule;
import org.yarndrf.shim.RequestValues.Snapshot;

/**
 * Reads the requests of {@link RequestValues} as the core does: every field of the spec, an
 * absent optional one as null (0, empty); an unknown type or op, or pairs of odd length, is an
 * IllegalArgumentException.
 */
final class RequestReaders {
  /** The SHA-256 of the spec's bytes this file was generated from (ContractSpecTest). */
  static final String SPEC_SHA256 = "4df3e377dd8aa1003436126207094277582e10e71ed1e30d8919466c12f4526a";

  private RequestReaders() {
  }

  /** A request after its envelope's version was checked. */
  static Request read(JsonNode r) {
    long epoch = r.get(Contract.Requests.Envelope.EPOCH).asLong();
    String type = r.get(Contract.Requests.Envelope.TYPE).asText();
    switch (type) {
      case Contract.Types.SNAPSHOT:
        return readSnapshot(r, epoch);
      case Contract.Types.SCHEDULE:
        return readSchedule(r, epoch);
      case Contract.Types.RELOAD:
        return readReload(r, epoch);
      case Contract.Types.MOVE:
        return readMove(r, epoch);
      default:
        throw new IllegalArgumentException("unknown request type " + type);
    }
  }

  static Snapshot readSnapshot(JsonNode r, long epoch) {
    Snapshot x = new Snapshot(epoch, texts(r.get(Contract.Requests.Snapshot.RESOURCES)));
    for (JsonNode y : elements(r.get(Contract.Requests.Snapshot.NODES))) {
      x.nodes.add(readNode(y));
    }
    for (JsonNode y : elements(r.get(Contract.Requests.Snapshot.APPS))) {
      x.apps.add(readApp(y));
    }
    for (JsonNode y : elements(r.get(Contract.Requests.Snapshot.CONTAINERS))) {
      x.containers.add(readContainerRow(y));
    }
    for (JsonNode y : elements(r.get(Contract.Requests.Snapshot.ASKS))) {
      x.asks.add(readAskRow(y));
    }
    for (JsonNode y : pairs(r.get(Contract.Requests.Snapshot.COUNTS))) {
      x.counts.add(y.asLong());
    }
    for (JsonNode y : elements(r.get(Contract.Requests.Snapshot.AM_ASKS))) {
      x.amAsks.add(y.asLong());
    }
    x.labels.putAll(labels(r.get(Contract.Requests.Snapshot.LABELS)));
    x.preemptionState = raw(r.get(Contract.Requests.Snapshot.PREEMPTION_STATE));
    return x;
  }

  static Schedule readSchedule(JsonNode r, long epoch) {
    Schedule x = new Schedule(epoch, number(r.get(Contract.Requests.Schedule.SEQ)));
    for (JsonNode y : elements(r.get(Contract.Requests.Schedule.DELTAS))) {
      x.deltas.add(delta(y));
    }
    for (JsonNode y : elements(r.get(Contract.Requests.Schedule.STARTED))) {
      x.started.add(readContainerRow(y));
    }
    for (JsonNode y : pairs(r.get(Contract.Requests.Schedule.FINISHED))) {
      x.finished.add(y.asText());
    }
    for (JsonNode y : elements(r.get(Contract.Requests.Schedule.ASKS))) {
      x.asks.add(readAskRow(y));
    }
    for (JsonNode y : pairs(r.get(Contract.Requests.Schedule.COUNTS))) {
      x.counts.add(y.asLong());
    }
    for (JsonNode y : elements(r.get(Contract.Requests.Schedule.AM_ASKS))) {
      x.amAsks.add(y.asLong());
    }
    for (JsonNode y : elements(r.get(Contract.Requests.Schedule.SUBMISSIONS))) {
      x.submissions.add(readSubmission(y));
    }
    for (JsonNode y : elements(r.get(Contract.Requests.Schedule.NODES))) {
      x.nodes.add(readNodeRow(y));
    }
    x.heartbeats = number(r.get(Contract.Requests.Schedule.HEARTBEATS));
    x.rttMs = decimal(r.get(Contract.Requests.Schedule.RTT_MS));
    return x;
  }

  static Reload readReload(JsonNode r, long epoch) {
    Reload x = new Reload(epoch);
    x.path = text(r.get(Contract.Requests.Reload.PATH));
    return x;
  }

  static Move readMove(JsonNode r, long epoch) {
    Move x = new Move(epoch, text(r.get(Contract.Requests.Move.APP)),
        text(r.get(Contract.Requests.Move.QUEUE)), text(r.get(Contract.Requests.Move.USER)));
    x.groups.addAll(texts(r.get(Contract.Requests.Move.GROUPS)));
    return x;
  }

  static NodeInfo readNode(JsonNode n) {
    return new NodeInfo(text(n.get(Contract.Items.Node.NODE)),
        amounts(n.get(Contract.Items.Node.CAPACITY)))
        .withRack(text(n.get(Contract.Items.Node.RACK)))
        .withCards(numbers(n.get(Contract.Items.Node.CARDS)))
        .withLabel(text(n.get(Contract.Items.Node.LABEL)));
  }

  static AppInfo readApp(JsonNode n) {
    return new AppInfo(text(n.get(Contract.Items.App.APP)), text(n.get(Contract.Items.App.USER)),
        text(n.get(Contract.Items.App.QUEUE)))
        .withGroups(texts(n.get(Contract.Items.App.GROUPS)))
        .withPriority((int) number(n.get(Contract.Items.App.PRIORITY)))
        .withBlacklist(texts(n.get(Contract.Items.App.BLACKLIST)));
  }

  static AppInfo readSubmission(JsonNode n) {
    return new AppInfo(text(n.get(Contract.Items.Submission.APP)),
        text(n.get(Contract.Items.Submission.USER)), text(n.get(Contract.Items.Submission.QUEUE)))
        .withGroups(texts(n.get(Contract.Items.Submission.GROUPS)))
        .withPriority((int) number(n.get(Contract.Items.Submission.PRIORITY)))
        .withLabel(text(n.get(Contract.Items.Submission.LABEL)));
  }

  static Delta delta(JsonNode d) {
    String op = d.get(Contract.Ops.OP).asText();
    switch (op) {
      case Contract.Ops.NODE_ADDED:
        return Delta.nodeAdded(readNode(d));
      case Contract.Ops.NODE_UPDATED:
        return Delta.nodeUpdated(text(d.get(Contract.Deltas.NodeUpdated.NODE)),
            amounts(d.get(Contract.Deltas.NodeUpdated.CAPACITY)),
            numbers(d.get(Contract.Deltas.NodeUpdated.CARDS)));
      case Contract.Ops.NODE_REMOVED:
        return Delta.nodeRemoved(text(d.get(Contract.Deltas.NodeRemoved.NODE)));
      case Contract.Ops.APP_ADDED:
        return Delta.appAdded(readApp(d));
      case Contract.Ops.APP_REMOVED:
        return Delta.appRemoved(text(d.get(Contract.Deltas.AppRemoved.APP)));
      case Contract.Ops.ATTEMPT_ADDED:
        return Delta.attemptAdded(text(d.get(Contract.Deltas.AttemptAdded.APP)));
      case Contract.Ops.ASSIGNMENT_REFUSED:
        return Delta.assignmentRefused(text(d.get(Contract.Deltas.AssignmentRefused.ASSIGNMENT_ID)),
            text(d.get(Contract.Deltas.AssignmentRefused.REASON)));
      case Contract.Ops.BLACKLIST:
        return Delta.blacklist(text(d.get(Contract.Deltas.Blacklist.APP)),
            texts(d.get(Contract.Deltas.Blacklist.PLACES)));
      case Contract.Ops.APP_PRIORITY:
        return Delta.appPriority(text(d.get(Contract.Deltas.AppPriority.APP)),
            (int) number(d.get(Contract.Deltas.AppPriority.PRIORITY)));
      case Contract.Ops.LABELS:
        return Delta.labels(labels(d.get(Contract.Deltas.Labels.LABELS)));
      case Contract.Ops.NODE_LABEL:
        return Delta.nodeLabel(text(d.get(Contract.Deltas.NodeLabel.NODE)),
            text(d.get(Contract.Deltas.NodeLabel.LABEL)));
      default:
        throw new IllegalArgumentException("unknown delta op " + op);
    }
  }

  static ContainerRow readContainerRow(JsonNode r) {
    int end = r.size();
    List<Integer> cards = null;
    if (end > Contract.Rows.ContainerRow.TAIL && r.get(end - 1).isArray()) {
      cards = ints(r.get(end - 1));
      end--;
    }
    return new ContainerRow(text(r.get(Contract.Rows.ContainerRow.CONTAINER)),
        text(r.get(Contract.Rows.ContainerRow.APP)), text(r.get(Contract.Rows.ContainerRow.NODE)),
        (int) number(r.get(Contract.Rows.ContainerRow.PRIORITY)),
        number(r.get(Contract.Rows.ContainerRow.ALLOCATION_ID)),
        text(r.get(Contract.Rows.ContainerRow.ASSIGNMENT_ID)),
        vector(r, Contract.Rows.ContainerRow.TAIL, end)).withCards(cards);
  }

  static AskRow readAskRow(JsonNode r) {
    int end = r.size();
    String label = null;
    if (end > Contract.Rows.AskRow.TAIL && r.get(end - 1).isTextual()) {
      label = r.get(end - 1).asText();
      end--;
    }
    return new AskRow(number(r.get(Contract.Rows.AskRow.ID)),
        (int) number(r.get(Contract.Rows.AskRow.COUNT)), text(r.get(Contract.Rows.AskRow.APP)),
        (int) number(r.get(Contract.Rows.AskRow.PRIORITY)),
        number(r.get(Contract.Rows.AskRow.ALLOCATION_ID)),
        text(r.get(Contract.Rows.AskRow.LOCATION)),
        r.get(Contract.Rows.AskRow.RELAX_LOCALITY).asBoolean(),
        vector(r, Contract.Rows.AskRow.TAIL, end)).withLabel(label);
  }

  static NodeRow readNodeRow(JsonNode r) {
    int end = r.size();
    return new NodeRow(text(r.get(Contract.Rows.NodeRow.NODE)),
        vector(r, Contract.Rows.NodeRow.TAIL, end));
  }

  private static String text(JsonNode x) {
    return x == null || x.isNull() ? null : x.asText();
  }

  private static long number(JsonNode x) {
    return x == null ? 0 : x.asLong();
  }

  private static Double decimal(JsonNode x) {
    return x == null ? null : x.asDouble();
  }

  /** JSON kept as text (compact, as it came). */
  private static String raw(JsonNode x) {
    return x == null ? null : Messages.compactJson(x);
  }

  private static Iterable<JsonNode> elements(JsonNode x) {
    return x == null ? Collections.<JsonNode>emptyList() : x;
  }

  private static Iterable<JsonNode> pairs(JsonNode x) {
    if (x != null && x.size() % 2 != 0) {
      throw new IllegalArgumentException("not a list of pairs: " + x);
    }
    return elements(x);
  }

  private static List<String> texts(JsonNode x) {
    List<String> out = new ArrayList<>();
    for (JsonNode y : elements(x)) {
      out.add(y.asText());
    }
    return out;
  }

  private static List<Long> numbers(JsonNode x) {
    if (x == null) {
      return null;
    }
    List<Long> out = new ArrayList<>();
    for (JsonNode y : x) {
      out.add(y.asLong());
    }
    return out;
  }

  private static List<Integer> ints(JsonNode x) {
    List<Integer> out = new ArrayList<>();
    for (JsonNode y : x) {
      out.add(y.asInt());
    }
    return out;
  }

  private static long[] vector(JsonNode row, int from, int end) {
    long[] out = new long[end - from];
    for (int i = 0; i < out.length; i++) {
      out[i] = row.get(from + i).asLong();
    }
    return out;
  }

  private static Map<String, Long> amounts(JsonNode x) {
    if (x == null) {
      return null;
    }
    Map<String, Long> out = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = x.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> e = it.next();
      out.put(e.getKey(), e.getValue().asLong());
    }
    return out;
  }

  private static Map<String, Boolean> labels(JsonNode x) {
    Map<String, Boolean> out = new LinkedHashMap<>();
    if (x == null) {
      return out;
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = x.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> e = it.next();
      out.put(e.getKey(), e.getValue().asBoolean());
    }
    return out;
  }
}

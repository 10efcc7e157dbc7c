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
import org.yarndrf.nm.GpuCards;
import org.yarndrf.shim.Contract.Replies;
import org.yarndrf.shim.Contract.ReplyItems;
import org.yarndrf.shim.Contract.ReplyItems.QueueEntry;
import org.yarndrf.shim.Contract.Rows;
import org.yarndrf.shim.ReplyValues.MoveReply;
import org.yarndrf.shim.ReplyValues.ReloadReply;
import org.yarndrf.shim.ReplyValues.ScheduleReply;
import org.yarndrf.shim.RequestValues.Request;
import org.yarndrf.shim.bridge.MalformedReplyException;

/**
 * The bridge's message format, version {@link #VERSION} (docs/bridge.md): the shim's way in and
 * out of it. Requests are the values of {@link RequestValues}, written by their generated writers
 * with Jackson's streaming generator; replies are read as trees into the values of {@link
 * ReplyValues} by their generated readers and the checked readers below, field by field; anything
 * else is a {@link MalformedReplyException} naming what is wrong. The golden messages of
 * tests/bridge/contract/ are what both sides are checked against: ContractTest builds each golden
 * request through this class and decodes each golden reply; the Python tests check that the service
 * decodes the same requests and answers with the same replies. The core's side (requests read,
 * replies written), which only the tests need, is ServiceCodec in the test sources.
 */
public final class Messages {
  public static final int VERSION = Contract.VERSION;
  static final ObjectMapper JSON = new ObjectMapper();

  private Messages() {
  }

  /** A schedule reply's "call_in_ms" when it has none: no call is due without a change. */
  public static final long NO_CALL_DUE = -1;

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

  // ================================================================== requests out

  /** A request as its JSON text, written by its generated writer (RequestValues). */
  public static String encode(Request request) {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = JSON.getFactory().createGenerator(out)) {
      request.write(g);
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode a bridge message", e);
    }
    return out.toString();
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
    return ReloadReply.read(envelope(text));
  }

  /** Any JSON value as compact text (for the log), or null when absent. */
  static String jsonText(JsonNode n, String field) {
    JsonNode value = n.get(field);
    return value == null ? null : compactJson(value);
  }

  /** An accepted reload's queue list (required); null for a refused one. */
  static List<QueueSettings> queuesIfAccepted(JsonNode n, String field)
      throws MalformedReplyException {
    return bool(n, Replies.Reload.ACCEPTED) ? queues(n.get(field)) : null;
  }

  /** A refused reload's errors (required, each a string); empty for an accepted one. */
  static List<String> errorsIfRefused(JsonNode n, String field) throws MalformedReplyException {
    if (bool(n, Replies.Reload.ACCEPTED)) {
      return Collections.emptyList();
    }
    List<String> errors = new ArrayList<>();
    for (JsonNode e : array(n, field)) {
      errors.add(e.asText());
    }
    return errors;
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

package org.yarndrf.shim.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Map;

/**
 * The bridge's message format, version {@link #VERSION} (documented in yarn_bridge/BRIDGE.md).
 * Every message and reply is one JSON object with "v"; requests carry "type".
 */
public final class Protocol {
  public static final int VERSION = 4;
  public static final ObjectMapper JSON = new ObjectMapper();

  private Protocol() {
  }

  public static ObjectNode request(String type) {
    ObjectNode n = JSON.createObjectNode();
    n.put("v", VERSION);
    n.put("type", type);
    return n;
  }

  public static ObjectNode delta(String op) {
    ObjectNode n = JSON.createObjectNode();
    n.put("op", op);
    return n;
  }

  public static ObjectNode amounts(Map<String, Long> amounts) {
    ObjectNode n = JSON.createObjectNode();
    for (Map.Entry<String, Long> e : amounts.entrySet()) {
      n.put(e.getKey(), e.getValue());
    }
    return n;
  }

  public static String encode(JsonNode node) {
    try {
      return JSON.writeValueAsString(node);
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode a bridge message", e);
    }
  }

  /**
   * Parses and checks a reply's envelope.
   * @throws MalformedReplyException naming what is wrong, if it is not a JSON object of this version
   *     with "ok": true (an "ok": false reply carries the core's "error").
   */
  public static JsonNode decodeReply(String text) throws MalformedReplyException {
    JsonNode node;
    try {
      node = JSON.readTree(text);
    } catch (IOException e) {
      throw new MalformedReplyException("reply is not JSON: " + abbreviate(text));
    }
    if (node == null || !node.isObject()) {
      throw new MalformedReplyException("reply is not a JSON object: " + abbreviate(text));
    }
    JsonNode v = node.get("v");
    if (v == null || !v.isInt() || v.asInt() != VERSION) {
      throw new MalformedReplyException("reply has version " + v + ", expected " + VERSION);
    }
    JsonNode ok = node.get("ok");
    if (ok == null || !ok.isBoolean()) {
      throw new MalformedReplyException("reply has no boolean \"ok\"");
    }
    if (!ok.asBoolean()) {
      throw new MalformedReplyException("core error: " + node.path("error").asText("(none given)"));
    }
    return node;
  }

  /** Requires node[field] to be an array; returns it. */
  public static ArrayNode array(JsonNode node, String field) throws MalformedReplyException {
    JsonNode a = node.get(field);
    if (a == null || !a.isArray()) {
      throw new MalformedReplyException("reply field \"" + field + "\" is not an array");
    }
    return (ArrayNode) a;
  }

  public static String text(JsonNode node, String field) throws MalformedReplyException {
    JsonNode t = node.get(field);
    if (t == null || !t.isTextual()) {
      throw new MalformedReplyException("field \"" + field + "\" is not a string in " + node);
    }
    return t.asText();
  }

  public static long integer(JsonNode node, String field) throws MalformedReplyException {
    JsonNode t = node.get(field);
    if (t == null || !t.canConvertToLong() || !t.isIntegralNumber()) {
      throw new MalformedReplyException("field \"" + field + "\" is not an integer in " + node);
    }
    return t.asLong();
  }

  static String abbreviate(String s) {
    if (s == null) {
      return "null";
    }
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }
}

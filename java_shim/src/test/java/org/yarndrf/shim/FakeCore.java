package org.yarndrf.shim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yarndrf.shim.bridge.CoreChannel;
import org.yarndrf.shim.bridge.CoreUnavailableException;
import org.yarndrf.shim.bridge.Protocol;

/**
 * An in-process stand-in for the Python core, speaking the real message format: it keeps the
 * outstanding ANY asks it is told about (by ask id) and, on each heartbeat, assigns all of them (plus
 * `extra` more) to the heartbeating node, without checking anything, so the shim's own
 * re-checks are what the tests observe. A refused assignment gives its ask back, as in the core.
 */
final class FakeCore implements CoreChannel {
  enum Mode { OK, MALFORMED, DOWN, WRONG_VERSION }

  volatile Mode mode = Mode.OK;
  volatile int extra;
  /** Sent once with the next heartbeat reply, as the core does after a reload. */
  volatile ArrayNode pushQueues;
  /** Set: the next reload is applied (this becomes the queue tree) but its reply never comes. */
  volatile ArrayNode reloadThenTimeOut;
  private ArrayNode queueTree = queues();
  final List<JsonNode> requests = new ArrayList<>();
  final List<JsonNode> deltas = new ArrayList<>();
  /** Rows of containers started, as the shim sent them: [container, app, node, ...]. */
  final List<JsonNode> started = new ArrayList<>();
  /** Containers finished, as "container=state". */
  final List<String> finished = new ArrayList<>();
  private final Map<Long, ObjectNode> asks = new LinkedHashMap<>();
  /** assignment id -> the ask it was made for, so a refusal gives the ask back as the core does. */
  private final Map<String, ObjectNode> assigned = new LinkedHashMap<>();
  private JsonNode resourceTypes;
  private int nextId;

  @Override
  public synchronized String call(String message) throws CoreUnavailableException {
    if (mode == Mode.DOWN) {
      throw new CoreUnavailableException("fake core is down", null, false);
    }
    JsonNode req;
    try {
      req = Protocol.JSON.readTree(message);
    } catch (IOException e) {
      throw new AssertionError("the shim sent invalid JSON: " + message, e);
    }
    requests.add(req);
    if ("reload".equals(req.get("type").asText()) && reloadThenTimeOut != null) {
      queueTree = reloadThenTimeOut;
      reloadThenTimeOut = null;
      throw new CoreUnavailableException("Read timed out", null, true);
    }
    if (mode == Mode.MALFORMED) {
      return "{\"v\":" + Protocol.VERSION + ",\"ok\":true,\"seq\":" + req.path("seq").asLong()
          + ",\"assignments\":[{\"app\":";
    }
    if (mode == Mode.WRONG_VERSION) {
      return "{\"v\":99,\"ok\":true}";
    }
    ObjectNode reply = Protocol.JSON.createObjectNode();
    reply.put("v", Protocol.VERSION);
    reply.put("ok", true);
    switch (req.get("type").asText()) {
      case "snapshot":
        asks.clear();
        resourceTypes = req.get("resources");
        asks(req.get("asks"), req.get("counts"));
        reply.set("queues", queueTree);
        break;
      case "submit":
        boolean ok = !"mallory".equals(req.get("user").asText());
        reply.put("accepted", ok);
        reply.put("queue", ok ? "root.a" : null);
        reply.put("reason", ok ? "" : "user 'mallory' may not submit to queue 'root.a'");
        reply.set("queues", queues());
        break;
      case "heartbeat":
        apply(req);
        asks(req.get("asks"), req.get("counts"));
        reply.put("seq", req.get("seq").asLong());
        if (pushQueues != null) {
          reply.set("queues", pushQueues);
          pushQueues = null;
        }
        ArrayNode out = reply.putArray("assignments");
        for (ObjectNode a : asks.values()) {
          int count = a.get("count").asInt();
          for (int i = 0; i < count + extra; i++) {
            ObjectNode as = out.addObject();
            as.put("assignment_id", "fake-" + (++nextId));
            as.put("app", a.get("app").asText());
            as.put("node", req.get("node").asText());
            as.put("queue", "root.a");
            as.put("priority", a.get("priority").asInt());
            as.put("allocation_id", a.get("allocation_id").asLong());
            as.set("resources", a.get("resources"));
            if (i < count) {  // the extra ones were never asked for
              assigned.put(as.get("assignment_id").asText(), a);
            }
          }
          a.put("count", 0);
        }
        break;
      case "events":
        apply(req);
        asks(req.get("asks"), req.get("counts"));
        break;
      default:
        reply.put("accepted", true);
        reply.set("queues", queues());
    }
    return Protocol.encode(reply);
  }

  private void apply(JsonNode req) {
    req.get("deltas").forEach(deltas::add);
    for (JsonNode d : req.get("deltas")) {
      ObjectNode ask = "assignment_refused".equals(d.get("op").asText())
          ? assigned.remove(d.get("assignment_id").asText()) : null;
      if (ask != null) {
        ask.put("count", ask.get("count").asInt() + 1);
      }
    }
    req.get("started").forEach(started::add);
    JsonNode pairs = req.get("finished");
    if (pairs.size() % 2 != 0) {
      throw new AssertionError("finished is not container, state pairs: " + req);
    }
    for (int i = 0; i < pairs.size(); i += 2) {
      finished.add(pairs.get(i).asText() + "=" + pairs.get(i + 1).asText());
    }
  }

  /** "asks": [id, count, app, priority, allocation_id, location, relax, amounts...]; "counts": id, count, ... */
  private void asks(JsonNode full, JsonNode counts) {
    for (JsonNode a : full) {
      if ("*".equals(a.get(5).asText())) {
        ObjectNode o = Protocol.JSON.createObjectNode();
        o.put("count", a.get(1).asInt());
        o.put("app", a.get(2).asText());
        o.put("priority", a.get(3).asInt());
        o.put("allocation_id", a.get(4).asLong());
        ObjectNode resources = o.putObject("resources");
        for (int i = 0; i < resourceTypes.size(); i++) {
          resources.put(resourceTypes.get(i).asText(), a.get(7 + i).asLong());
        }
        asks.put(a.get(0).asLong(), o);
      }
    }
    for (int i = 0; i + 1 < counts.size(); i += 2) {
      ObjectNode known = asks.get(counts.get(i).asLong());
      if (known != null) {
        known.put("count", counts.get(i + 1).asInt());
      }
    }
  }

  static ArrayNode queues() {
    ArrayNode q = Protocol.JSON.createArrayNode();
    q.addObject().put("name", "root").put("leaf", false).put("submit_acl", " ").put("admin_acl", " ");
    q.addObject().put("name", "root.a").put("leaf", true).put("weight", 2.0).put("submit_acl", "*");
    ObjectNode b = q.addObject().put("name", "root.b").put("leaf", true).put("submit_acl", "alice");
    b.putObject("max").put("memory-mb", 2048);
    return q;
  }

  synchronized List<JsonNode> deltasOf(String op) {
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode d : deltas) {
      if (op.equals(d.get("op").asText())) {
        out.add(d);
      }
    }
    return out;
  }

  synchronized List<JsonNode> startedRows() {
    return new ArrayList<>(started);
  }

  synchronized List<String> finishedPairs() {
    return new ArrayList<>(finished);
  }

  synchronized long count(String type) {
    return requests.stream().filter(r -> type.equals(r.get("type").asText())).count();
  }

  @Override
  public void close() {
  }
}

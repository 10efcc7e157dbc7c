package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.yarndrf.shim.bridge.MalformedReplyException;

/**
 * The golden messages of tests/bridge/contract/ (the wire contract; the Python tests check the
 * service against the same files): {@link Messages} builds every golden request to the same
 * bytes, decodes every golden reply and writes it back to the same bytes, and refuses the
 * service's errors and every malformed reply.
 */
class ContractTest {
  private static JsonNode examples(String file) throws Exception {
    try (InputStream in = ContractTest.class.getResourceAsStream("/contract/" + file)) {
      assertTrue(in != null, "the contract files are a test resource (pom.xml): " + file);
      return Messages.JSON.readTree(in).get("examples");
    }
  }

  private static String compact(JsonNode message) throws Exception {
    return Messages.JSON.writeValueAsString(message);
  }

  @Test
  void messagesBuildsEveryGoldenRequestToTheSameBytes() throws Exception {
    int seen = 0;
    for (String type : Arrays.asList("snapshot", "schedule", "reload", "move")) {
      for (JsonNode example : examples(type + ".request.json")) {
        String golden = compact(example.get("message"));
        RequestValues.Request parsed = ServiceCodec.parseRequest(golden);
        assertEquals(type, parsed.type);
        assertEquals(golden, Messages.encode(parsed), example.get("name").asText());
        seen++;
      }
    }
    assertTrue(seen >= 7, "examples: " + seen);
    // (the stories' schedule calls are written short; their snapshots as the shim sends them)
    JsonNode restart = examples("restart.request.json").get(0).get("message");
    assertEquals(compact(restart), Messages.encode(ServiceCodec.parseRequest(compact(restart))));
  }

  /**
   * The shim gives the core's preemption state back as it got it: the state of the preemption
   * story's told reply, decoded, then put on the new RM's first snapshot, is byte for byte the
   * restart story's snapshot.
   */
  @Test
  void thePreemptionStateOfAReplyGoesBackInTheNextSnapshotByteForByte() throws Exception {
    String saved = null;
    for (JsonNode example : examples("preemption.reply.json")) {
      JsonNode message = example.get("message");
      if (message.has("preempt")) {
        saved = Messages.scheduleReply(compact(message)).preemptionState;
      }
    }
    assertTrue(saved != null && saved.contains("\"deadline_ms\":1700000008500"), saved);
    JsonNode golden = examples("restart.request.json").get(0).get("message");
    RequestValues.Snapshot s = (RequestValues.Snapshot) ServiceCodec.parseRequest(compact(golden));
    s.preemptionState = PreemptionStore.checked(saved, "the reply");
    assertEquals(compact(golden), Messages.encode(s));
  }

  /** The snapshot as the shim's own code builds one, value by value (not from a parsed copy). */
  @Test
  void theGoldenSnapshotIsWhatTheShimBuildsFromYarnsValues() throws Exception {
    RequestValues.Snapshot s = new RequestValues.Snapshot(1700000000000L,
        Arrays.asList("memory-mb", "vcores", "gpu-mem"));
    s.nodes.add(new RequestValues.NodeInfo("host1:8041", capacity(16384, 16, 0))
        .withRack("/rack1"));
    s.nodes.add(new RequestValues.NodeInfo("host2:8041", capacity(16384, 16, 16384))
        .withRack("/rack2").withCards(Arrays.asList(8192L, 8192L)));
    String app = "application_1700000000000_0001";
    s.apps.add(new RequestValues.AppInfo(app, "alice", "root.cpu")
        .withGroups(Collections.singletonList("staff"))
        .withBlacklist(Collections.singletonList("/rack2")));
    s.containers.add(new RequestValues.ContainerRow("container_1700000000000_0001_01_000001", app,
        "host1:8041", 0, 0, null, new long[] {1024, 1, 0}));
    s.asks.add(new RequestValues.AskRow(1, 2, app, 1, 0, "*", true, new long[] {2048, 2, 0}));
    s.labels.put("gpu", true);
    assertEquals(compact(examples("snapshot.request.json").get(0).get("message")), Messages.encode(s));
  }

  /**
   * The queue list's node labels, as ShimQueue answers getAccessibleNodeLabels and
   * getDefaultNodeLabelExpression (and so YARN's checks of asks and AMs): inherited by the core,
   * every label ("*") and the default partition ("") when the entry says nothing.
   */
  @Test
  void theGoldenQueueListsLabelsAreWhatTheQueuesAnswer() throws Exception {
    JsonNode golden = examples("snapshot.reply.json").get(0).get("message");
    Map<String, QueueSettings> byPath = new TreeMap<>();
    for (QueueSettings q : Messages.snapshotReply(compact(golden))) {
      byPath.put(q.path, q);
    }
    assertEquals(Collections.singleton("gpu"), byPath.get("root.gpu").accessibleLabels);
    assertEquals("", byPath.get("root.gpu").defaultLabel);
    assertEquals(Collections.singleton("*"), byPath.get("root.cpu").accessibleLabels);
    assertEquals("x", byPath.get("root.restricted").defaultLabel);
  }

  private static Map<String, Long> capacity(long memory, long vcores, long gpu) {
    Map<String, Long> out = new TreeMap<>();
    out.put("memory-mb", memory);
    out.put("vcores", vcores);
    out.put("gpu-mem", gpu);
    return out;
  }

  @Test
  void everyGoldenReplyDecodesAndIsWrittenBackToTheSameBytes() throws Exception {
    for (JsonNode example : examples("schedule.reply.json")) {
      JsonNode message = example.get("message");
      ReplyValues.ScheduleReply r = Messages.scheduleReply(compact(message));
      assertEquals(message.get("seq").asLong(), r.seq);
      assertEquals(message.get("assignments").size(), r.assignments.size());
      assertEquals(message.get("placements").size(), r.placements.size());
      assertEquals(message.has("queues"), r.queues != null);
      assertEquals(message.path("queues_built").size(), r.queuesBuilt.size());
      assertEquals(compact(message), ServiceCodec.scheduleReplyText(r.seq, r.assignments, r.placements,
          message.get("queues"), message.get("queues_built"), message.get("queues_created"), r.headroom, r.amDiagnostics, r.preempt,
          r.kill, r.callInMs,
          r.preemptionState, r.holds, r.holdsEnded),
          example.get("name").asText());
    }
    JsonNode first = examples("schedule.reply.json").get(0).get("message");
    ReplyValues.ScheduleReply r = Messages.scheduleReply(compact(first));
    ReplyValues.Assignment a = r.assignments.get(0);
    assertEquals("a1", a.id);
    assertEquals(2048L, (long) a.resources.get("memory-mb"));
    assertTrue(a.cards.isEmpty(), "a1 is on a node without cards");
    ReplyValues.Placement refused = r.placements.get(1);
    assertTrue(!refused.accepted && refused.queue == null && refused.reason.contains("mallory"));
    ReplyValues.Assignment onCards = Messages.scheduleReply(compact(examples("schedule.reply.json").get(1)
        .get("message"))).assignments.get(1);
    assertEquals(Arrays.asList("a4", 0), Arrays.asList(onCards.id, onCards.cards.get(0)));

    for (JsonNode example : examples("snapshot.reply.json")) {
      JsonNode message = example.get("message");
      List<QueueSettings> queues = Messages.snapshotReply(compact(message));
      assertEquals(message.get("queues").size(), queues.size());
      assertEquals(2.0, queues.get(2).weight, "root.gpu: its largest per-resource weight");
      assertEquals(compact(message), ServiceCodec.snapshotReplyText(message.get("queues")));
    }
    for (JsonNode example : examples("move.reply.json")) {
      JsonNode message = example.get("message");
      ReplyValues.MoveReply reply = Messages.moveReply(compact(message));
      assertEquals(message.get("accepted").asBoolean(), reply.accepted);
      assertEquals(compact(message), ServiceCodec.moveReplyText(reply.accepted, reply.queue,
          reply.reason), example.get("name").asText());
    }
    for (JsonNode example : examples("reload.reply.json")) {
      JsonNode message = example.get("message");
      ReplyValues.ReloadReply reply = Messages.reloadReply(compact(message));
      assertEquals(message.get("accepted").asBoolean(), reply.accepted);
      JsonNode detail = message.get(reply.accepted ? "changes" : "errors");
      if (reply.accepted) {
        assertEquals(message.get("queues").size(), reply.queues.size());
      } else {
        assertEquals(message.get("errors").size(), reply.errors.size());
        assertNull(reply.queues);
      }
      assertEquals(compact(message), ServiceCodec.reloadReplyText(reply.accepted, detail,
          message.get("queues")), example.get("name").asText());
    }
  }

  @Test
  void thePreemptionStorysRepliesDecodeAndAreWrittenBackToTheSameBytes() throws Exception {
    assertEquals(Arrays.asList("b-starved-victims-told"), preemptionStory("preemption", 3000));
    assertEquals(Arrays.asList("am-resynced"), preemptionStory("restart", 1000));
  }

  /**
   * One story's replies, each decoded and written back to the same bytes; what is told is killed,
   * each told with `graceMs` left. Returns the names of the replies carrying the state with marks.
   */
  private static List<String> preemptionStory(String story, long graceMs) throws Exception {
    List<String> told = new ArrayList<>();
    List<String> killed = new ArrayList<>();
    List<String> withMarks = new ArrayList<>();
    for (JsonNode example : examples(story + ".reply.json")) {
      JsonNode message = example.get("message");
      if (!message.has("seq")) {
        continue;  // the story's snapshot reply
      }
      ReplyValues.ScheduleReply r = Messages.scheduleReply(compact(message));
      assertEquals(message.path("preempt").size(), r.preempt.size());
      assertEquals(message.path("kill").size(), r.kill.size());
      for (ReplyValues.Preemption p : r.preempt) {
        told.add(p.container);
        assertEquals("root.b", p.forQueue);
        assertEquals(graceMs, p.killInMs);
      }
      assertEquals(message.has("preemption_state"), r.preemptionState != null);
      if (message.path("preemption_state").path("marks").size() > 0
          && !message.path("preemption_state").path("marks").get(0).has("waiting_until_ms")) {
        withMarks.add(example.get("name").asText());
      }
      for (ReplyValues.Preemption p : r.kill) {
        killed.add(p.container);
        assertEquals(0, p.killInMs);
      }
      assertEquals(message.path("call_in_ms").asLong(Messages.NO_CALL_DUE), r.callInMs);
      assertEquals(compact(message), ServiceCodec.scheduleReplyText(r.seq, r.assignments, r.placements,
          message.get("queues"), message.get("queues_built"), message.get("queues_created"), r.headroom, r.amDiagnostics, r.preempt,
          r.kill, r.callInMs,
          r.preemptionState, r.holds, r.holdsEnded),
          example.get("name").asText());
    }
    assertEquals(2, told.size());
    assertEquals(told, killed);
    return withMarks;
  }

  @Test
  void theServicesErrorRepliesAreRefusedWithTheServicesWords() throws Exception {
    for (JsonNode example : examples("error.reply.json")) {
      JsonNode message = example.get("message");
      MalformedReplyException e = assertThrows(MalformedReplyException.class,
          () -> Messages.scheduleReply(compact(message)));
      assertEquals("core error: " + message.get("error").asText(), e.getMessage());
      assertEquals(compact(message), ServiceCodec.errorText(message.get("error").asText()));
    }
  }

  @Test
  void everyMalformedReplyIsRefusedSayingWhy() throws Exception {
    for (JsonNode example : examples("invalid.reply.json")) {
      MalformedReplyException e = assertThrows(MalformedReplyException.class,
          () -> Messages.scheduleReply(example.get("text").asText()), example.get("name").asText());
      assertTrue(e.getMessage().contains(example.get("refused_because").asText()),
          example.get("name").asText() + ": " + e.getMessage());
    }
  }
}

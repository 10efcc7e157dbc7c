package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.InputStream;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.Resource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.yarndrf.shim.bridge.MalformedReplyException;

/**
 * The shim's reading of the core's queue list: the list the core sends at the bounds of what the
 * queue file allows (queue-list-bounds.json, written and checked by
 * tests/core/test_config_limits.py) is taken exactly, and a list with any value the shim cannot
 * hold is refused whole, naming the queue and the field, never wrapped into range.
 */
class QueueTreeTest {
  private static final long TWO_TO_53 = 9007199254740992L;
  private final QueueTree tree = new QueueTree(new Configuration(), (queue, attempt, container) -> { });

  private static ArrayNode golden() throws Exception {
    try (InputStream in = QueueTreeTest.class.getResourceAsStream("/queue-list-bounds.json")) {
      return (ArrayNode) Messages.JSON.readTree(in);
    }
  }

  private static Resource cluster(long memory, int vcores) {
    return Resource.newInstance(memory, vcores);
  }

  @Test
  void theQueueListAtTheBoundsOfTheQueueFileIsReadExactly() throws Exception {
    tree.update(Messages.queues(golden()));
    ShimQueue heavy = tree.find("root.heavy");
    ShimQueue light = tree.find("root.light");
    ShimQueue mixed = tree.find("root.mixed");
    Resource big = cluster(Long.MAX_VALUE / 2, 1000);
    assertEquals(TWO_TO_53, heavy.limitFor("memory-mb", big));
    assertEquals(TWO_TO_53, heavy.limitFor("vcores", big));
    assertEquals(0, light.limitFor("vcores", cluster(1 << 20, 1000)));  // 0.0001% of 1000
    assertEquals(1000, mixed.limitFor("vcores", cluster(1 << 20, 1000)));  // 100%
    assertEquals(1, mixed.limitFor("memory-mb", big));
    assertEquals(1e6f, heavy.getQueueInfo(false, false).getWeight());
    assertEquals(1e-6f, light.getQueueInfo(false, false).getWeight());
    assertEquals(1e6f, mixed.getQueueInfo(false, false).getWeight());  // its largest weight
    assertTrue(Float.isFinite(light.getQueueInfo(false, false).getCapacity()));
    assertTrue(mixed.hasAccess(QueueACL.SUBMIT_APPLICATIONS,
        UserGroupInformation.createUserForTesting("a", new String[0])));
    assertFalse(mixed.isRemoved());
    assertFalse(tree.find("root.users").isLeaf());
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "{\"max\": {\"vcores\": 18446744073709551621}}",  // asLong() would read 5
      "{\"max\": {\"vcores\": 9223372036854775808}}",
      "{\"max\": {\"vcores\": -1}}",
      "{\"max\": {\"vcores\": 1.5}}",
      "{\"max\": {\"vcores\": \"60%\"}}",
      "{\"max\": [1]}",
      "{\"max_fraction\": 2.0}",
      "{\"max_fraction\": \"0.5\"}",
      "{\"weight\": 0}",
      "{\"weight\": -1}",
      "{\"weight\": 1e400}",
      "{\"weight\": \"2\"}",
      "{\"weight\": {\"vcores\": 0}}",
      "{\"submit_acl\": 5}",
      "{\"admin_acl\": [\"a\"]}",
      "{\"leaf\": \"yes\"}",
  })
  void aValueTheShimCannotHoldIsRefusedWholeNamingTheQueue(String bad) throws Exception {
    tree.update(Messages.queues(golden()));
    ArrayNode list = golden();
    ((ObjectNode) list.get(1).get("max")).put("vcores", 7);  // root.heavy, before the bad entry
    ObjectNode light = (ObjectNode) list.get(2);
    light.setAll((ObjectNode) Messages.JSON.readTree(bad));
    list.addObject().put("name", "root.later").put("leaf", true);
    MalformedReplyException e = assertThrows(MalformedReplyException.class, () -> tree.update(Messages.queues(list)));
    assertTrue(e.getMessage().startsWith("queue root.light: "), e.getMessage());
    // nothing of the list was applied, not even the entries before or after the bad one
    assertEquals(null, tree.find("root.later"));
    assertEquals(TWO_TO_53, tree.find("root.heavy").limitFor("vcores", cluster(1, 1)));
    assertEquals(1e-6f, tree.find("root.light").getQueueInfo(false, false).getWeight());
  }

  @Test
  void entriesThatAreNotQueuesAreRefused() throws Exception {
    Consumer<String> refused = json -> assertThrows(MalformedReplyException.class,
        () -> tree.update(Messages.queues(Messages.JSON.readTree(json))));
    refused.accept("{\"name\": \"root\"}");
    refused.accept("[5]");
    refused.accept("[{\"name\": \"a\"}]");
    refused.accept("[{\"name\": 7}]");
    refused.accept("[{\"name\": \"root.x.y\"}]");
    JsonNode fine = Messages.JSON.readTree("[{\"name\": \"root\", \"leaf\": false}, {\"name\": \"root.x\"}]");
    tree.update(Messages.queues(fine));
    assertTrue(tree.find("x").isLeaf());
  }

  private static java.util.List<QueueSettings> entries(String json) throws Exception {
    java.util.List<QueueSettings> out = new java.util.ArrayList<>();
    for (JsonNode spec : Messages.JSON.readTree(json)) {
      out.add(Messages.scheduleReply("{\"v\":" + Messages.VERSION + ",\"ok\":true,\"seq\":1,\"assignments\":[],"
          + "\"placements\":[],\"queues_built\":[" + spec + "]}").queuesBuilt.get(0));
    }
    return out;
  }

  @Test
  void builtQueuesAreAddedOrReplacedAndTheOthersKept() throws Exception {
    tree.update(Messages.queues(Messages.JSON.readTree(
        "[{\"name\": \"root\", \"leaf\": false}, {\"name\": \"root.a\"}, {\"name\": \"root.b\"}]")));
    // root.a gets a child (it is a parent now), root.a.x is new, root.c new under root
    tree.grow(entries("[{\"name\": \"root.a\", \"leaf\": false}, {\"name\": \"root.a.x\", \"weight\": 3.0},"
        + " {\"name\": \"root.c\", \"draining\": true}]"), java.util.Collections.emptyMap());
    assertFalse(tree.find("root.a").isLeaf());
    assertTrue(tree.find("root.a.x").isLeaf());
    assertEquals(3f, tree.find("root.a.x").getQueueInfo(false, false).getWeight());
    assertEquals(tree.find("root.a"), tree.find("root.a.x").getParent());
    assertFalse(tree.find("root.b").isRemoved(), "a queue the reply does not name stays");
    assertTrue(tree.find("root.c").isLeaf());
  }

  @Test
  void aBuiltQueueUnderAParentTheTreeLacksChangesNothingAndSaysWhy() throws Exception {
    tree.update(Messages.queues(Messages.JSON.readTree("[{\"name\": \"root\", \"leaf\": false}]")));
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> tree.grow(entries("[{\"name\": \"root.fine\"}, {\"name\": \"root.lost.x\"}]"),
            java.util.Collections.emptyMap()));
    assertTrue(e.getMessage().contains("root.lost.x under root.lost"), e.getMessage());
    assertEquals(null, tree.find("root.fine"), "nothing of the reply was applied");
  }

  private static ReplyValues.ScheduleReply reply(String fields) throws Exception {
    return Messages.scheduleReply("{\"v\":" + Messages.VERSION + ",\"ok\":true,\"seq\":1,\"assignments\":[],"
        + "\"placements\":[]," + fields + "}");
  }

  /**
   * A leaf named in "queues_created" is the queue its whole entry would make: weight 1, no max,
   * nobody in its own ACLs (its parent's let users in, as YARN's rules say), and its parent's
   * max-container and node labels; the whole entries here are what the core sends for such a
   * leaf in "queues_built" (tests/bridge/test_queue_list.py checks the core's side of that rule).
   */
  @Test
  void aCreatedLeafNamedUnderItsParentIsTheQueueItsWholeEntryMakes() throws Exception {
    String file = "[{\"name\": \"root\", \"leaf\": false},"
        + " {\"name\": \"root.users\", \"leaf\": false, \"weight\": 2.0, \"max\": {\"vcores\": 0.5},"
        + " \"submit_acl\": \"alice,bob ops\", \"admin_acl\": \"carol\","
        + " \"max_container\": {\"memory-mb\": 4096}, \"labels\": [\"gpu\", \"x\"],"
        + " \"default_label\": \"gpu\"},"
        + " {\"name\": \"root.plain\", \"leaf\": false}]";
    QueueTree whole = new QueueTree(new Configuration(), (queue, attempt, container) -> { });
    tree.update(Messages.queues(Messages.JSON.readTree(file)));
    whole.update(Messages.queues(Messages.JSON.readTree(file)));
    String entry = "\"leaf\": true, \"weight\": 1.0, \"max\": {}, \"max_fraction\": null,"
        + " \"submit_acl\": \"\", \"admin_acl\": \"\", \"draining\": false";
    String parented = ", \"max_container\": {\"memory-mb\": 4096}, \"labels\": [\"gpu\", \"x\"],"
        + " \"default_label\": \"gpu\"";
    whole.grow(reply("\"queues_built\": [{\"name\": \"root.users.alice\", " + entry + parented + "},"
        + " {\"name\": \"root.users.dave\", " + entry + parented + "},"
        + " {\"name\": \"root.plain.erin\", " + entry + "}]").queuesBuilt,
        java.util.Collections.emptyMap());
    ReplyValues.ScheduleReply compact = reply(
        "\"queues_created\": {\"root.users\": [\"alice\", \"dave\"], \"root.plain\": [\"erin\"]}");
    assertTrue(compact.queuesBuilt.isEmpty());
    tree.grow(compact.queuesBuilt, compact.queuesCreated);

    Resource cluster = cluster(65536, 64);
    Resource largest = Resource.newInstance(16384, 16);
    for (String path : new String[] {"root.users.alice", "root.users.dave", "root.plain.erin"}) {
      ShimQueue made = tree.find(path);
      ShimQueue sent = whole.find(path);
      assertTrue(made.isLeaf() && !made.isRemoved(), path);
      assertEquals(sent.getParent().getQueueName(), made.getParent().getQueueName(), path);
      assertEquals(sent.weight(), made.weight(), path);
      assertEquals(sent.maxResources(cluster), made.maxResources(cluster), path);
      assertEquals(sent.maxContainer(largest), made.maxContainer(largest), path);
      assertEquals(sent.getAccessibleNodeLabels(), made.getAccessibleNodeLabels(), path);
      assertEquals(sent.getDefaultNodeLabelExpression(), made.getDefaultNodeLabelExpression(), path);
      assertEquals(sent.getQueueInfo(false, false).toString(), made.getQueueInfo(false, false).toString(), path);
      for (String user : new String[] {"alice", "bob", "carol", "dave", "mallory"}) {
        UserGroupInformation ugi = UserGroupInformation.createUserForTesting(user, new String[] {"ops"});
        UserGroupInformation outsider = UserGroupInformation.createUserForTesting(user, new String[0]);
        for (QueueACL acl : QueueACL.values()) {
          assertEquals(sent.hasAccess(acl, ugi), made.hasAccess(acl, ugi), path + " " + user + " " + acl);
          assertEquals(sent.hasAccess(acl, outsider), made.hasAccess(acl, outsider),
              path + " " + user + " " + acl);
        }
      }
    }
    assertEquals(Resource.newInstance(4096, 16), tree.find("root.users.alice").maxContainer(largest));
    assertEquals(new java.util.TreeSet<>(java.util.Arrays.asList("gpu", "x")), tree.find("root.users.alice").getAccessibleNodeLabels());
  }

  @Test
  void leavesCreatedUnderAQueueTheTreeLacksOrHasAsALeafChangeNothingAndSayWhy() throws Exception {
    tree.update(Messages.queues(Messages.JSON.readTree(
        "[{\"name\": \"root\", \"leaf\": false}, {\"name\": \"root.users\", \"leaf\": false},"
            + " {\"name\": \"root.solo\"}]")));
    for (String parent : new String[] {"root.lost", "root.solo"}) {
      ReplyValues.ScheduleReply r = reply("\"queues_built\": [{\"name\": \"root.fine\"}],"
          + " \"queues_created\": {\"root.users\": [\"a\"], \"" + parent + "\": [\"b\"]}");
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> tree.grow(r.queuesBuilt, r.queuesCreated));
      assertTrue(e.getMessage().contains("under " + parent), e.getMessage());
      assertEquals(null, tree.find("root.fine"), "nothing of the reply was applied");
      assertEquals(null, tree.find("root.users.a"), "nothing of the reply was applied");
    }
    // a leaf the same reply makes a parent may take created leaves
    ReplyValues.ScheduleReply r = reply("\"queues_built\": [{\"name\": \"root.solo\", \"leaf\": false}],"
        + " \"queues_created\": {\"root.solo\": [\"b\"]}");
    tree.grow(r.queuesBuilt, r.queuesCreated);
    assertTrue(tree.find("root.solo.b").isLeaf() && !tree.find("root.solo").isLeaf());
  }

  @ParameterizedTest
  @ValueSource(strings = {"[]", "{\"users\": [\"a\"]}", "{\"root.users\": \"a\"}",
      "{\"root.users\": [\"\"]}", "{\"root.users\": [\"a.b\"]}", "{\"root.users\": [7]}"})
  void aQueuesCreatedFieldThatNamesNoQueuesIsRefused(String created) {
    assertThrows(MalformedReplyException.class, () -> reply("\"queues_created\": " + created));
  }

  /**
   * What a restarted RM recovers an app into before the core has given it the tree: the queue its
   * stored name stands for (QueueTree.recoveredPath, by which the shim decides whether to store
   * the placed path), a placeholder under its own parents until the core's tree names it.
   */
  @ParameterizedTest
  @CsvSource({"default, root.default, root", "root.a.b, root.a.b, root.a", "a.b, root.a.b, root.a"})
  void anAppRecoveredBeforeTheTreeIsKnownGoesWhereItsStoredNameStandsFor(String stored,
      String path, String parent) {
    ShimQueue q = tree.findOrPlaceholder(stored);
    assertEquals(path, q.getQueueName());
    assertEquals(path, QueueTree.recoveredPath(stored));
    assertEquals(tree.find(parent), q.getParent());
    assertTrue(q.isRemoved(), "a placeholder takes no submissions");
  }
}

package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Resource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Which AMs asked for while a call was out stop a commit: those of a queue below the
 * assignment's in hierarchical DRF's order (weighted dominant share of the two leaves' ancestors
 * just under their lowest common ancestor), asked since the last collection.
 */
class LateAmAsksTest {
  private static final Resource CLUSTER = Resource.newInstance(100_000, 100);
  private static final List<String> LEAVES = java.util.Arrays.asList("root.a", "root.b", "root.p.x", "root.p.y");
  private final QueueTree tree = new QueueTree(new Configuration(), (queue, attempt, container) -> { });
  private final LateAmAsks late = new LateAmAsks();

  @BeforeEach
  void queues() throws Exception {
    tree.update(Messages.queues(Messages.JSON.readTree("[{\"name\": \"root\", \"leaf\": false},"
        + " {\"name\": \"root.a\"}, {\"name\": \"root.b\", \"weight\": 2.0},"
        + " {\"name\": \"root.p\", \"leaf\": false}, {\"name\": \"root.p.x\"}, {\"name\": \"root.p.y\"}]")));
  }

  private ShimQueue q(String path) {
    return tree.find(path);
  }

  @Test
  void anAmAskedSinceTheCollectionByALowerQueueStopsACommitToAHigherOne() {
    q("root.a").charge(Resource.newInstance(30_000, 10), 1);  // a: 0.30
    q("root.b").charge(Resource.newInstance(10_000, 40), 1);  // b: 0.40 / 2 = 0.20
    assertFalse(late.anyBelow(q("root.a"), CLUSTER), "no AM asked: nothing stops a commit");
    late.asked(q("root.b"));
    assertTrue(late.anyBelow(q("root.a"), CLUSTER));
    assertFalse(late.anyBelow(q("root.b"), CLUSTER), "its own AM does not stop b");
    late.collecting();
    assertFalse(late.anyBelow(q("root.a"), CLUSTER), "collected: the core has seen it");
  }

  @Test
  void anAmOfAHigherQueueStopsNothing() {
    q("root.a").charge(Resource.newInstance(10_000, 10), 1);  // a: 0.10
    q("root.b").charge(Resource.newInstance(10_000, 40), 1);  // b: 0.20
    late.asked(q("root.b"));
    assertFalse(late.anyBelow(q("root.a"), CLUSTER));
  }

  @Test
  void queuesUnderOneParentCompareWithEachOtherAndOthersWithTheParent() {
    q("root.a").charge(Resource.newInstance(0, 20), 1);       // a: 0.20
    q("root.p.x").charge(Resource.newInstance(0, 5), 1);      // x: 0.05
    q("root.p.y").charge(Resource.newInstance(0, 25), 1);     // y: 0.25, p: 0.30
    assertTrue(LateAmAsks.below(q("root.p.x"), q("root.p.y"), CLUSTER), "x below its sibling y");
    assertFalse(LateAmAsks.below(q("root.p.x"), q("root.a"), CLUSTER),
        "x is not below a: p, which holds it, is above a");
    assertTrue(LateAmAsks.below(q("root.a"), q("root.p.x"), CLUSTER));
  }

  @Test
  void theOrderIsHierarchicalDrfsForAnyUsage() {
    Random random = new Random(30);
    for (int round = 0; round < 200; round++) {
      Map<String, long[]> used = new HashMap<>();
      for (String leaf : LEAVES) {
        long[] u = {random.nextInt(40_000), random.nextInt(40)};
        used.put(leaf, u);
        q(leaf).charge(Resource.newInstance(u[0], (int) u[1]), 1);
      }
      for (String a : LEAVES) {
        for (String b : LEAVES) {
          if (!a.equals(b)) {
            assertEquals(oracleBelow(a, b, used), LateAmAsks.below(q(a), q(b), CLUSTER),
                a + " below " + b + " with " + describe(used));
          }
        }
      }
      for (String leaf : LEAVES) {
        long[] u = used.get(leaf);
        q(leaf).charge(Resource.newInstance(u[0], (int) u[1]), -1);
      }
    }
  }

  /** The two queues under the lowest common ancestor, each's leaves' usage summed, by weight. */
  private static boolean oracleBelow(String a, String b, Map<String, long[]> used) {
    String[] pa = a.split("\\.");
    String[] pb = b.split("\\.");
    int i = 0;
    while (pa[i].equals(pb[i])) {
      i++;
    }
    String sideA = String.join(".", java.util.Arrays.copyOf(pa, i + 1));
    String sideB = String.join(".", java.util.Arrays.copyOf(pb, i + 1));
    return share(sideA, used) < share(sideB, used);
  }

  private static double share(String queue, Map<String, long[]> used) {
    long mem = 0;
    long cpu = 0;
    for (Map.Entry<String, long[]> e : used.entrySet()) {
      if (e.getKey().equals(queue) || e.getKey().startsWith(queue + ".")) {
        mem += e.getValue()[0];
        cpu += e.getValue()[1];
      }
    }
    double weight = queue.equals("root.b") ? 2.0 : 1.0;
    return Math.max(mem / 100_000.0, cpu / 100.0) / weight;
  }

  private static String describe(Map<String, long[]> used) {
    StringBuilder s = new StringBuilder();
    used.forEach((k, v) -> s.append(k).append('=').append(v[0]).append('/').append(v[1]).append(' '));
    return s.toString();
  }
}

package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** A schedule call offers a bounded number of nodes, and a round of calls offers every node once. */
class NodeRotationTest {
  private static final List<Integer> NODES =
      IntStream.range(0, 10).boxed().collect(Collectors.toList());

  private static Set<Integer> set(Integer... full) {
    return new HashSet<>(Arrays.asList(full));
  }

  private static List<Integer> call(NodeRotation rotation, List<Integer> nodes, Set<Integer> full) {
    List<Integer> offered = new ArrayList<>();
    rotation.offer(nodes, n -> !full.contains(n) && offered.add(n));
    return offered;
  }

  @Test
  void aRoundOffersEveryNodeWithRoomOnceInCallsOfAtMostTheBound() {
    NodeRotation rotation = new NodeRotation(3);
    Set<Integer> full = set(1, 5);
    List<Integer> seen = new ArrayList<>();
    int calls = 0;
    do {
      List<Integer> offered = call(rotation, NODES, full);
      assertTrue(offered.size() <= 3, "a call offered " + offered);
      seen.addAll(offered);
      calls++;
    } while (rotation.unfinished());
    assertEquals(Arrays.asList(0, 2, 3, 4, 6, 7, 8, 9), seen);
    assertEquals(3, calls);
  }

  @Test
  void eachCallGoesOnWhereTheLastStoppedAndANewRoundStartsOnceAllWereLookedAt() {
    NodeRotation rotation = new NodeRotation(4);
    assertEquals(Arrays.asList(0, 1, 2, 3), call(rotation, NODES, set()));
    assertTrue(rotation.unfinished());
    assertEquals(Arrays.asList(6, 7, 8, 9), call(rotation, NODES, set(4, 5)));
    assertFalse(rotation.unfinished(), "the round looked at all ten");
    assertEquals(Arrays.asList(0, 1, 2, 3), call(rotation, NODES, set()));
  }

  @Test
  void aClusterThatShrankOrHasNoNodesStartsAFreshRound() {
    NodeRotation rotation = new NodeRotation(2);
    call(rotation, NODES, set());
    assertEquals(Arrays.asList(2, 3), call(rotation, NODES.subList(0, 5), set()));
    assertEquals(Collections.<Integer>emptyList(), call(rotation, Collections.<Integer>emptyList(), set()));
    assertFalse(rotation.unfinished());
  }

  @Test
  void aBoundBelowOneIsRefusedNamingTheSetting() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new NodeRotation(0));
    assertTrue(e.getMessage().contains(ShimConf.MAX_NODES_PER_CALL), e.getMessage());
  }
}

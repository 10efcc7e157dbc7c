package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.junit.jupiter.api.Test;

class AskMirrorTest {
  private final AskMirror mirror = new AskMirror();
  private List<RequestValues.AskRow> asks;
  private List<Long> counts;
  private List<Long> amAsks;

  private static ResourceRequest rr(String where, int count, int vcores) {
    return ResourceRequest.newInstance(Priority.newInstance(1), where,
        Resource.newInstance(1024, vcores), count);
  }

  private static ResourceRequest rr(String where, int count) {
    return rr(where, count, 2);
  }

  private void diff(String app, List<ResourceRequest> current) {
    diff(app, current, null);
  }

  private void diff(String app, List<ResourceRequest> current, Integer amPriority) {
    asks = new ArrayList<>();
    counts = new ArrayList<>();
    amAsks = new ArrayList<>();
    mirror.diff(app, current, amPriority, asks, counts, amAsks);
  }

  @Test
  void theAmAskIsNamedWhileTheAttemptWaitsForItsAmAndSentAgainInFullWhenItNoLongerIsOne() {
    diff("app_1", Arrays.asList(rr("*", 1), rr("/rack1", 1)), 1);
    assertEquals(2, asks.size());
    assertEquals(Arrays.asList(asks.get(0).id, asks.get(1).id), amAsks);
    long amId = asks.get(0).id;
    diff("app_1", Arrays.asList(rr("*", 0), rr("/rack1", 0)), 1);
    assertTrue(asks.isEmpty() && amAsks.isEmpty());
    assertEquals(amId, counts.get(0));
    // The AM runs; the same key now asks for tasks: a new ask, not an AM one.
    diff("app_1", Arrays.asList(rr("*", 4), rr("/rack1", 4)), null);
    assertEquals(2, asks.size());
    assertTrue(amAsks.isEmpty());
    assertNotEquals(amId, asks.get(0).id);
    assertEquals(4, asks.get(0).count);
    // An attempt waiting for its AM at priority 0 asks nothing else as an AM.
    diff("app_2", Collections.singletonList(rr("*", 2)), 0);
    assertTrue(amAsks.isEmpty());
  }

  @Test
  void sendsAsksInFullOnceThenCountsByIdAndZeroForVanishedOnes() {
    diff("app_1", Arrays.asList(rr("*", 3), rr("/rack1", 3)));
    assertEquals(2, asks.size());
    assertEquals(0, counts.size());
    RequestValues.AskRow any = asks.get(0);
    assertEquals(3, any.count);
    assertEquals("app_1", any.app);
    assertEquals("*", any.location);
    assertEquals(1024, any.amounts[0]);  // memory-mb, vcores, ...
    assertEquals(2, any.amounts[1]);
    long anyId = any.id;
    long rackId = asks.get(1).id;
    assertTrue(mirror.hasOutstanding());
    assertNotEquals(anyId, rackId);

    diff("app_1", Arrays.asList(rr("*", 3), rr("/rack1", 3)));
    assertEquals(0, asks.size() + counts.size(), "nothing changed, nothing to send");

    diff("app_1", Collections.singletonList(rr("*", 1)));
    assertEquals(0, asks.size());
    assertEquals(Arrays.asList(anyId, 1L, rackId, 0L), counts);

    diff("app_1", Arrays.asList(rr("*", 1), rr("/rack1", 2)));
    assertEquals(Arrays.asList(rackId, 2L), counts, "a withdrawn ask that returns keeps its id");

    diff("app_1", Arrays.asList(rr("*", 1, 4), rr("/rack1", 2)));
    assertEquals(1, asks.size(), "a new shape is a new ask for the core");
    assertEquals(0, counts.size());
    assertEquals(4, asks.get(0).amounts[1]);
    assertNotEquals(anyId, asks.get(0).id);

    mirror.forget("app_1");
    diff("app_1", Collections.singletonList(rr("*", 1)));
    assertEquals(1, asks.size());
    assertNotEquals(anyId, asks.get(0).id, "ids are never reused");
  }

  @Test
  void outstandingCountsAsksAnywhereThatStillWantContainers() {
    diff("app_1", Arrays.asList(rr("*", 2), rr("/rack1", 2)));
    diff("app_2", Collections.singletonList(rr("*", 1)));
    assertTrue(mirror.hasOutstanding());
    diff("app_1", Arrays.asList(rr("*", 0), rr("/rack1", 2)));
    assertTrue(mirror.hasOutstanding(), "app_2 still waits");
    mirror.forget("app_2");
    assertFalse(mirror.hasOutstanding(), "a rack ask without its ask anywhere wants nothing");
    diff("app_1", Collections.singletonList(rr("*", 3)));
    assertTrue(mirror.hasOutstanding());
    mirror.clear();
    assertFalse(mirror.hasOutstanding());
  }

  private static ResourceRequest rr(int priority, int count, int memory, int vcores) {
    return ResourceRequest.newInstance(Priority.newInstance(priority), "*",
        Resource.newInstance(memory, vcores), count);
  }

  /** Whether a node with `memory` MB and `vcores` free is one a schedule call lists. */
  private boolean listed(long memory, long vcores) {
    for (long[] floor : mirror.wantedFloors()) {
      if (floor[0] <= memory && floor[1] <= vcores) {
        return true;
      }
    }
    return false;
  }

  @Test
  void theFloorsAreTheWantedShapesNoOtherFitsInsideAndFollowTheAsks() {
    assertTrue(mirror.wantedFloors().isEmpty(), "no ask: no node is listed");
    diff("app_1", Arrays.asList(rr(1, 2, 4096, 1), rr(2, 1, 1024, 4)));
    assertEquals(2, mirror.wantedFloors().size());
    assertFalse(listed(2048, 2), "room for neither ask, though above their componentwise least");
    assertTrue(listed(4096, 1) && listed(1024, 4));
    diff("app_2", Collections.singletonList(rr(1, 3, 8192, 8)));
    assertEquals(2, mirror.wantedFloors().size(), "8192/8 fits only where 4096/1 does");
    // The ask of one shape is served: the other shapes decide.
    diff("app_1", Arrays.asList(rr(1, 2, 4096, 1), rr(2, 0, 1024, 4)));
    assertFalse(listed(1024, 4));
    assertTrue(listed(4096, 1));
    // A count change keeps the shape; a shape change replaces it.
    diff("app_1", Arrays.asList(rr(1, 1, 4096, 1), rr(2, 0, 1024, 4)));
    assertTrue(listed(4096, 1));
    diff("app_1", Arrays.asList(rr(1, 1, 4096, 3), rr(2, 0, 1024, 4)));
    assertFalse(listed(4096, 2));
    assertTrue(listed(4096, 3));
    // A smaller ask coming lowers the floor at once; its app going away raises it again.
    diff("app_3", Collections.singletonList(rr(5, 1, 512, 1)));
    assertTrue(listed(512, 1));
    mirror.forget("app_3");
    assertFalse(listed(512, 1));
    // Withdrawn (vanished from YARN's list) counts as served.
    diff("app_1", Collections.<ResourceRequest>emptyList());
    assertFalse(listed(4096, 3));
    assertTrue(listed(8192, 8));
    diff("app_2", Collections.singletonList(rr(1, 0, 8192, 8)));
    assertTrue(mirror.wantedFloors().isEmpty(), "nothing wants containers: no node is listed");
    diff("app_1", Collections.singletonList(rr(1, 1, 3072, 2)));
    assertTrue(listed(3072, 2));
    mirror.clear();
    assertTrue(mirror.wantedFloors().isEmpty());
  }

  @Test
  void aNodeIsListedExactlyWhenItsRoomFitsSomeAskThatStillWantsContainers() {
    java.util.Random random = new java.util.Random(17);
    int[][] palette = {{1024, 1}, {2048, 1}, {1024, 4}, {4096, 2}, {8192, 8}, {3072, 3}};
    java.util.Map<String, List<int[]>> wanted = new java.util.HashMap<>();  // the oracle's asks
    for (int round = 0; round < 300; round++) {
      String app = "app_" + random.nextInt(4);
      List<ResourceRequest> asks = new ArrayList<>();
      List<int[]> wants = new ArrayList<>();
      int n = random.nextInt(3);
      for (int priority = 1; priority <= n; priority++) {
        int[] shape = palette[random.nextInt(palette.length)];
        int count = random.nextInt(3);
        asks.add(rr(priority, count, shape[0], shape[1]));
        if (count > 0) {
          wants.add(shape);
        }
      }
      if (random.nextInt(10) == 0) {
        mirror.forget(app);
        wanted.remove(app);
      } else {
        diff(app, asks);
        wanted.put(app, wants);
      }
      for (int probe = 0; probe < 20; probe++) {
        int memory = 1024 * random.nextInt(9);
        int vcores = random.nextInt(9);
        boolean fits = false;
        for (List<int[]> shapes : wanted.values()) {
          for (int[] shape : shapes) {
            fits |= shape[0] <= memory && shape[1] <= vcores;
          }
        }
        assertEquals(fits, listed(memory, vcores), "round " + round + ": " + memory + " MB, "
            + vcores + " vcores");
      }
    }
  }

  @Test
  void beyondTheMostFloorsTheirComponentwiseLeastDropsNoNodeAnAskFits() {
    List<ResourceRequest> asks = new ArrayList<>();
    for (int i = 1; i <= AskMirror.MAX_FLOORS + 4; i++) {  // none fits inside another
      asks.add(rr(i, 1, 1024 * i, 41 - i));
    }
    diff("app_1", asks);
    assertEquals(1, mirror.wantedFloors().size());
    for (ResourceRequest a : asks) {
      assertTrue(listed(a.getCapability().getMemorySize(), a.getCapability().getVirtualCores()));
    }
    assertFalse(listed(1023, 40));
  }
}

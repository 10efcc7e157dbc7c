package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
  private List<Messages.AskRow> asks;
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
    Messages.AskRow any = asks.get(0);
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

  private long[] smallest() {
    long[] s = mirror.smallestWanted();
    return s == null ? null : Arrays.copyOf(s, 2);  // memory-mb, vcores
  }

  @Test
  void theSmallestWantedAskIsComponentwiseOverAsksThatStillWantContainers() {
    assertEquals(null, mirror.smallestWanted(), "no ask: nothing to fit");
    diff("app_1", Arrays.asList(rr(1, 2, 4096, 1), rr(2, 1, 1024, 4)));
    assertArrayEquals(new long[] {1024, 1}, smallest(), "each resource's own smallest");
    diff("app_2", Collections.singletonList(rr(1, 3, 2048, 2)));
    assertArrayEquals(new long[] {1024, 1}, smallest());
    // The ask holding the smallest memory is served: memory's smallest rises to the next ask's.
    diff("app_1", Arrays.asList(rr(1, 2, 4096, 1), rr(2, 0, 1024, 4)));
    assertArrayEquals(new long[] {2048, 1}, smallest());
    // A count change of the same shape keeps it; a shape change replaces it.
    diff("app_1", Arrays.asList(rr(1, 1, 4096, 1), rr(2, 0, 1024, 4)));
    assertArrayEquals(new long[] {2048, 1}, smallest());
    diff("app_1", Arrays.asList(rr(1, 1, 4096, 3), rr(2, 0, 1024, 4)));
    assertArrayEquals(new long[] {2048, 2}, smallest());
    // A smaller ask coming lowers it at once; its app going away raises it again.
    diff("app_3", Collections.singletonList(rr(5, 1, 512, 1)));
    assertArrayEquals(new long[] {512, 1}, smallest());
    mirror.forget("app_3");
    assertArrayEquals(new long[] {2048, 2}, smallest());
    // Withdrawn (vanished from YARN's list) counts as served.
    diff("app_2", Collections.<ResourceRequest>emptyList());
    assertArrayEquals(new long[] {4096, 3}, smallest());
    diff("app_1", Arrays.asList(rr(1, 0, 4096, 3), rr(2, 0, 1024, 4)));
    assertEquals(null, mirror.smallestWanted(), "nothing wants containers: no node needs listing");
    diff("app_1", Collections.singletonList(rr(1, 1, 3072, 2)));
    assertArrayEquals(new long[] {3072, 2}, smallest());
    mirror.clear();
    assertEquals(null, mirror.smallestWanted());
  }

  @Test
  void twoAppsAskingTheSameShapeKeepItUntilBothAreServed() {
    diff("app_1", Collections.singletonList(rr(1, 1, 1024, 1)));
    diff("app_2", Arrays.asList(rr(1, 1, 1024, 1), rr(2, 1, 8192, 8)));
    diff("app_1", Collections.singletonList(rr(1, 0, 1024, 1)));
    assertArrayEquals(new long[] {1024, 1}, smallest(), "app_2 still asks for it");
    diff("app_2", Arrays.asList(rr(1, 0, 1024, 1), rr(2, 1, 8192, 8)));
    assertArrayEquals(new long[] {8192, 8}, smallest());
  }
}

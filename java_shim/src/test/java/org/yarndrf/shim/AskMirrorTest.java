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
}

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

/**
 * A schedule call offers each node once per heartbeat, longest-waiting first and at most a bound
 * per call; between heartbeats (yarn-drf.scheduler.offer-between-heartbeats) a round of calls
 * offers every node once.
 */
class NodeOffersTest {
  private static final List<Integer> NODES =
      IntStream.range(0, 10).boxed().collect(Collectors.toList());

  private static Set<Integer> set(Integer... full) {
    return new HashSet<>(Arrays.asList(full));
  }

  private static List<Integer> call(NodeOffers<Integer> offers, Set<Integer> full) {
    List<Integer> offered = new ArrayList<>();
    offers.offer(n -> !full.contains(n) && offered.add(n));
    return offered;
  }

  @Test
  void aNodeIsOfferedOnlyAfterItsHeartbeatAndOnceHoweverManyHeartbeatsCame() {
    NodeOffers<Integer> offers = new NodeOffers<>(10);
    assertEquals(Collections.emptyList(), call(offers, set()), "no node heartbeated yet");
    offers.heartbeat(4);
    offers.heartbeat(2);
    offers.heartbeat(4);
    assertTrue(offers.waiting());
    assertEquals(Arrays.asList(4, 2), call(offers, set()), "in heartbeat order, each once");
    assertFalse(offers.waiting());
    assertEquals(Collections.emptyList(), call(offers, set()), "no heartbeat since");
  }

  @Test
  void aCallListsOnlyTheNewNodesThatMakeUpTheBoundWithTheNodesTheCoreGoesOnWith() {
    NodeOffers<Integer> offers = new NodeOffers<>(6);
    NODES.forEach(offers::heartbeat);
    offers.coreCarries(4);
    assertEquals(Arrays.asList(0, 1), call(offers, set()), "the bound of 6 less the core's 4");
    offers.coreCarries(9);
    assertEquals(Collections.emptyList(), call(offers, set()), "the core has more than the bound");
    assertTrue(offers.waiting(), "a node not looked at keeps its turn");
    offers.coreCarries(0);
    assertEquals(Arrays.asList(2, 3, 4, 5, 6, 7), call(offers, set()), "longest-waiting first");
  }

  @Test
  void theLatestDueHeartbeatIsTheNewestOfTheNodesStillWaiting() {
    NodeOffers<Integer> offers = new NodeOffers<>(1);
    assertEquals(Long.MAX_VALUE, offers.latestDue(), "none waits");
    offers.heartbeat(3);
    offers.heartbeat(5);
    offers.heartbeat(3);
    assertEquals(3, offers.latestDue(), "3's second heartbeat");
    assertEquals(Arrays.asList(3), call(offers, set()), "3 kept its turn");
    assertEquals(2, offers.latestDue(), "the newest was offered: 5's");
    offers.heartbeat(7);
    assertEquals(4, offers.latestDue());
  }

  @Test
  void aNodeWithoutRoomIsPassedOverUntilItsNextHeartbeat() {
    NodeOffers<Integer> offers = new NodeOffers<>(10);
    offers.heartbeat(1);
    offers.heartbeat(2);
    assertEquals(Arrays.asList(2), call(offers, set(1)));
    assertEquals(Collections.emptyList(), call(offers, set()), "1 had its turn");
    offers.heartbeat(1);
    assertEquals(Arrays.asList(1), call(offers, set()));
  }

  @Test
  void nodesBeyondTheBoundKeepTheirHeartbeatForTheNextCall() {
    NodeOffers<Integer> offers = new NodeOffers<>(2);
    NODES.forEach(offers::heartbeat);
    assertEquals(Arrays.asList(0, 2), call(offers, set(1)));
    assertTrue(offers.waiting());
    offers.heartbeat(0);  // it waits behind those that heartbeated before it
    assertEquals(Arrays.asList(3, 4), call(offers, set()));
    assertEquals(Arrays.asList(5, 6), call(offers, set()));
    assertEquals(Arrays.asList(7, 8), call(offers, set()));
    assertEquals(Arrays.asList(9, 0), call(offers, set()));
    assertFalse(offers.waiting());
  }

  @Test
  void aRemovedNodeOrACallThatCouldPlaceNothingLeavesNoNodeWaiting() {
    NodeOffers<Integer> offers = new NodeOffers<>(10);
    offers.heartbeat(1);
    offers.removed(1);
    assertFalse(offers.waiting());
    offers.heartbeat(2);
    offers.heartbeat(3);
    offers.passAll();
    assertFalse(offers.waiting());
    assertEquals(Collections.emptyList(), call(offers, set()));
  }

  @Test
  void betweenHeartbeatsARoundOffersEveryNodeWithRoomOnceInCallsOfAtMostTheBound() {
    NodeOffers<Integer> offers = new NodeOffers<>(3);
    Set<Integer> full = set(1, 5);
    List<Integer> seen = new ArrayList<>();
    int calls = 0;
    do {
      offers.everyNode(NODES);
      List<Integer> offered = call(offers, full);
      assertTrue(offered.size() <= 3, "a call offered " + offered);
      seen.addAll(offered);
      calls++;
    } while (offers.waiting());
    assertEquals(Arrays.asList(0, 2, 3, 4, 6, 7, 8, 9), seen);
    assertEquals(3, calls);
    offers.everyNode(NODES);
    assertEquals(Arrays.asList(0, 1, 2), call(offers, set()), "the next round starts");
  }

  @Test
  void aBoundBelowOneIsRefusedNamingTheSetting() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new NodeOffers<Integer>(0));
    assertTrue(e.getMessage().contains(ShimConf.MAX_NODES_PER_CALL), e.getMessage());
  }

  @Test
  void slowCallsHalveTheBoundFastOnesGrowItBackAndNoNodeIsLostOrOfferedTwice() {
    NodeOffers<Integer> offers = new NodeOffers<>(64);
    java.util.Random random = new java.util.Random(30);
    List<Integer> offered = new ArrayList<>();
    int heartbeats = 0;
    boolean shrank = false;
    for (int call = 0; call < 400; call++) {
      for (int beat = random.nextInt(40); beat > 0; beat--) {
        offers.heartbeat(heartbeats++);  // each node heartbeats once: its own id
      }
      int before = offers.perCall();
      List<Integer> now = call(offers, set());
      assertTrue(now.size() <= before, now.size() + " nodes offered with a bound of " + before);
      offered.addAll(now);
      long ms = random.nextInt(3) == 0 ? 300 : random.nextInt(250);
      offers.callTook(ms, 250);
      if (ms > 250) {
        assertEquals(Math.max(4, before / 2), offers.perCall(), "a slow call halves the bound");
        shrank |= offers.perCall() < before;
      } else if (2 * ms < 250) {
        assertEquals(Math.min(64, before + Math.max(1, before / 2)), offers.perCall(), "grows by half");
      } else {
        assertEquals(before, offers.perCall(), "a call between half the budget and the budget");
      }
      assertTrue(offers.perCall() >= 4 && offers.perCall() <= 64, "between a sixteenth and the bound");
    }
    while (offers.waiting()) {
      offered.addAll(call(offers, set()));
    }
    assertTrue(shrank);
    assertEquals(IntStream.range(0, heartbeats).boxed().collect(Collectors.toList()), offered,
        "every heartbeated node offered once, in heartbeat order, whatever the bounds");
  }

  @Test
  void aCallOffersNoMoreNodesThanTheBoundOfTheMoment() {
    NodeOffers<Integer> offers = new NodeOffers<>(16);
    NODES.forEach(offers::heartbeat);
    offers.callTook(1000, 250);
    assertEquals(8, offers.perCall());
    assertEquals(Arrays.asList(0, 1, 2, 3, 4, 5, 6, 7), call(offers, set()));
    offers.callTook(10, 250);
    assertEquals(12, offers.perCall());
  }
}

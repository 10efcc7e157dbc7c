package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Commits give back at most max-deferred-share of the assignments behind late AMs. */
class DeferralBudgetTest {
  /** Every assignment goes to a queue above a late AM: how many of `n` are given back. */
  private static int givenBack(DeferralBudget b, int n) {
    int deferred = 0;
    for (int i = 0; i < n; i++) {
      if (b.take()) {
        deferred++;
      } else {
        b.committed();
      }
    }
    return deferred;
  }

  @Test
  void shareOneGivesBackEveryAssignmentAndZeroNone() {
    assertEquals(10_000, givenBack(new DeferralBudget(1), 10_000));
    assertEquals(0, givenBack(new DeferralBudget(0), 10_000));
  }

  @Test
  void aShareBoundsTheAssignmentsGivenBackToItsPartOfAllPlusOneReply() {
    for (double share : new double[] {0.1, 0.25, 0.5}) {
      int n = 10_000;
      int deferred = givenBack(new DeferralBudget(share), n);
      assertTrue(deferred <= share * n + DeferralBudget.MOST_KEPT, share + ": " + deferred);
      assertTrue(deferred >= share * n - 1, share + ": " + deferred);
    }
  }

  @Test
  void aQuietSpellSavesAtMostOneReplysWorth() {
    DeferralBudget b = new DeferralBudget(0.5);
    givenBack(b, 1_000);  // spend down to the steady state
    for (int i = 0; i < 1_000; i++) {
      b.committed();  // no late AM for a long while
    }
    int burst = 0;
    while (b.take()) {
      burst++;
    }
    assertEquals((int) DeferralBudget.MOST_KEPT, burst);
    assertFalse(b.take());
  }

  @Test
  void aShareOutsideZeroToOneIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new DeferralBudget(1.5));
    assertThrows(IllegalArgumentException.class, () -> new DeferralBudget(-0.1));
  }
}

package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class LoopClockTest {
  private static long sum(long[] from, long[] to) {
    long s = 0;
    for (int i = 0; i < to.length; i++) {
      s += to[i] - from[i];
    }
    return s;
  }

  @Test
  void twoReadsSplitTheTimeBetweenThemAmongThePartsWithNothingLeftOver() throws InterruptedException {
    LoopClock clock = new LoopClock();
    long before = System.nanoTime();
    long[] a = clock.read();
    long afterA = System.nanoTime();
    for (LoopClock.Part p : LoopClock.Part.values()) {
      clock.enter(p);
      Thread.sleep(1);
    }
    long beforeB = System.nanoTime();
    long[] b = clock.read();
    long after = System.nanoTime();
    long parts = sum(a, b);
    assertTrue(parts >= beforeB - afterA && parts <= after - before,
        parts + " ns in parts, outside the reads' bounds " + (beforeB - afterA) + ".." + (after - before));
    for (LoopClock.Part p : LoopClock.Part.values()) {
      assertTrue(b[p.ordinal()] - a[p.ordinal()] >= 1_000_000, p + " was entered for a millisecond: " + Arrays.toString(b));
    }
  }

  @Test
  void aReadCountsThePartUnderWayUpToNowAndTheNextBoundaryKeepsIt() throws InterruptedException {
    LoopClock clock = new LoopClock();
    clock.enter(LoopClock.Part.CALL);
    Thread.sleep(2);
    long[] during = clock.read();
    clock.enter(LoopClock.Part.COMMIT);
    long[] after = clock.read();
    int call = LoopClock.Part.CALL.ordinal();
    assertTrue(during[call] >= 2_000_000, "the call under way counted: " + during[call]);
    assertTrue(after[call] >= during[call], "nothing taken back at the boundary");
    assertEquals(0, during[LoopClock.Part.COMMIT.ordinal()]);
  }
}

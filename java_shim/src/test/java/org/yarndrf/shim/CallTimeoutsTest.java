package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * A schedule call's timeout follows the calls measured: the configured one doubled until it
 * reaches 3 x p90 of the recent calls, capped.
 */
class CallTimeoutsTest {
  @Test
  void theConfiguredTimeoutHoldsUntilEnoughCallsWereMeasured() {
    CallTimeouts t = new CallTimeouts(250, () -> 5000);
    for (int i = 1; i < CallTimeouts.MIN_SAMPLES; i++) {
      t.took(1000);
      assertEquals(250, t.timeoutMs(), "after " + i + " calls");
    }
    t.took(1000);
    assertEquals(4000, t.timeoutMs(), "250 doubled until it reaches 3 x 1000");
  }

  @Test
  void slowCallsRaiseTheTimeoutToThreeTimesTheirNinetiethPercentileAndFastOnesLowerItAgain() {
    CallTimeouts t = new CallTimeouts(250, () -> 5000);
    for (int i = 1; i <= 20; i++) {
      t.took(i * 10);  // 10 .. 200 ms: p90 is 180, 3 x p90 540
    }
    assertEquals(1000, t.timeoutMs());
    t.took(110);
    t.took(110);  // p90 of 22 calls: the 20th, still 180 ms
    assertEquals(1000, t.timeoutMs());
    for (int i = 0; i < CallTimeouts.WINDOW; i++) {
      t.took(20);
    }
    assertEquals(250, t.timeoutMs(), "never below the configured timeout");
  }

  @Test
  void oneSlowCallInTenDoesNotMoveItButTwoDo() {
    CallTimeouts t = new CallTimeouts(250, () -> 5000);
    for (int i = 0; i < 9; i++) {
      t.took(50);
    }
    t.took(4000);
    assertEquals(250, t.timeoutMs(), "p90 of ten calls is the ninth");
    t.took(4000);
    t.took(50);
    assertEquals(5000, t.timeoutMs(), "at most the cap");
  }

  @Test
  void retriesDoubleTheWaitUpToTheCapWhichIsNeverBelowTheConfiguredTimeout() {
    CallTimeouts t = new CallTimeouts(250, () -> 1250);
    assertEquals(250, t.forAttempt(0));
    assertEquals(500, t.forAttempt(1));
    assertEquals(1000, t.forAttempt(2));
    assertEquals(1000, t.forAttempt(3), "no attempt beyond the retries waits longer");
    CallTimeouts tight = new CallTimeouts(2000, () -> 1000);
    assertEquals(2000, tight.forAttempt(2));
  }
}

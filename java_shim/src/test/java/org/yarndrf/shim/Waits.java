package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.BooleanSupplier;

/**
 * The shim tests' one wait: polls a condition until it holds. The budget is long (a minute)
 * because these machines are shared and often loaded far beyond their two cores; it costs nothing
 * when the condition comes true, and a failure still names what never happened.
 */
final class Waits {
  private static final long BUDGET_MS = 60_000;
  private static final long POLL_MS = 10;

  private Waits() {
  }

  static void until(BooleanSupplier done, String what) throws InterruptedException {
    long deadline = System.nanoTime() + BUDGET_MS * 1_000_000;
    while (!done.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(POLL_MS);
    }
    assertTrue(done.getAsBoolean(), what + " (not within " + BUDGET_MS / 1000 + " s)");
  }
}

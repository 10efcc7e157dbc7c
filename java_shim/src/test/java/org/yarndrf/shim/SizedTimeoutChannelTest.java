package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.yarndrf.shim.bridge.CoreChannel;

class SizedTimeoutChannelTest {
  /** Records the timeout of every connection the sized channel opens. */
  private final List<Integer> opened = new ArrayList<>();

  private SizedTimeoutChannel channel() {
    return new SizedTimeoutChannel(ms -> {
      opened.add(ms);
      return new CoreChannel() {
        @Override
        public String call(String message) {
          return message;
        }

        @Override
        public void close() {
        }
      };
    }, 1000, 50);
  }

  @Test
  void theTimeoutIsTheBasePlusTheAllowancePerThousandItems() {
    SizedTimeoutChannel c = channel();
    assertEquals(1000, c.timeoutFor(0));
    assertEquals(1050, c.timeoutFor(1));
    assertEquals(1050, c.timeoutFor(1000));
    // 10,000 nodes, 5,000 apps, 100,000 containers, 5,000 asks
    assertEquals(1000 + 120 * 50, c.timeoutFor(120_000));
    assertEquals(Integer.MAX_VALUE, c.timeoutFor(Long.MAX_VALUE / 2));
  }

  @Test
  void aConnectionReopensOnlyWhenTheSnapshotOutgrowsItsTimeoutOrShrinksBelowHalf() throws Exception {
    SizedTimeoutChannel c = channel();
    c.call("reload");
    c.sizeFor(120_000);
    c.call("snapshot");
    c.sizeFor(119_000);  // a few apps fewer: the open connection's 7 s still covers it
    c.call("snapshot");
    c.sizeFor(121_000);
    c.call("snapshot");
    c.sizeFor(10);
    c.call("snapshot");
    assertEquals(Arrays.asList(1000, 7000, 7050, 1050), opened);
  }
}

package org.yarndrf.shim;

import java.util.function.IntFunction;
import org.yarndrf.shim.bridge.CoreChannel;
import org.yarndrf.shim.bridge.CoreUnavailableException;

/**
 * The channel of snapshots and reloads, whose read timeout follows the size of the cluster: the
 * core's work on a snapshot grows with its nodes, apps, containers and asks, so a fixed timeout
 * either fails large clusters for good or waits needlessly long on small ones. The timeout is
 * {@code baseMs} plus {@code perThousandMs} for every thousand items of the last snapshot
 * (yarn-drf.bridge.snapshot-timeout-ms and yarn-drf.bridge.snapshot-timeout-per-1000-items-ms).
 * A connection's timeout is fixed when it opens, so a new one opens when the wanted timeout
 * grows, or shrinks below half: not for every app that comes or goes. Schedule calls use one too,
 * with the timeout {@link CallTimeouts} sets before each attempt ({@link #useTimeoutMs}).
 */
final class SizedTimeoutChannel implements CoreChannel {
  private final IntFunction<CoreChannel> open;
  private final int baseMs;
  private final int perThousandMs;
  private int wantedMs;
  private CoreChannel channel;
  private int channelMs;

  /** @param open a channel to the core with the given read timeout in milliseconds */
  SizedTimeoutChannel(IntFunction<CoreChannel> open, int baseMs, int perThousandMs) {
    this.open = open;
    this.baseMs = baseMs;
    this.perThousandMs = perThousandMs;
    this.wantedMs = baseMs;
  }

  /** The timeout for a snapshot of {@code items} nodes, apps, containers and asks. */
  int timeoutFor(long items) {
    long ms = baseMs + perThousandMs * ((items + 999) / 1000);
    return (int) Math.min(Integer.MAX_VALUE, ms);
  }

  /** Sizes the timeout of the calls that follow (the snapshot, then reloads) for {@code items}. */
  synchronized int sizeFor(long items) {
    wantedMs = timeoutFor(items);
    return wantedMs;
  }

  /** Sets the read timeout of the calls that follow to {@code ms}. */
  synchronized void useTimeoutMs(int ms) {
    wantedMs = ms;
  }

  /** The read timeout of the calls that follow, in milliseconds. */
  synchronized int timeoutMs() {
    return wantedMs;
  }

  @Override
  public synchronized String call(String message) throws CoreUnavailableException {
    if (channel == null || wantedMs > channelMs || wantedMs < channelMs / 2) {
      close();
      channel = open.apply(wantedMs);
      channelMs = wantedMs;
    }
    return channel.call(message);
  }

  @Override
  public synchronized void close() {
    if (channel != null) {
      channel.close();
      channel = null;
    }
  }
}

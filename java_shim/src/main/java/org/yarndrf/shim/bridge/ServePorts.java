package org.yarndrf.shim.bridge;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The ports `yarn-drf serve` listens on, as its port file names them (`--port-file`: written once
 * both ports listen, replaced whole). With a configured bridge port that one is used as soon as the
 * child starts; with port 0 the bridge port is known only once the file is there. Read once per
 * child: the supervisor forgets them before each new child, which may get other ports.
 */
public final class ServePorts {
  /** A port not known yet: the child has not written its file. */
  public static final int UNKNOWN = -1;

  private final Path file;
  private final int configuredBridgePort;
  private volatile Properties reported;
  /** When (System.nanoTime) the shim first read the current child's file; 0 before. */
  private volatile long seenNanos;

  /** @param configuredBridgePort the bridge port the child is told, or 0 for any */
  public ServePorts(Path file, int configuredBridgePort) {
    this.file = file;
    this.configuredBridgePort = configuredBridgePort;
  }

  /** The port the shim connects to, or UNKNOWN while a child on port 0 has not reported it. */
  public int bridgePort() {
    return configuredBridgePort > 0 ? configuredBridgePort : port("bridge.port");
  }

  /** The status server's port; 0 when it runs none; UNKNOWN before the child has reported. */
  public int statusPort() {
    return port("status.port");
  }

  /** Whether the current child has written its port file: it listens. */
  public boolean reported() {
    return statusPort() != UNKNOWN;
  }

  /** When (System.nanoTime) the shim first found the current child's ports; 0 while it has not. */
  public long seenNanos() {
    return seenNanos;
  }

  /** Forgets the last child's ports and its file, before a new child starts. */
  void forget() {
    reported = null;
    seenNanos = 0;
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // The next child replaces it whole; until then its ports would only be stale.
    }
  }

  private int port(String key) {
    Properties p = reported;
    if (p == null) {
      p = read();
      if (p == null) {
        return UNKNOWN;
      }
      seenNanos = System.nanoTime();
      reported = p;
    }
    try {
      return Integer.parseInt(p.getProperty(key, "").trim());
    } catch (NumberFormatException e) {
      return UNKNOWN;
    }
  }

  private Properties read() {
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      p.load(in);
      return p;
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException e) {
      return null;  // read again at the next call
    }
  }
}

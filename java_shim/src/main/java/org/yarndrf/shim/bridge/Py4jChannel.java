package org.yarndrf.shim.bridge;

import java.io.IOException;
import java.net.InetAddress;
import java.net.SocketTimeoutException;
import java.util.function.IntSupplier;
import py4j.ClientServer;
import py4j.Py4JException;

/**
 * The py4j connection to `yarn-drf serve`. Java is the client: it asks the Python server for its
 * entry point ({@link CoreEndpoint}) and calls it. Python never calls Java, so no Java gateway
 * port is opened. Loopback only; every socket verified before py4j uses it ({@link
 * VerifiedSockets}: the service proves it holds the token first), then py4j's auth token;
 * TCP_NODELAY; and a read timeout so a hung Python costs one heartbeat, not the scheduler thread.
 * The port is asked for at each new connection: a child on port 0 gets another one when it is
 * restarted ({@link ServePorts}).
 */
public final class Py4jChannel implements CoreChannel {
  /**
   * py4j logs every call at INFO through java.util.logging (to the RM's stderr), which costs
   * tens of microseconds per heartbeat; keep warnings only. Held here so it is not collected.
   */
  private static final java.util.logging.Logger PY4J_LOG = quiet();

  private static java.util.logging.Logger quiet() {
    java.util.logging.Logger l = java.util.logging.Logger.getLogger("py4j");
    l.setLevel(java.util.logging.Level.WARNING);
    return l;
  }

  private final InetAddress address;
  private final IntSupplier pythonPort;
  private final String token;
  private final int timeoutMs;
  private final VerifiedSockets sockets;
  private ClientServer clientServer;
  private CoreEndpoint endpoint;

  public Py4jChannel(InetAddress address, int pythonPort, String token, int timeoutMs) {
    this(address, () -> pythonPort, token, timeoutMs);
  }

  /** @param pythonPort the service's port now, or {@link ServePorts#UNKNOWN} while it starts */
  public Py4jChannel(InetAddress address, IntSupplier pythonPort, String token, int timeoutMs) {
    if (!address.isLoopbackAddress()) {
      throw new IllegalArgumentException("yarn-drf bridge: " + address
          + " is not a loopback address; the bridge only talks to 127.0.0.1");
    }
    if (token == null || token.isEmpty()) {
      throw new IllegalArgumentException("yarn-drf bridge: an auth token is required");
    }
    this.address = address;
    this.pythonPort = pythonPort;
    this.token = token;
    this.timeoutMs = timeoutMs;
    this.sockets = new VerifiedSockets(token, timeoutMs);
  }

  /**
   * Loads what the first connection needs (py4j's client and its proxy of the core's endpoint, the
   * handshake's crypto) without connecting anywhere: in a fresh ResourceManager under load that took
   * seconds, after the core already listened. Best effort: a failure only leaves it to that call.
   */
  public static void warmUp(InetAddress address, String token) {
    try {
      new VerifiedSockets(token, 1000).warmUp();
      ClientServer idle = new ClientServer.ClientServerBuilder()
          .javaAddress(address)
          .pythonAddress(address)
          .authToken(token)
          .autoStartJavaServer(false)
          .enableMemoryManagement(false)
          .build();
      try {
        idle.getPythonServerEntryPoint(new Class[] {CoreEndpoint.class});
      } finally {
        idle.shutdown();
      }
    } catch (IOException | RuntimeException e) {
      // the first call loads what is left
    }
  }

  @Override
  public synchronized String call(String message) throws CoreUnavailableException {
    try {
      if (endpoint == null) {
        int port = pythonPort.getAsInt();
        if (port <= 0) {
          throw new CoreUnavailableException("yarn-drf core has not reported its port yet (it is "
              + "starting)", null, false);
        }
        clientServer = new ClientServer.ClientServerBuilder()
            .javaAddress(address)
            .pythonAddress(address)
            .pythonPort(port)
            .authToken(token)
            .readTimeout(timeoutMs)
            .connectTimeout(timeoutMs)
            .socketFactory(sockets)
            .autoStartJavaServer(false)
            .enableMemoryManagement(false)
            .build();
        endpoint = (CoreEndpoint) clientServer.getPythonServerEntryPoint(
            new Class[] {CoreEndpoint.class});
      }
      String reply = endpoint.call(message);
      if (reply == null) {
        throw new CoreUnavailableException("yarn-drf core returned null", null, false);
      }
      return reply;
    } catch (Py4JException e) {
      // A dead or restarted Python leaves broken pooled sockets: start from a clean client.
      resetClient();
      VerifiedSockets.NotVerifiedException impostor = notVerifiedCause(e);
      if (impostor != null) {
        throw CoreUnavailableException.unverified("yarn-drf core not verified: "
            + impostor.getMessage(), e);
      }
      throw new CoreUnavailableException("yarn-drf core unreachable: " + e.getMessage(), e,
          hasTimeoutCause(e));
    } catch (RuntimeException e) {
      resetClient();
      throw new CoreUnavailableException("yarn-drf core call failed: " + e, e, false);
    }
  }

  private static VerifiedSockets.NotVerifiedException notVerifiedCause(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof VerifiedSockets.NotVerifiedException) {
        return (VerifiedSockets.NotVerifiedException) c;
      }
    }
    return null;
  }

  private static boolean hasTimeoutCause(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SocketTimeoutException) {
        return true;
      }
      if (c.getMessage() != null && c.getMessage().contains("Read timed out")) {
        return true;
      }
    }
    return false;
  }

  private void resetClient() {
    if (clientServer != null) {
      try {
        clientServer.shutdown();
      } catch (RuntimeException ignored) {
        // Shutting down a half-broken client must not mask the original failure.
      }
    }
    clientServer = null;
    endpoint = null;
  }

  @Override
  public synchronized void close() {
    resetClient();
  }
}

package org.yarndrf.shim.bridge;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.net.SocketFactory;

/**
 * The sockets py4j opens to `yarn-drf serve`: connected, TCP_NODELAY, and verified before py4j
 * writes a byte. py4j never sets TCP_NODELAY, and Java's BufferedWriter flushes in 8 KiB pieces, so
 * without it any message of 8,192 characters or more waits ~44 ms for Nagle's algorithm and the
 * peer's delayed ACK. py4j's own authentication sends the token in clear as
 * its first line, so whatever holds the port would learn it; here the service must first prove it
 * holds the token (HMAC over a fresh nonce of ours), and only then do we prove it in turn and
 * hand the socket to py4j. The exchange is specified in yarn_bridge/handshake.py:
 *
 * <pre>
 *   shim    -&gt; service   "yarn-drf-bridge/1 " N_shim "\n"
 *   service -&gt; shim      N_service " " MAC("service", N_shim, N_service) "\n"
 *   shim    -&gt; service   MAC("shim", N_service, N_shim) "\n"
 * </pre>
 *
 * MAC(role, a, b) = hex(HMAC-SHA256(token, "yarn-drf " + role + "|" + a + "|" + b)).
 */
public final class VerifiedSockets extends SocketFactory {
  private static final int LINE_LIMIT = 128;
  private static final SecureRandom RANDOM = new SecureRandom();

  /** The listener did not prove it holds the token: it is not our service. Nothing was sent. */
  public static final class NotVerifiedException extends IOException {
    NotVerifiedException(String message) {
      super(message);
    }
  }

  private final SecretKeySpec key;
  private final int timeoutMs;

  /** @param timeoutMs for connecting and for each step of the handshake */
  public VerifiedSockets(String token, int timeoutMs) {
    this.key = new SecretKeySpec(token.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
    this.timeoutMs = timeoutMs;
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    Socket s = new Socket();
    try {
      s.setTcpNoDelay(true);
      s.connect(new InetSocketAddress(host, port), timeoutMs);
      s.setSoTimeout(timeoutMs);
      verify(s, host.getHostAddress() + ":" + port);
      return s;
    } catch (IOException | RuntimeException e) {
      s.close();
      throw e;
    }
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    return createSocket(InetAddress.getByName(host), port);
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
      throws IOException {
    throw new IOException("yarn-drf bridge: binding a local address is not supported");
  }

  @Override
  public Socket createSocket(InetAddress address, int port, InetAddress localAddress,
      int localPort) throws IOException {
    throw new IOException("yarn-drf bridge: binding a local address is not supported");
  }

  private void verify(Socket s, String where) throws IOException {
    OutputStream out = s.getOutputStream();
    InputStream in = s.getInputStream();
    String ours = nonce();
    out.write(("yarn-drf-bridge/1 " + ours + "\n").getBytes(StandardCharsets.US_ASCII));
    out.flush();
    String line = readLine(in);
    int space = line == null ? -1 : line.indexOf(' ');
    String theirs = space < 0 ? "" : line.substring(0, space);
    byte[] proof = space < 0 ? new byte[0] : line.substring(space + 1).getBytes(StandardCharsets.US_ASCII);
    if (theirs.length() != 32 || !MessageDigest.isEqual(proof, mac("service", ours, theirs))) {
      throw new NotVerifiedException("the process listening on " + where + " did not prove it "
          + "holds the bridge token (" + (line == null ? "it closed the connection" : "it answered "
          + describe(line)) + "): another process holds the port, or yarn-drf serve runs with "
          + "another token file or is older than this shim; nothing was sent to it");
    }
    out.write(mac("shim", theirs, ours));
    out.write('\n');
    out.flush();
  }

  /** Loads the handshake's HMAC and nonce source (JCE providers), as the first connection would. */
  void warmUp() throws IOException {
    mac("warm-up", nonce(), nonce());
  }

  private byte[] mac(String role, String first, String second) throws IOException {
    try {
      Mac m = Mac.getInstance("HmacSHA256");
      m.init(key);
      byte[] digest = m.doFinal(("yarn-drf " + role + "|" + first + "|" + second)
          .getBytes(StandardCharsets.US_ASCII));
      return hex(digest).getBytes(StandardCharsets.US_ASCII);
    } catch (GeneralSecurityException e) {
      throw new IOException("yarn-drf bridge: HmacSHA256 is not available: " + e, e);
    }
  }

  private static String nonce() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    return hex(b);
  }

  private static String hex(byte[] bytes) {
    StringBuilder sb = new StringBuilder(bytes.length * 2);
    for (byte x : bytes) {
      sb.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
    }
    return sb.toString();
  }

  /** One line without its newline, byte by byte (nothing of py4j's is read ahead); null at EOF. */
  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    while (true) {
      int b = in.read();
      if (b < 0) {
        return line.size() == 0 ? null : line.toString("ISO-8859-1");
      }
      if (b == '\n') {
        return line.toString("ISO-8859-1");
      }
      if (line.size() >= LINE_LIMIT) {
        return line.toString("ISO-8859-1") + "...";
      }
      line.write(b);
    }
  }

  private static String describe(String line) {
    String shown = line.length() > 40 ? line.substring(0, 40) + "..." : line;
    StringBuilder sb = new StringBuilder("\"");
    for (char c : shown.toCharArray()) {
      sb.append(c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\x%02x", (int) c));
    }
    return sb.append('"').toString();
  }
}

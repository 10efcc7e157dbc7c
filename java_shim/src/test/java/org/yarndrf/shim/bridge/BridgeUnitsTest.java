package org.yarndrf.shim.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BridgeUnitsTest {
  /** A decoder as the shim's: anything but a JSON object is a malformed reply. */
  private static final ReplyDecoder<String> OBJECT = text -> {
    if (!text.startsWith("{")) {
      throw new MalformedReplyException("not an object: " + text);
    }
    return text;
  };
  private static final String TOKEN = "bridge-secret";

  /** A listener on the bridge port: `answer` decides what it says to the hello; it records all it gets. */
  private static final class Listener implements AutoCloseable {
    final ServerSocket server;
    final CompletableFuture<byte[]> received = new CompletableFuture<>();

    Listener(java.util.function.Function<String, String> answer) throws IOException {
      server = new ServerSocket(0, 5, InetAddress.getByName("127.0.0.1"));
      Thread t = new Thread(() -> {
        try (Socket s = server.accept()) {
          InputStream in = s.getInputStream();
          ByteArrayOutputStream got = new ByteArrayOutputStream();
          int b;
          while ((b = in.read()) >= 0 && b != '\n') {
            got.write(b);
          }
          got.write('\n');
          String reply = answer.apply(got.toString("US-ASCII").trim());
          if (reply != null) {
            s.getOutputStream().write(reply.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            s.setSoTimeout(2000);
            try {
              while ((b = in.read()) >= 0) {
                got.write(b);
                if (got.size() > 4096) {
                  break;
                }
              }
            } catch (IOException timeout) {
              // the client sent all it was going to
            }
          }
          received.complete(got.toByteArray());
        } catch (IOException e) {
          received.completeExceptionally(e);
        }
      });
      t.setDaemon(true);
      t.start();
    }

    int port() {
      return server.getLocalPort();
    }

    String receivedText() throws Exception {
      return new String(received.get(10, TimeUnit.SECONDS), StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
      server.close();
    }
  }

  /** The service's half of the handshake, written here from docs/bridge.md as an independent check. */
  private static String mac(String token, String role, String first, String second)
      throws Exception {
    Mac m = Mac.getInstance("HmacSHA256");
    m.init(new SecretKeySpec(token.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    StringBuilder hex = new StringBuilder();
    for (byte x : m.doFinal(("yarn-drf " + role + "|" + first + "|" + second)
        .getBytes(StandardCharsets.US_ASCII))) {
      hex.append(String.format("%02x", x));
    }
    return hex.toString();
  }

  private static String proofFor(String token, String hello) {
    String nonce = hello.substring("yarn-drf-bridge/1 ".length());
    String ours = "0123456789abcdef0123456789abcdef";
    try {
      return ours + " " + mac(token, "service", nonce, ours) + "\n";
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void theShimProvesItselfOnlyToAServiceThatProvedItHoldsTheToken() throws Exception {
    InetAddress lo = InetAddress.getByName("127.0.0.1");
    try (Listener service = new Listener(hello -> proofFor(TOKEN, hello));
         Socket s = new VerifiedSockets(TOKEN, 2000).createSocket(lo, service.port())) {
      assertTrue(s.getTcpNoDelay());
      s.close();
      String[] lines = service.receivedText().split("\n");
      assertEquals(2, lines.length, Arrays.toString(lines));
      assertTrue(lines[0].matches("yarn-drf-bridge/1 [0-9a-f]{32}"), lines[0]);
      String nonce = lines[0].substring("yarn-drf-bridge/1 ".length());
      assertEquals(mac(TOKEN, "shim", "0123456789abcdef0123456789abcdef", nonce), lines[1]);
    }
  }

  @Test
  void aListenerThatCannotProveTheTokenGetsOnlyTheHello() throws Exception {
    InetAddress lo = InetAddress.getByName("127.0.0.1");
    List<java.util.function.Function<String, String>> squatters = Arrays.asList(
        hello -> proofFor("another-token", hello),  // a service with another token
        hello -> "!yv\n",  // py4j's "authenticated"
        hello -> "0123456789abcdef0123456789abcdef " + String.join("", Collections.nCopies(32, "00")) + "\n",
        hello -> null);  // says nothing and closes
    for (java.util.function.Function<String, String> squatter : squatters) {
      try (Listener l = new Listener(squatter)) {
        VerifiedSockets.NotVerifiedException e = assertThrows(
            VerifiedSockets.NotVerifiedException.class,
            () -> new VerifiedSockets(TOKEN, 2000).createSocket(lo, l.port()));
        assertTrue(e.getMessage().contains("did not prove it holds the bridge token"),
            e.getMessage());
        String got = l.receivedText();
        assertTrue(got.matches("yarn-drf-bridge/1 [0-9a-f]{32}\n"), got);
        assertFalse(got.contains(TOKEN));
      }
    }
  }

  @Test
  void thePy4jChannelSendsNoTokenAndNoRequestToAnImpostor() throws Exception {
    InetAddress lo = InetAddress.getByName("127.0.0.1");
    try (Listener squatter = new Listener(hello -> "!yv\n")) {
      Py4jChannel channel = new Py4jChannel(lo, squatter.port(), TOKEN, 2000);
      CoreSession session = new CoreSession(channel, new Backoff(1, 1), () -> 0L);
      assertNull(session.exchange("snapshot", "{\"secret-request\":1}", true, OBJECT));
      assertEquals(1, session.unverified.get());
      assertTrue(session.counters().contains("unverified=1"), session.counters());
      String got = squatter.receivedText();
      assertFalse(got.contains(TOKEN) || got.contains("secret-request"), got);
      channel.close();
    }
  }

  @Test
  void backoffDoublesUpToItsCapAndResetsOnSuccess() {
    Backoff b = new Backoff(100, 350);
    assertTrue(b.mayAttempt(0));
    assertEquals(100, b.failed(0));
    assertFalse(b.mayAttempt(99));
    assertTrue(b.mayAttempt(100));
    assertEquals(200, b.failed(100));
    assertEquals(350, b.failed(300));
    assertEquals(350, b.failed(650));
    b.succeeded();
    assertTrue(b.mayAttempt(0));
    assertEquals(100, b.failed(1000));
  }

  @Test
  void aSessionCountsEachKindOfFailureAndAsksForAResync() {
    AtomicLong now = new AtomicLong();
    String[] reply = {"{\"ok\":true}"};
    boolean[] down = {false, false};
    CoreChannel channel = new CoreChannel() {
      @Override
      public String call(String message) throws CoreUnavailableException {
        if (down[0]) {
          throw new CoreUnavailableException("read timed out", null, down[1]);
        }
        return reply[0];
      }

      @Override
      public void close() {
      }
    };
    CoreSession s = new CoreSession(channel, new Backoff(10, 10), now::get);
    assertTrue(s.needsResync());
    s.resynced();
    assertEquals("{\"ok\":true}", s.exchange("hb", "{}", false, OBJECT));
    reply[0] = "not json";
    assertNull(s.exchange("hb", "{}", false, OBJECT));
    assertEquals(1, s.malformed.get());
    assertTrue(s.needsResync());
    assertNull(s.exchange("hb", "{}", false, OBJECT), "backing off");
    assertEquals(1, s.skipped.get());
    now.set(10);
    down[0] = true;
    down[1] = true;
    assertNull(s.exchange("hb", "{}", false, OBJECT));
    assertEquals(1, s.timeouts.get());
    assertEquals(1, s.failures.get());
    now.set(20);
    down[0] = false;
    reply[0] = "{\"ok\":true}";
    assertTrue(s.exchange("hb", "{}", false, OBJECT) != null);
  }

  private static CoreChannel failing(boolean[] down, CoreUnavailableException failure) {
    return new CoreChannel() {
      @Override
      public String call(String message) throws CoreUnavailableException {
        if (down[0]) {
          throw failure;
        }
        return "{\"ok\":true}";
      }

      @Override
      public void close() {
      }
    };
  }

  @Test
  void aCoreThatStopsAnsweringIsReportedAfterEnoughFailuresAndTime() {
    AtomicLong now = new AtomicLong();
    boolean[] down = {true};
    CoreSession s = new CoreSession(failing(down,
        new CoreUnavailableException("read timed out", null, true)), new Backoff(1, 1), now::get);
    AtomicReference<String> reported = new AtomicReference<>();
    s.whenUnresponsive(3, 1000, reported::set);
    for (int i = 0; i < 5; i++) {
      now.addAndGet(100);
      s.exchange("hb", "{}", true, OBJECT);
    }
    assertNull(reported.get(), "5 failures but only 500 ms without an answer");
    now.set(1000);
    down[0] = false;
    s.exchange("hb", "{}", true, OBJECT);  // an answer: counting starts again
    down[0] = true;
    now.set(2500);
    s.exchange("hb", "{}", true, OBJECT);
    s.exchange("hb", "{}", true, OBJECT);
    assertNull(reported.get(), "1500 ms but two failures");
    s.exchange("hb", "{}", true, OBJECT);
    assertEquals("no answer for 1500 ms (3 calls in a row failed)", reported.get());
    assertTrue(s.lastCallTimedOut());
  }

  @Test
  void anImpostorOnThePortDoesNotCountAsOurCoreHanging() {
    AtomicLong now = new AtomicLong();
    CoreSession s = new CoreSession(failing(new boolean[] {true},
        CoreUnavailableException.unverified("not verified", null)), new Backoff(1, 1), now::get);
    AtomicReference<String> reported = new AtomicReference<>();
    s.whenUnresponsive(1, 10, reported::set);
    for (int i = 0; i < 5; i++) {
      now.addAndGet(100);
      s.exchange("hb", "{}", true, OBJECT);
    }
    assertNull(reported.get());
    assertEquals(5, s.unverified.get());
    assertFalse(s.lastCallTimedOut());
  }

  private static ServePorts noPorts(Path dir) {
    return new ServePorts(dir.resolve("ports"), 25999);
  }

  @Test
  void theSupervisorKillsAChildThatIsAliveButUnresponsiveAndStartsAnother(@TempDir Path dir)
      throws Exception {
    CapturedLog log = CapturedLog.of(ServeSupervisor.class);
    ServeSupervisor child = new ServeSupervisor(() -> Arrays.asList("sleep", "600"), noPorts(dir), 25999, null,
        new Backoff(10, 10));
    try {
      child.start();
      assertTrue(log.waitFor("start #1"));
      assertFalse(child.restartUnresponsive("test", 60_000), "too young to be judged");
      Thread.sleep(100);
      assertTrue(child.restartUnresponsive("no answer for 100 ms", 50));
      assertTrue(log.waitFor("start #2"), log.lines.toString());
      assertTrue(log.waitFor("killed because it was alive but not answering: no answer for 100 ms"));
      assertEquals(1, child.unresponsiveKills.get());
    } finally {
      child.stop();
      log.close();
    }
  }

  @Test
  void theSupervisorSaysWhichPortIsTakenWhenTheChildCannotListen(@TempDir Path dir)
      throws Exception {
    CapturedLog log = CapturedLog.of(ServeSupervisor.class);
    ServeSupervisor child = new ServeSupervisor(() -> Arrays.asList("sh", "-c", "exit 3"), noPorts(dir), 25999, null,
        new Backoff(1000, 1000));
    try {
      child.start();
      assertTrue(log.waitFor("another process holds its bridge port 127.0.0.1:25999"),
          log.lines.toString());
      assertEquals("it exited with status 3: another process holds the bridge port "
          + "127.0.0.1:25999", child.lastExit());
    } finally {
      child.stop();
      log.close();
    }
  }

  @Test
  void aTokenFileOthersCanReadOrWriteIsRefusedWithTheFix(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("token");
    Files.write(file, "  secret\n".getBytes(StandardCharsets.UTF_8));
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    assertEquals("secret", TokenFile.read(file, "yarn-drf.bridge.token-file"));
    for (String mode : Arrays.asList("rw-r--r--", "rw-r-----", "rw--w----", "rw-----w-")) {
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
      IOException e = assertThrows(IOException.class,
          () -> TokenFile.read(file, "yarn-drf.bridge.token-file"));
      assertTrue(e.getMessage().contains("yarn-drf.bridge.token-file " + file
          + " is readable or writable by other users (" + mode + ")"), e.getMessage());
      assertTrue(e.getMessage().contains("chmod 600 " + file), e.getMessage());
    }
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    Files.write(file, "\n".getBytes(StandardCharsets.UTF_8));
    assertTrue(assertThrows(IOException.class, () -> TokenFile.read(file, "k")).getMessage()
        .contains("is empty"));
  }

  @Test
  void aTokenFileOfAnotherUserIsRefused(@TempDir Path dir) throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
        "giving a file to another user needs root");
    Path file = dir.resolve("token");
    Files.write(file, "secret".getBytes(StandardCharsets.UTF_8));
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    Files.setOwner(file, file.getFileSystem().getUserPrincipalLookupService()
        .lookupPrincipalByName("nobody"));
    IOException e = assertThrows(IOException.class, () -> TokenFile.read(file, "k"));
    assertTrue(e.getMessage().contains("belongs to nobody, not to root")
        && e.getMessage().contains("chown root " + file), e.getMessage());
  }

  @Test
  void thePy4jChannelRefusesNonLoopbackAddressesAndEmptyTokens() throws Exception {
    assertThrows(IllegalArgumentException.class,
        () -> new Py4jChannel(InetAddress.getByName("192.0.2.1"), 1, "t", 100));
    assertThrows(IllegalArgumentException.class,
        () -> new Py4jChannel(InetAddress.getByName("127.0.0.1"), 1, "", 100));
  }

  @Test
  void stoppingTheSupervisorKillsAChildThatIgnoresSigtermAndStartsNoOther(@TempDir Path dir)
      throws Exception {
    String marker = "yarn-drf-test-" + UUID.randomUUID();
    AtomicLong launches = new AtomicLong();
    ServeSupervisor child = new ServeSupervisor(() -> {
      launches.incrementAndGet();
      return Arrays.asList("python3", "-c", "import signal, time; "
          + "signal.signal(signal.SIGTERM, signal.SIG_IGN); open(__import__('sys').argv[1], 'w')"
          + ".close(); time.sleep(600)", dir.resolve("up").toString(), marker);
    }, noPorts(dir), 25999, null, new Backoff(10, 10));
    child.start();
    for (int i = 0; i < 2400 && !Files.exists(dir.resolve("up")); i++) {
      Thread.sleep(25);
    }
    assertEquals(1, LiveProcesses.withArgument(marker).size(), "the child runs, SIGTERM ignored");
    child.stop();
    assertTrue(LiveProcesses.withArgument(marker).isEmpty(), "killed once the grace was over");
    Thread.sleep(50);  // a supervisor that went on would start the next child after its 10 ms backoff
    assertEquals(1, launches.get());
    assertNull(child.lastExit(), "a stop is not an exit to report");
  }

  @Test
  void eachChildIsStartedWithTheCommandLineOfItsTimeAndReportsItsPortsAfresh(@TempDir Path dir)
      throws Exception {
    List<String> files = Collections.synchronizedList(new ArrayList<String>());
    Path ports = dir.resolve("ports");
    ServePorts reported = new ServePorts(ports, 0);
    ServeSupervisor child = new ServeSupervisor(() -> {
      String file = "queues-" + files.size() + ".yaml";
      files.add(file);
      // Each child writes the port file as `yarn-drf serve` does, then exits: the next one starts.
      return Arrays.asList("sh", "-c", "printf 'bridge.port=4100" + files.size()
          + "\\nstatus.port=0\\n' > " + ports + "; sleep 0.3", file);
    }, reported, 0, null, new Backoff(10, 10));
    try {
      child.start();
      for (int i = 0; i < 2400 && files.size() < 3; i++) {
        Thread.sleep(25);
      }
      assertTrue(files.size() >= 3, files.toString());
      assertEquals(Arrays.asList("queues-0.yaml", "queues-1.yaml", "queues-2.yaml"),
          files.subList(0, 3));
      assertEquals("it exited with status 0", child.lastExit());
    } finally {
      child.stop();
    }
    int port = reported.bridgePort();
    assertTrue(port == ServePorts.UNKNOWN || port == 41000 + files.size(),
        "the last child's port, or none while it starts: " + port);
  }

  @Test
  void servePortsReadTheChildsFileOnceItIsThereAndForgetItForTheNextChild(@TempDir Path dir)
      throws Exception {
    Path file = dir.resolve("ports");
    ServePorts any = new ServePorts(file, 0);
    assertEquals(ServePorts.UNKNOWN, any.bridgePort());
    assertEquals(ServePorts.UNKNOWN, any.statusPort());
    Files.write(file, "bridge.port=41234\nstatus.port=0\n".getBytes(StandardCharsets.UTF_8));
    assertEquals(41234, any.bridgePort());
    assertEquals(0, any.statusPort(), "no status server");
    any.forget();
    assertFalse(Files.exists(file));
    assertEquals(ServePorts.UNKNOWN, any.bridgePort());
    ServePorts fixed = new ServePorts(file, 25334);
    assertEquals(25334, fixed.bridgePort(), "a configured port needs no file");
    assertEquals(ServePorts.UNKNOWN, fixed.statusPort());
  }

  @Test
  void aChannelToACoreThatHasNotReportedItsPortFailsWithoutConnecting() throws Exception {
    Py4jChannel channel = new Py4jChannel(InetAddress.getByName("127.0.0.1"),
        () -> ServePorts.UNKNOWN, TOKEN, 100);
    CoreUnavailableException e = assertThrows(CoreUnavailableException.class,
        () -> channel.call("{}"));
    assertTrue(e.getMessage().contains("has not reported its port yet"), e.getMessage());
    assertFalse(e.isTimeout() || e.isUnverified());
  }

  @Test
  void aCoreDirIsPrivateAndDeletedWholeWithWhatIsInIt() throws Exception {
    CoreDir dir = CoreDir.create();
    Path token = dir.writeToken("t0ken");
    Files.write(dir.portFile(), "bridge.port=1\n".getBytes(StandardCharsets.UTF_8));
    assertEquals("rwx------", PosixFilePermissions.toString(
        Files.getPosixFilePermissions(dir.path())));
    assertEquals("t0ken", TokenFile.read(token, "test"), "owner-only, as the child requires");
    dir.close();
    assertFalse(Files.exists(dir.path()));
  }
}

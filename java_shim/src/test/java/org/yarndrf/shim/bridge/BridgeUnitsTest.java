package org.yarndrf.shim.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class BridgeUnitsTest {
  private static final int V = Protocol.VERSION;

  @Test
  void socketFactoriesSetTcpNoDelayOnBothEnds() throws Exception {
    InetAddress lo = InetAddress.getByName("127.0.0.1");
    try (ServerSocket server = NoDelaySockets.SERVER.createServerSocket(0, 1, lo);
         Socket client = NoDelaySockets.CLIENT.createSocket(lo, server.getLocalPort());
         Socket accepted = server.accept()) {
      assertTrue(client.getTcpNoDelay());
      assertTrue(accepted.getTcpNoDelay());
    }
  }

  @Test
  void repliesMustBeJsonObjectsOfThisVersionWithOk() throws Exception {
    assertEquals(3, Protocol.decodeReply("{\"v\":" + V + ",\"ok\":true,\"seq\":3}").get("seq").asInt());
    assertThrows(MalformedReplyException.class, () -> Protocol.decodeReply("{\"v\":" + V + ",\"ok\":"));
    assertThrows(MalformedReplyException.class, () -> Protocol.decodeReply("[1]"));
    assertThrows(MalformedReplyException.class,
        () -> Protocol.decodeReply("{\"v\":" + (V - 1) + ",\"ok\":true}"));
    assertThrows(MalformedReplyException.class, () -> Protocol.decodeReply("{\"v\":" + V + "}"));
    MalformedReplyException e = assertThrows(MalformedReplyException.class,
        () -> Protocol.decodeReply("{\"v\":" + V + ",\"ok\":false,\"error\":\"bad delta\"}"));
    assertTrue(e.getMessage().contains("bad delta"));
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
    String[] reply = {"{\"v\":" + V + ",\"ok\":true}"};
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
    assertEquals(true, s.exchange("hb", "{}", false).get("ok").asBoolean());
    reply[0] = "not json";
    assertNull(s.exchange("hb", "{}", false));
    assertEquals(1, s.malformed.get());
    assertTrue(s.needsResync());
    assertNull(s.exchange("hb", "{}", false), "backing off");
    assertEquals(1, s.skipped.get());
    now.set(10);
    down[0] = true;
    down[1] = true;
    assertNull(s.exchange("hb", "{}", false));
    assertEquals(1, s.timeouts.get());
    assertEquals(1, s.failures.get());
    now.set(20);
    down[0] = false;
    reply[0] = "{\"v\":" + V + ",\"ok\":true}";
    assertTrue(s.exchange("hb", "{}", false) != null);
  }

  @Test
  void thePy4jChannelRefusesNonLoopbackAddressesAndEmptyTokens() throws Exception {
    assertThrows(IllegalArgumentException.class,
        () -> new Py4jChannel(InetAddress.getByName("192.0.2.1"), 1, "t", 100));
    assertThrows(IllegalArgumentException.class,
        () -> new Py4jChannel(InetAddress.getByName("127.0.0.1"), 1, "", 100));
  }
}

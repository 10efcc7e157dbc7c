package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.fasterxml.jackson.databind.node.ArrayNode;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.junit.jupiter.api.Test;
import org.yarndrf.shim.bridge.Protocol;

class AskMirrorTest {
  private final AskMirror mirror = new AskMirror();
  private ArrayNode asks;
  private ArrayNode counts;

  private static ResourceRequest rr(String where, int count, int vcores) {
    return ResourceRequest.newInstance(Priority.newInstance(1), where,
        Resource.newInstance(1024, vcores), count);
  }

  private static ResourceRequest rr(String where, int count) {
    return rr(where, count, 2);
  }

  private void diff(String app, List<ResourceRequest> current) {
    asks = Protocol.JSON.createArrayNode();
    counts = Protocol.JSON.createArrayNode();
    mirror.diff(app, current, asks, counts);
  }

  @Test
  void sendsAsksInFullOnceThenCountsByIdAndZeroForVanishedOnes() {
    diff("app_1", Arrays.asList(rr("*", 3), rr("/rack1", 3)));
    assertEquals(2, asks.size());
    assertEquals(0, counts.size());
    ArrayNode any = (ArrayNode) asks.get(0);
    // [id, count, app, priority, allocation_id, location, relax, memory-mb, vcores, ...]
    assertEquals(3, any.get(1).asInt());
    assertEquals("app_1", any.get(2).asText());
    assertEquals("*", any.get(5).asText());
    assertEquals(1024, any.get(7).asLong());
    assertEquals(2, any.get(8).asLong());
    long anyId = any.get(0).asLong();
    long rackId = asks.get(1).get(0).asLong();
    assertNotEquals(anyId, rackId);

    diff("app_1", Arrays.asList(rr("*", 3), rr("/rack1", 3)));
    assertEquals(0, asks.size() + counts.size(), "nothing changed, nothing to send");

    diff("app_1", Collections.singletonList(rr("*", 1)));
    assertEquals(0, asks.size());
    assertEquals("[" + anyId + ",1," + rackId + ",0]", counts.toString());

    diff("app_1", Arrays.asList(rr("*", 1), rr("/rack1", 2)));
    assertEquals("[" + rackId + ",2]", counts.toString(), "a withdrawn ask that returns keeps its id");

    diff("app_1", Arrays.asList(rr("*", 1, 4), rr("/rack1", 2)));
    assertEquals(1, asks.size(), "a new shape is a new ask for the core");
    assertEquals(0, counts.size());
    assertEquals(4, asks.get(0).get(8).asLong());
    assertNotEquals(anyId, asks.get(0).get(0).asLong());

    mirror.forget("app_1");
    diff("app_1", Collections.singletonList(rr("*", 1)));
    assertEquals(1, asks.size());
    assertNotEquals(anyId, asks.get(0).get(0).asLong(), "ids are never reused");
  }
}

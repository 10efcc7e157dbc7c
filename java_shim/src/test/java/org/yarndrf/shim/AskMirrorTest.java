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

class AskMirrorTest {
  private static ResourceRequest rr(String where, int count, int vcores) {
    return ResourceRequest.newInstance(Priority.newInstance(1), where,
        Resource.newInstance(1024, vcores), count);
  }

  private static ResourceRequest rr(String where, int count) {
    return rr(where, count, 2);
  }

  @Test
  void sendsAsksInFullOnceThenCountsByIdAndZeroForVanishedOnes() {
    AskMirror m = new AskMirror();
    List<ArrayNode> first = m.diff("app_1", Arrays.asList(rr("*", 3), rr("/rack1", 3)));
    assertEquals(2, first.size());
    ArrayNode any = first.get(0);
    // [id, count, app, priority, allocation_id, location, relax, memory-mb, vcores, ...]
    assertEquals(3, any.get(1).asInt());
    assertEquals("app_1", any.get(2).asText());
    assertEquals("*", any.get(5).asText());
    assertEquals(1024, any.get(7).asLong());
    assertEquals(2, any.get(8).asLong());
    long anyId = any.get(0).asLong();
    long rackId = first.get(1).get(0).asLong();
    assertNotEquals(anyId, rackId);
    assertEquals(0, m.diff("app_1", Arrays.asList(rr("*", 3), rr("/rack1", 3))).size());

    List<ArrayNode> lower = m.diff("app_1", Collections.singletonList(rr("*", 1)));
    assertEquals("[[" + anyId + ",1], [" + rackId + ",0]]", lower.toString().replace("],[", "], ["));
    // A withdrawn ask that comes back keeps its id: a count, not a full ask.
    assertEquals("[[" + rackId + ",2]]",
        m.diff("app_1", Arrays.asList(rr("*", 1), rr("/rack1", 2))).toString());
    // A new shape is a new ask for the core: sent in full again, under a fresh id.
    List<ArrayNode> reshaped = m.diff("app_1", Arrays.asList(rr("*", 1, 4), rr("/rack1", 2)));
    assertEquals(1, reshaped.size());
    assertEquals("app_1", reshaped.get(0).get(2).asText(), "a full ask");
    assertEquals(4, reshaped.get(0).get(8).asLong());
    assertNotEquals(anyId, reshaped.get(0).get(0).asLong());

    m.forget("app_1");
    List<ArrayNode> afresh = m.diff("app_1", Collections.singletonList(rr("*", 1)));
    assertEquals(1, afresh.size());
    assertEquals(1, afresh.get(0).get(1).asInt());
    assertNotEquals(anyId, afresh.get(0).get(0).asLong(), "ids are never reused");
  }
}

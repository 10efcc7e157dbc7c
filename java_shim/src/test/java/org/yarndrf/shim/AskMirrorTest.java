package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.junit.jupiter.api.Test;

class AskMirrorTest {
  private static ResourceRequest rr(String where, int count) {
    return ResourceRequest.newInstance(Priority.newInstance(1), where, Resource.newInstance(1024, 2),
        count);
  }

  @Test
  void sendsOnlyChangedAsksAsAbsoluteCountsAndZeroForVanishedOnes() {
    AskMirror m = new AskMirror();
    List<ObjectNode> first = m.diff("app_1", Arrays.asList(rr("*", 3), rr("/rack1", 3)));
    assertEquals(2, first.size());
    assertEquals(3, first.get(0).get("count").asInt());
    assertEquals(2, first.get(0).get("resources").get("vcores").asInt());
    assertEquals(0, m.diff("app_1", Arrays.asList(rr("*", 3), rr("/rack1", 3))).size());
    List<ObjectNode> lower = m.diff("app_1", Collections.singletonList(rr("*", 1)));
    assertEquals(2, lower.size());
    assertEquals(1, lower.get(0).get("count").asInt());
    assertEquals("/rack1", lower.get(1).get("location").asText());
    assertEquals(0, lower.get(1).get("count").asInt());
    m.forget("app_1");
    assertEquals(1, m.diff("app_1", Collections.singletonList(rr("*", 1))).size());
  }
}

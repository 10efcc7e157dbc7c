package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.junit.jupiter.api.Test;

/**
 * The shared ACL vectors (acl-vectors.json; tests/core/test_acl.py checks the core against the
 * same file): Hadoop's own AccessControlList, and the shim's queues built from a queue list
 * carrying the ACL text, decide every case as the file says.
 */
class AclAgreementTest {
  private static JsonNode cases() throws Exception {
    try (InputStream in = AclAgreementTest.class.getResourceAsStream("/acl-vectors.json")) {
      return Messages.JSON.readTree(in).get("cases");
    }
  }

  private static UserGroupInformation ugi(JsonNode c) {
    List<String> groups = new ArrayList<>();
    c.get("groups").forEach(g -> groups.add(g.asText()));
    String user = c.get("user").asText();
    UserGroupInformation ugi =
        UserGroupInformation.createUserForTesting(user, groups.toArray(new String[0]));
    // The core compares the name YARN submits with; the vectors use names that are their own
    // short names, so both sides see the same user.
    assertEquals(user, ugi.getShortUserName());
    return ugi;
  }

  @Test
  void hadoopsAccessControlListDecidesEveryVectorAsTheFileSays() throws Exception {
    JsonNode cases = cases();
    assertTrue(cases.size() >= 300, "vectors: " + cases.size());
    List<String> wrong = new ArrayList<>();
    for (JsonNode c : cases) {
      boolean allowed = new AccessControlList(c.get("acl").asText()).isUserAllowed(ugi(c));
      if (allowed != c.get("allowed").asBoolean()) {
        wrong.add(c.toString());
      }
    }
    assertEquals(new ArrayList<String>(), wrong);
  }

  @Test
  void theShimsQueuesDecideEveryVectorFromTheQueueListText() throws Exception {
    QueueTree tree = new QueueTree(new Configuration(), (queue, attempt, container) -> { });
    List<String> wrong = new ArrayList<>();
    for (JsonNode c : cases()) {
      ArrayNode list = Messages.JSON.createArrayNode();
      list.addObject().put("name", "root").put("leaf", false).put("submit_acl", " ")
          .put("admin_acl", " ");
      list.addObject().put("name", "root.q").put("leaf", true).put("submit_acl", c.get("acl").asText());
      tree.update(Messages.queues(list));
      boolean allowed = tree.find("root.q").hasAccess(QueueACL.SUBMIT_APPLICATIONS, ugi(c));
      if (allowed != c.get("allowed").asBoolean()) {
        wrong.add(c.toString());
      }
    }
    assertEquals(new ArrayList<String>(), wrong);
  }
}

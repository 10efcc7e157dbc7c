package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.yarndrf.shim.web.YarnDrfWebServices;

/**
 * /ws/v1/cluster/scheduler of a ResourceManager (its web server, the real core) with
 * yarn.webapp.custom.webservice.class naming YarnDrfWebServices: FairScheduler's shape as YARN
 * UI2's fair-queue serializer reads it, in JSON and XML, and the RM's other endpoints unchanged.
 */
class SchedulerRestTest {
  static final String QUEUES = "resources: [memory-mb, vcores]\n"
      + "queues:\n  root:\n    children:\n"
      + "      prod: {weight: 3}\n"
      + "      research:\n        children:\n"
      + "          ml: {weight: {memory-mb: 2, vcores: 2}, max-container: {memory-mb: 4096}}\n"
      + "          adhoc: {max: {memory-mb: 4096}}\n";
  /** What UI2's yarn-queue/fair-queue serializer reads of every queue (Hadoop 3.4's UI2 source). */
  static final List<String> UI2_QUEUE_FIELDS = Arrays.asList("queueName", "maxApps",
      "minResources", "maxResources", "usedResources", "demandResources", "steadyFairResources",
      "fairResources", "clusterResources", "pendingContainers", "allocatedContainers",
      "reservedContainers", "schedulingPolicy", "preemptable");
  static final List<String> UI2_LEAF_FIELDS = Arrays.asList("numPendingApps", "numActiveApps");
  static final List<String> QUEUE_NAMES = Arrays.asList("root", "root.prod", "root.research",
      "root.research.adhoc", "root.research.ml");

  @TempDir
  static Path tmp;
  private static MockRM rm;
  private static String base;

  /** One RM for the class: the tests only read. */
  @BeforeAll
  static void start() throws Exception {
    RealCore core = new RealCore(tmp);
    core.write("queues.yaml", QUEUES);
    YarnConfiguration conf = core.rmConf(0);
    conf.setBoolean("mockrm.webapp.enabled", true);
    conf.setBoolean(YarnConfiguration.IS_MINI_YARN_CLUSTER, true);  // the RM reports its port
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:0");
    conf.set(YarnConfiguration.YARN_WEBAPP_CUSTOM_WEBSERVICE_CLASS,
        YarnDrfWebServices.class.getName());
    DefaultMetricsSystem.setMiniClusterMode(true);  // as FakeCore.startRm
    rm = new MockRM(conf);
    rm.start();
    rm.registerNode("localhost:1", Resource.newInstance(8192, 8));
    base = "http://" + WebAppUtils.getRMWebAppURLWithoutScheme(rm.getConfig());
    RMApp app = AsyncApps.submit(rm, MockRMAppSubmissionData.Builder
        .createWithResource(Resource.newInstance(1024, 1), rm).withUser("alice")
        .withQueue("root.research.ml"));
    AsyncApps.launch(rm, app);
  }

  @AfterAll
  static void stop() {
    if (rm != null) {
      rm.stop();
    }
  }

  private static byte[] get(String path, String accept) throws IOException {
    return read(base + path, accept);
  }

  static byte[] read(String url, String accept) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    if (accept != null) {
      c.setRequestProperty("Accept", accept);
    }
    assertEquals(200, c.getResponseCode(), url + " answered " + c.getResponseCode());
    try (InputStream in = c.getInputStream()) {
      byte[] body = new byte[0];
      byte[] buf = new byte[8192];
      for (int n; (n = in.read(buf)) > 0;) {
        byte[] grown = Arrays.copyOf(body, body.length + n);
        System.arraycopy(buf, 0, grown, body.length, n);
        body = grown;
      }
      return body;
    }
  }

  private static List<String> sorted(java.util.Collection<String> names) {
    List<String> out = new ArrayList<>(names);
    java.util.Collections.sort(out);
    return out;
  }

  /** Every queue of the answer by name, root first, as UI2's serializer walks it. */
  private static Map<String, JsonNode> walk(JsonNode q, Map<String, JsonNode> out) {
    out.put(q.get("queueName").asText(), q);
    JsonNode children = q.path("childQueues").path("queue");
    for (JsonNode c : children) {
      walk(c, out);
    }
    return out;
  }

  @Test
  void theJsonAnswerIsFairSchedulerShapedAsUi2ReadsIt() throws Exception {
    JsonNode doc = new ObjectMapper().readTree(get("/ws/v1/cluster/scheduler", null));
    JsonNode info = doc.path("scheduler").path("schedulerInfo");
    // UI2's yarn-queue serializer: the model is the type's first word.
    assertEquals("fair", info.path("type").asText().split("(?=[A-Z])")[0]);
    Map<String, JsonNode> queues = walk(info.path("rootQueue"), new LinkedHashMap<>());
    assertEquals("root", queues.keySet().iterator().next());
    assertEquals(QUEUE_NAMES, sorted(queues.keySet()));
    for (JsonNode q : queues.values()) {
      List<String> wanted = new ArrayList<>(UI2_QUEUE_FIELDS);
      if (!q.has("childQueues")) {
        wanted.addAll(UI2_LEAF_FIELDS);
      }
      for (String field : wanted) {
        assertTrue(q.has(field), q.get("queueName") + " lacks " + field);
      }
      for (String r : Arrays.asList("usedResources", "maxResources", "fairResources")) {
        assertTrue(q.path(r).path("memory").isNumber() && q.path(r).path("vCores").isNumber(),
            q.get("queueName") + "." + r + ": " + q.path(r));
      }
    }
    JsonNode ml = queues.get("root.research.ml");
    assertEquals(1024, ml.path("usedResources").path("memory").asLong(), ml.toString());
    assertEquals(1, ml.path("numActiveApps").asInt());
    assertEquals(1024, queues.get("root.research").path("usedResources").path("memory").asLong());
    assertEquals(0, queues.get("root.prod").path("usedResources").path("memory").asLong());
    // yarn-drf's own figures: weight, dominant share of the cluster, steady (weight) share.
    assertEquals(2.0, ml.path("drfWeight").asDouble(), 1e-9);
    assertEquals(1024.0 / 8192, ml.path("drfDominantShare").asDouble(), 1e-9);
    assertEquals(0.75, queues.get("root.prod").path("drfSteadyShare").asDouble(), 1e-9);
    assertEquals(0.25 * 2 / 3, ml.path("drfSteadyShare").asDouble(), 1e-9);
    assertEquals(4096, ml.path("maxContainerAllocation").path("memory").asLong());
    assertEquals(4096, queues.get("root.research.adhoc").path("maxResources").path("memory")
        .asLong());
  }

  @Test
  void theXmlAnswerHasTheSameTreeWithItsTypeAsXsiType() throws Exception {
    byte[] body = get("/ws/v1/cluster/scheduler", "application/xml");
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    Document xml = f.newDocumentBuilder().parse(new ByteArrayInputStream(body));
    assertEquals("scheduler", xml.getDocumentElement().getTagName());
    Element info = (Element) xml.getElementsByTagName("schedulerInfo").item(0);
    assertEquals("fairScheduler",
        info.getAttributeNS("http://www.w3.org/2001/XMLSchema-instance", "type"),
        new String(body, StandardCharsets.UTF_8));
    NodeList names = xml.getElementsByTagName("queueName");
    List<String> got = new ArrayList<>();
    for (int i = 0; i < names.getLength(); i++) {
      got.add(names.item(i).getTextContent());
    }
    assertEquals(QUEUE_NAMES, sorted(got));
  }

  @Test
  void theRmsOtherEndpointsStillAnswer() throws Exception {
    JsonNode metrics = new ObjectMapper().readTree(get("/ws/v1/cluster/metrics",
        "application/json"));
    assertEquals(1, metrics.path("clusterMetrics").path("appsRunning").asInt(), metrics.toString());
    JsonNode apps = new ObjectMapper().readTree(get("/ws/v1/cluster/apps", "application/json"));
    assertEquals("root.research.ml", apps.path("apps").path("app").get(0).path("queue").asText());
    assertTrue(new String(get("/ws/v1/cluster/info", "application/xml"), StandardCharsets.UTF_8)
        .contains("<clusterInfo>"));
  }
}

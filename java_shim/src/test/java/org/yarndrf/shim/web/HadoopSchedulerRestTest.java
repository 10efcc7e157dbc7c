package org.yarndrf.shim.web;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;
import org.junit.jupiter.api.Test;

/**
 * YarnDrfWebServices bound in an RM running another scheduler (the Docker cluster's yarn-site
 * names it whatever the scheduler): /ws/v1/cluster/scheduler is Hadoop's own answer. Its own
 * class: a JVM serves the web app of the RM started last (Guice's filter is static).
 */
class HadoopSchedulerRestTest {
  @Test
  void withCapacitySchedulerTheAnswerIsHadoopsOwn() throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setBoolean("mockrm.webapp.enabled", true);
    conf.setBoolean(YarnConfiguration.IS_MINI_YARN_CLUSTER, true);  // the RM reports its port
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:0");
    conf.set(YarnConfiguration.YARN_WEBAPP_CUSTOM_WEBSERVICE_CLASS,
        YarnDrfWebServices.class.getName());
    conf.set(YarnConfiguration.RM_SCHEDULER, CapacityScheduler.class.getName());
    DefaultMetricsSystem.setMiniClusterMode(true);  // as FakeCore.startRm
    MockRM rm = new MockRM(conf);
    rm.start();
    try {
      URL url = new URL("http://" + WebAppUtils.getRMWebAppURLWithoutScheme(rm.getConfig())
          + "/ws/v1/cluster/scheduler");
      HttpURLConnection c = (HttpURLConnection) url.openConnection();
      assertEquals(200, c.getResponseCode());
      JsonNode doc;
      try (InputStream in = c.getInputStream()) {
        doc = new ObjectMapper().readTree(in);
      }
      JsonNode info = doc.path("scheduler").path("schedulerInfo");
      assertEquals("capacityScheduler", info.path("type").asText(), doc.toString());
      assertEquals("default", info.path("queues").path("queue").get(0).path("queueName").asText());
    } finally {
      rm.stop();
    }
  }
}

package org.yarndrf.shim.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Resource;
import org.junit.jupiter.api.Test;
import org.yarndrf.shim.ShimConf;
import org.yarndrf.shim.YarnDrfScheduler;

class SchedulerPageTest {
  private static YarnDrfScheduler scheduler(String dashboardUrl) {
    Configuration conf = new Configuration(false);
    if (dashboardUrl != null) {
      conf.set(ShimConf.DASHBOARD_URL, dashboardUrl);
    }
    YarnDrfScheduler scheduler = new YarnDrfScheduler();
    scheduler.setConf(conf);
    return scheduler;
  }

  @Test
  void theOperatorsDashboardUrlIsLinkedAsGiven() {
    assertEquals("https://gateway.example.org/rm1/yarn-drf/ui/", SchedulerPage.dashboardAddress(
        scheduler("https://gateway.example.org/rm1/yarn-drf/ui/")));
    assertEquals("http://127.0.0.1:8080/ui/",
        SchedulerPage.dashboardAddress(scheduler(" http://127.0.0.1:8080/ui/ ")));
  }

  @Test
  void noAddressIsGivenWhenTheRmCannotKnowIt() {
    assertNull(SchedulerPage.dashboardAddress(scheduler(null)), "no core has reported a port");
    assertNull(SchedulerPage.dashboardAddress(scheduler("javascript:alert(1)")));
    assertNull(SchedulerPage.dashboardAddress(null), "another scheduler");
  }

  @Test
  void amountsNameTheTypesInUseAndWeightsDropATrailingZero() {
    assertEquals("memory-mb 2048, vcores 2", SchedulerPage.amounts(Resource.newInstance(2048, 2)));
    assertEquals("-", SchedulerPage.amounts(Resource.newInstance(0, 0)));
    assertEquals("2", SchedulerPage.number(2f));
    assertEquals("1.5", SchedulerPage.number(1.5f));
  }
}

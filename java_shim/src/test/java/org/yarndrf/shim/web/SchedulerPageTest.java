package org.yarndrf.shim.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Resource;
import org.junit.jupiter.api.Test;
import org.yarndrf.shim.ShimConf;

class SchedulerPageTest {
  private static Configuration serve(String command) {
    Configuration conf = new Configuration(false);
    if (command != null) {
      conf.set(ShimConf.SERVE_COMMAND, command);
    }
    return conf;
  }

  @Test
  void theDashboardIsAtTheStatusPortOfTheServeCommandTheRmStarts() {
    assertEquals("http://127.0.0.1:25335/ui/",
        SchedulerPage.dashboardAddress(serve("yarn-drf serve --status-port 25335")));
    assertEquals("http://127.0.0.1:4040/ui/",
        SchedulerPage.dashboardAddress(serve("/opt/venv/bin/yarn-drf serve --status-port=4040 --status-token-file f")));
  }

  @Test
  void noAddressIsGivenWhenTheRmCannotKnowIt() {
    assertNull(SchedulerPage.dashboardAddress(serve(null)));  // the default command has no status port
    assertNull(SchedulerPage.dashboardAddress(serve("yarn-drf serve --status-port")));
    assertNull(SchedulerPage.dashboardAddress(serve("yarn-drf serve --status-port 0")));
    assertNull(SchedulerPage.dashboardAddress(serve("yarn-drf serve --status-port 70000")));
    assertNull(SchedulerPage.dashboardAddress(serve("yarn-drf serve --status-port 80\"><script>")));
    Configuration external = serve("yarn-drf serve --status-port 25335");
    external.set(ShimConf.SERVE_MODE, "external");  // the command is not what runs the core then
    assertNull(SchedulerPage.dashboardAddress(external));
  }

  @Test
  void amountsNameTheTypesInUseAndWeightsDropATrailingZero() {
    assertEquals("memory-mb 2048, vcores 2", SchedulerPage.amounts(Resource.newInstance(2048, 2)));
    assertEquals("-", SchedulerPage.amounts(Resource.newInstance(0, 0)));
    assertEquals("2", SchedulerPage.number(2f));
    assertEquals("1.5", SchedulerPage.number(1.5f));
  }
}

package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.Test;

/** The shim's keys per ResourceManager, with HA's convention (`KEY.RMID`). */
class ShimConfTest {
  private static Configuration ha(String rmId) {
    Configuration conf = new Configuration(false);
    conf.setBoolean(YarnConfiguration.RM_HA_ENABLED, true);
    conf.set(YarnConfiguration.RM_HA_IDS, "rm1,rm2");
    conf.set(YarnConfiguration.RM_HA_ID, rmId);
    conf.set(ShimConf.PORT, "25334");
    conf.set(ShimConf.PORT + ".rm1", "25401");
    conf.set(ShimConf.PORT + ".rm2", "25402");
    conf.set(ShimConf.QUEUES_FILE + ".rm2", "/etc/rm2/queues.yaml");
    conf.set(ShimConf.TIMEOUT_MS, "300");
    return conf;
  }

  @Test
  void aKeySuffixedWithThisRmsIdOverridesTheKeyAndOtherRmsKeysDoNot() {
    Configuration rm1 = ShimConf.forRm(ha("rm1"), ShimConf.rmId(ha("rm1")));
    assertEquals(25401, rm1.getInt(ShimConf.PORT, 0));
    assertNull(rm1.get(ShimConf.QUEUES_FILE));
    assertEquals(300, rm1.getInt(ShimConf.TIMEOUT_MS, 0), "an unsuffixed key applies to both");
    Configuration rm2 = ShimConf.forRm(ha("rm2"), "rm2");
    assertEquals(25402, rm2.getInt(ShimConf.PORT, 0));
    assertEquals("/etc/rm2/queues.yaml", rm2.get(ShimConf.QUEUES_FILE));
  }

  @Test
  void withoutHaTheSuffixedKeysAreIgnoredAndTheConfigurationIsKept() {
    Configuration conf = ha("rm1");
    conf.setBoolean(YarnConfiguration.RM_HA_ENABLED, false);
    assertNull(ShimConf.rmId(conf));
    assertSame(conf, ShimConf.forRm(conf, null));
    assertEquals(25334, ShimConf.forRm(conf, null).getInt(ShimConf.PORT, 0));
  }

  @Test
  void theRmIdIsFoundFromTheRmsAddressWhenNotGiven() {
    Configuration conf = ha("rm1");
    conf.unset(YarnConfiguration.RM_HA_ID);
    conf.set(YarnConfiguration.RM_ADDRESS + ".rm1", "192.0.2.1:8032");
    conf.set(YarnConfiguration.RM_ADDRESS + ".rm2", "127.0.0.1:8032");
    assertEquals("rm2", ShimConf.rmId(conf), "HAUtil: the id whose address is this host's");
  }

  @Test
  void portZeroIsRefusedInExternalModeWhereNoChildCanReportItsPort() {
    Configuration conf = new Configuration(false);
    conf.set(ShimConf.SERVE_MODE, "external");
    conf.setInt(ShimConf.PORT, 0);
    IOException e = assertThrows(IOException.class, () -> CoreLauncher.connect(conf, new QueuesFile(null, conf, null)));
    assertTrue(e.getMessage().contains("or 0 for any free port when yarn-drf.serve.mode=child"),
        e.getMessage());
  }
}

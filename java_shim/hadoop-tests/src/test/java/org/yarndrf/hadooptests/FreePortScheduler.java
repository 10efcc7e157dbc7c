package org.yarndrf.hadooptests;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.apache.hadoop.conf.Configuration;
import org.yarndrf.shim.ShimConf;
import org.yarndrf.shim.YarnDrfScheduler;

/**
 * Interim, until the shim takes yarn-drf.bridge.port=0: yarn-drf with a bridge port of its own
 * per scheduler object, as several ResourceManagers of one test share one configuration.
 */
public class FreePortScheduler extends YarnDrfScheduler {
  @Override
  public void serviceInit(Configuration conf) throws Exception {
    Configuration own = new Configuration(conf);
    own.setInt(ShimConf.PORT, freePort());
    super.serviceInit(own);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }
}

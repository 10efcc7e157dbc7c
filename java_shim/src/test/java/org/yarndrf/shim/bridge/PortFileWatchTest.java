package org.yarndrf.shim.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PortFileWatchTest {
  @Test
  void aPortFileWrittenByARenameIsReportedAndOtherFilesAreNot(@TempDir Path dir) throws Exception {
    Semaphore written = new Semaphore(0);
    Path ports = dir.resolve("ports");
    try (PortFileWatch watch = PortFileWatch.start(ports, written::release)) {
      Files.write(dir.resolve("token"), "t".getBytes(StandardCharsets.UTF_8));
      // As `yarn-drf serve --port-file` writes it: a part file renamed over the name.
      Path part = Files.write(dir.resolve(".ports.123"),
          "bridge.port=1\nstatus.port=0\n".getBytes(StandardCharsets.UTF_8));
      Files.move(part, ports, StandardCopyOption.ATOMIC_MOVE);
      assertTrue(written.tryAcquire(60, TimeUnit.SECONDS), "the port file's rename was reported");
      assertEquals(0, written.availablePermits(), "once, and not for the token or the part file");
    }
  }
}

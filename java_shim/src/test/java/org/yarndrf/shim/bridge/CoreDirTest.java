package org.yarndrf.shim.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The core directories a ResourceManager JVM killed with SIGKILL leaves behind (its stop never
 * ran) go when the next core is made on the host; those of live JVMs stay.
 */
class CoreDirTest {
  private static final String ME = ManagementFactory.getRuntimeMXBean().getName().split("@")[0];

  @TempDir
  Path tmp;

  @Test
  void aNewCoreDirIsNamedForThisJvm() throws Exception {
    try (CoreDir dir = CoreDir.create(tmp)) {
      String name = dir.path().getFileName().toString();
      assertTrue(name.startsWith("yarn-drf-" + ME + "." + CoreDir.startTicks(ME) + "-"), name);
    }
  }

  @Test
  void theDirectoryOfAJvmThatIsGoneIsDeletedWithItsTokenWhenTheNextCoreIsMade() throws Exception {
    Process gone = new ProcessBuilder("sh", "-c", "echo $$; exec sleep 60").start();
    String pid = firstLine(gone);
    String start = CoreDir.startTicks(pid);
    assertNotNull(start);
    gone.destroyForcibly();
    gone.waitFor();
    Path left = Files.createDirectory(tmp.resolve("yarn-drf-" + pid + "." + start + "-42"));
    Files.write(left.resolve("token"), new byte[] {1, 2, 3});

    try (CoreDir fresh = CoreDir.create(tmp)) {
      assertFalse(Files.exists(left), "the dead JVM's directory and token are gone");
      assertTrue(Files.isDirectory(fresh.path()));
    }
  }

  @Test
  void aReusedPidDoesNotKeepTheDirectoryOfTheJvmThatHadItBefore() throws Exception {
    // A restarted container's RM often gets the pid its killed predecessor had: the start differs.
    long start = Long.parseLong(CoreDir.startTicks(ME));
    Path earlier = Files.createDirectory(tmp.resolve("yarn-drf-" + ME + "." + (start - 1) + "-7"));

    assertEquals(1, CoreDir.sweepStale(tmp));
    assertFalse(Files.exists(earlier));
  }

  @Test
  void directoriesOfLiveJvmsAndOfOtherNamesStay() throws Exception {
    Process live = new ProcessBuilder("sh", "-c", "echo $$; exec sleep 60").start();
    try {
      String pid = firstLine(live);
      Path ofLive = Files.createDirectory(tmp.resolve("yarn-drf-" + pid + "." + CoreDir.startTicks(pid) + "-1"));
      Path ofThisJvm = Files.createDirectory(tmp.resolve("yarn-drf-" + ME + "." + CoreDir.startTicks(ME) + "-2"));
      Path olderName = Files.createDirectory(tmp.resolve("yarn-drf-123456789"));
      Path aFile = Files.createFile(tmp.resolve("yarn-drf-1.1-1"));

      assertEquals(0, CoreDir.sweepStale(tmp));
      for (Path p : new Path[] {ofLive, ofThisJvm, olderName, aFile}) {
        assertTrue(Files.exists(p), p.toString());
      }
    } finally {
      live.destroyForcibly();
    }
  }

  private static String firstLine(Process p) throws Exception {
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    return out.readLine().trim();
  }
}

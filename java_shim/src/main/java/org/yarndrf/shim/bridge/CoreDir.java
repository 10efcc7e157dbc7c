package org.yarndrf.shim.bridge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The private directory of one core (mode 700, under java.io.tmpdir): the bridge token the child
 * reads when no token file is configured, the port file the child writes, and the RM's copies of
 * a queue file read through its configuration provider. Deleted whole when the core stops, so a
 * ResourceManager that becomes active and standby again many times in one JVM leaves none behind.
 */
public final class CoreDir implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CoreDir.class);
  private static final String OWNER_ONLY_DIR = "rwx------";
  private static final String OWNER_ONLY_FILE = "rw-------";

  private final Path dir;

  private CoreDir(Path dir) {
    this.dir = dir;
  }

  public static CoreDir create() throws IOException {
    return new CoreDir(Files.createTempDirectory("yarn-drf-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(OWNER_ONLY_DIR))));
  }

  public Path path() {
    return dir;
  }

  /** Where the child writes the ports it listens on (`yarn-drf serve --port-file`). */
  public Path portFile() {
    return dir.resolve("ports");
  }

  /**
   * Writes `content` to the file `name` here, readable by the RM's user only, replacing it whole:
   * a reader (the core's file watcher) sees the old content or the new, never a part. Returns its
   * path.
   */
  public Path writePrivate(String name, byte[] content) throws IOException {
    Path file = dir.resolve(name);
    Path part = dir.resolve("." + name + ".part");
    Files.deleteIfExists(part);
    Files.createFile(part,
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(OWNER_ONLY_FILE)));
    Files.write(part, content);
    return Files.move(part, file, StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  public Path writeToken(String token) throws IOException {
    return writePrivate("token", token.getBytes(StandardCharsets.UTF_8));
  }

  /** Deletes the directory and everything in it; what cannot be deleted is logged, not thrown. */
  @Override
  public void close() {
    List<Path> paths;
    try (Stream<Path> walk = Files.walk(dir)) {
      paths = walk.sorted(Comparator.reverseOrder()).collect(Collectors.toList());
    } catch (IOException e) {
      if (Files.exists(dir)) {
        LOG.warn("yarn-drf: cannot list the private directory {} to delete it: {}", dir, e.toString());
      }
      return;
    }
    for (Path p : paths) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException e) {
        LOG.warn("yarn-drf: cannot delete {}: {}", p, e.toString());
      }
    }
  }
}

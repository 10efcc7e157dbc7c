package org.yarndrf.shim.bridge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.lang.management.ManagementFactory;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The private directory of one core (mode 700, under java.io.tmpdir): the bridge token the child
 * reads when no token file is configured, the port file the child writes, and the RM's copies of
 * a queue file read through its configuration provider. Deleted whole when the core stops, so a
 * ResourceManager that becomes active and standby again many times in one JVM leaves none behind.
 *
 * <p>A JVM killed with SIGKILL (or crashed) never stops its core: its directory stays. The name
 * says whose it is (`yarn-drf-PID.START-N`: the RM JVM's pid and its start time in clock ticks
 * since boot, field 22 of /proc/PID/stat), so the next core made on the host deletes the
 * directories of JVMs that are gone ({@link #sweepStale}). Where there is no /proc (not Linux),
 * names carry no owner and nothing is swept.
 */
public final class CoreDir implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CoreDir.class);
  private static final String OWNER_ONLY_DIR = "rwx------";
  private static final String OWNER_ONLY_FILE = "rw-------";
  private static final String PREFIX = "yarn-drf-";
  private static final Pattern NAME = Pattern.compile(Pattern.quote(PREFIX) + "(\\d+)\\.(\\d+)-\\d+");

  private final Path dir;

  private CoreDir(Path dir) {
    this.dir = dir;
  }

  public static CoreDir create() throws IOException {
    return create(tmpdir());
  }

  /** {@link #sweepStale(Path)} of java.io.tmpdir, where cores' directories are made. */
  public static int sweepStale() {
    return sweepStale(tmpdir());
  }

  private static Path tmpdir() {
    return Paths.get(System.getProperty("java.io.tmpdir"));
  }

  /** A new directory under `parent`, after deleting those there of RM JVMs that are gone. */
  static CoreDir create(Path parent) throws IOException {
    sweepStale(parent);
    String pid = ManagementFactory.getRuntimeMXBean().getName().split("@")[0];
    String start = startTicks(pid);
    return new CoreDir(Files.createTempDirectory(parent,
        PREFIX + (start == null ? "" : pid + "." + start + "-"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(OWNER_ONLY_DIR))));
  }

  /**
   * Deletes the core directories under `parent` whose JVM is gone: no process has their pid with
   * their start time (pids are reused: the RM of a restarted container often gets the same one).
   * Directories of another user, of another name (older RMs) or that are links are left alone.
   * Returns how many it deleted.
   */
  static int sweepStale(Path parent) {
    int deleted = 0;
    String me = System.getProperty("user.name");
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(parent, PREFIX + "*")) {
      for (Path d : dirs) {
        Matcher m = NAME.matcher(d.getFileName().toString());
        if (m.matches() && Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)
            && me.equals(Files.getOwner(d, LinkOption.NOFOLLOW_LINKS).getName())
            && !m.group(2).equals(startTicks(m.group(1)))) {
          new CoreDir(d).close();
          LOG.info("yarn-drf: deleted {}, left by a ResourceManager JVM that is gone", d);
          deleted++;
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("yarn-drf: cannot look for core directories left under {}: {}", parent, e.toString());
    }
    return deleted;
  }

  /** When process `pid` started, in clock ticks since boot; null when there is no such process. */
  static String startTicks(String pid) {
    String stat;
    try {
      stat = new String(Files.readAllBytes(Paths.get("/proc", pid, "stat")), StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException gone) {
      return null;
    }
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return fields.length > 19 ? fields[19] : null;
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

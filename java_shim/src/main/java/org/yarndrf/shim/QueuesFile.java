package org.yarndrf.shim;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.FileSystemBasedConfigurationProvider;
import org.apache.hadoop.yarn.conf.ConfigurationProvider;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yarndrf.shim.bridge.CoreDir;

/**
 * The queue file the core reads, as yarn-drf.queues.file names it.
 *
 * <p>When the RM reads its configuration through a FileSystemBasedConfigurationProvider
 * (yarn.resourcemanager.configuration.provider-class), the name is a file of that store: a
 * relative name under yarn.resourcemanager.configuration.file-system-based-store, as
 * CapacityScheduler finds capacity-scheduler.xml there; so both RMs of an HA pair read one file.
 * The core reads local files only, and reloads only the file it was started with, so it runs a
 * private copy ({@link #COPY} in its private directory, at most {@link #MAX_BYTES}), written when
 * its first child starts and rewritten at every reinitialize. A content the core refuses is
 * replaced by the one in force again, so a child restarted after a crash never reads it.
 * Otherwise the name is a local path, which the core reads itself.
 */
final class QueuesFile {
  private static final Logger LOG = LoggerFactory.getLogger(QueuesFile.class);
  /** The largest queue file the core takes (scheduler/bounded_yaml.py): larger is not copied. */
  static final int MAX_BYTES = 1 << 20;
  /** The copy's name in the core's private directory. */
  static final String COPY = "queues.yaml";

  private final Configuration conf;
  private final RMContext rmContext;
  /** The file as last named (yarn-drf.queues.file); null if none is. */
  private volatile String name;
  /** The store's content in force, and the one a reload is trying; null before the first. */
  private byte[] inForce;
  private byte[] trying;

  /** @param rmContext whose configuration provider tells where the name is; null: local */
  QueuesFile(String name, Configuration conf, RMContext rmContext) {
    this.name = name;
    this.conf = conf;
    this.rmContext = rmContext;
  }

  String name() {
    return name;
  }

  /** Before the core starts: the file it will read (no core to ask yet, so nothing to check). */
  void rename(String newName) {
    name = newName;
  }

  /**
   * The path a starting child reads: the local file, or the copy of the store's file in force
   * (read from the store for the first child, rewritten for a restarted one).
   */
  synchronized String forChild(CoreDir dir) throws IOException {
    FileSystemBasedConfigurationProvider store = store();
    if (store == null || name == null) {
      return name;
    }
    if (inForce == null) {
      inForce = read(store, name);
    }
    return dir.writePrivate(COPY, inForce).toString();
  }

  /**
   * What a reload of `newName` asks the core to read: the local path, or the copy rewritten with
   * the store's file as it is now.
   */
  synchronized String candidate(String newName, CoreDir dir) throws IOException {
    FileSystemBasedConfigurationProvider store = store();
    if (store == null || newName == null) {
      return newName;
    }
    trying = read(store, newName);
    return dir.writePrivate(COPY, trying).toString();
  }

  /** The core took the candidate of `newName`: it is the file in force now. */
  synchronized void accepted(String newName) {
    name = newName;
    if (trying != null) {
      inForce = trying;
      trying = null;
    }
  }

  /** The core refused the candidate, or did not answer: the copy holds what is in force again. */
  synchronized void refused(CoreDir dir) throws IOException {
    if (trying != null && inForce != null) {
      dir.writePrivate(COPY, inForce);
    }
    trying = null;
  }

  private FileSystemBasedConfigurationProvider store() {
    ConfigurationProvider provider = rmContext == null ? null
        : rmContext.getConfigurationProvider();
    return provider instanceof FileSystemBasedConfigurationProvider
        ? (FileSystemBasedConfigurationProvider) provider : null;
  }

  private byte[] read(FileSystemBasedConfigurationProvider store, String file)
      throws IOException {
    org.apache.hadoop.fs.Path given = new org.apache.hadoop.fs.Path(file);
    String where = given.isAbsolute() || given.toUri().getScheme() != null ? file
        : new org.apache.hadoop.fs.Path(store.getConfigDir(), file).toString();
    byte[] content;
    try (InputStream in = store.getConfigurationInputStream(conf, where)) {
      if (in == null) {
        throw new IOException("yarn-drf: " + ShimConf.QUEUES_FILE + " " + where + " is not in the "
            + "configuration store (" + store.getClass().getSimpleName() + ")");
      }
      content = readAtMost(in, MAX_BYTES + 1);
    } catch (YarnException e) {
      throw new IOException("yarn-drf: cannot read " + ShimConf.QUEUES_FILE + " " + where
          + " from the configuration store: " + e.getMessage(), e);
    }
    if (content.length > MAX_BYTES) {
      throw new IOException("yarn-drf: " + ShimConf.QUEUES_FILE + " " + where + " is larger than "
          + MAX_BYTES + " bytes, the most the core reads; not copied");
    }
    LOG.info("yarn-drf: read the queue file {} from the configuration store", where);
    return content;
  }

  private static byte[] readAtMost(InputStream in, int limit) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    for (int n; out.size() < limit && (n = in.read(buf, 0, Math.min(buf.length,
        limit - out.size()))) > 0;) {
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }
}

package org.yarndrf.shim.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IOUtils;

/**
 * The record as a file in a directory of any Hadoop FileSystem (HDFS, the local one, an object
 * store), written whole to a temporary file and renamed over the record as FileSystemRMStateStore
 * replaces its files, so a reader never sees half a record. A reader that finds only the
 * temporary file (the writer died between the two steps) takes it: it was complete before the
 * rename began.
 */
public final class FsRecordStore implements RecordStore {
  static final String FILE_NAME = "preemption-state.json";

  private final FileSystem fs;
  private final Path file;
  private final Path written;
  private final long maxBytes;

  /** `maxBytes`: a larger file is refused unread (it is no record of ours). */
  public FsRecordStore(Configuration conf, String dir, long maxBytes) throws IOException {
    Path d = new Path(dir);
    this.fs = d.getFileSystem(conf);
    this.file = new Path(d, FILE_NAME);
    this.written = new Path(d, FILE_NAME + ".tmp");
    this.maxBytes = maxBytes;
  }

  @Override
  public String read() throws IOException {
    Path from = fs.exists(file) ? file : fs.exists(written) ? written : null;
    if (from == null) {
      return null;
    }
    long length = fs.getFileStatus(from).getLen();
    if (length > maxBytes) {
      throw new IOException(from + " is " + length + " bytes, more than a record (" + maxBytes + ")");
    }
    byte[] data = new byte[(int) length];
    try (InputStream in = fs.open(from)) {
      IOUtils.readFully(in, data, 0, data.length);
    }
    return new String(data, StandardCharsets.UTF_8);
  }

  @Override
  public void write(String record) throws IOException {
    fs.mkdirs(file.getParent());
    try (FSDataOutputStream out = fs.create(written, true)) {
      out.write(record.getBytes(StandardCharsets.UTF_8));
    }
    fs.delete(file, false);
    if (!fs.rename(written, file)) {
      throw new IOException("cannot rename " + written + " to " + file);
    }
  }

  @Override
  public void close() {
    // The FileSystem instance is Hadoop's cached one, shared with the RM: not ours to close.
  }

  @Override
  public String describe() {
    return "file " + file;
  }
}

package org.yarndrf.shim.bridge;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;

/**
 * Tells the shim the moment a child writes its port file (`yarn-drf serve --port-file`: once, by a
 * rename, which a directory watch sees as a creation), so that nothing polls for it: on Linux
 * java.nio's WatchService is inotify, whose events wake the watch's thread. The scheduling loop
 * sleeps until then instead of calling a core that is not listening yet and backing off.
 */
public final class PortFileWatch implements AutoCloseable {
  private final WatchService watcher;
  private final Path name;
  private final Runnable onWritten;

  private PortFileWatch(WatchService watcher, Path name, Runnable onWritten) {
    this.watcher = watcher;
    this.name = name;
    this.onWritten = onWritten;
  }

  /**
   * Watches `file` from a daemon thread of its own, which runs `onWritten` whenever the file is
   * (re)written, until {@link #close}. Throws when the directory cannot be watched (the system's
   * limit of inotify instances reached).
   */
  public static PortFileWatch start(Path file, Runnable onWritten) throws IOException {
    WatchService watcher = file.getFileSystem().newWatchService();
    try {
      file.getParent().register(watcher, StandardWatchEventKinds.ENTRY_CREATE,
          StandardWatchEventKinds.ENTRY_MODIFY);
    } catch (IOException | RuntimeException e) {
      watcher.close();
      throw e;
    }
    PortFileWatch watch = new PortFileWatch(watcher, file.getFileName(), onWritten);
    Thread thread = new Thread(watch::run, "yarn-drf-port-file-watch");
    thread.setDaemon(true);
    thread.start();
    return watch;
  }

  private void run() {
    try {
      while (true) {
        WatchKey key = watcher.take();
        boolean written = false;
        for (WatchEvent<?> event : key.pollEvents()) {
          // An overflow lost events, the file's among them perhaps: the callback reads the file.
          written |= event.kind() == StandardWatchEventKinds.OVERFLOW || name.equals(event.context());
        }
        key.reset();
        if (written) {
          onWritten.run();
        }
      }
    } catch (InterruptedException | ClosedWatchServiceException stopped) {
      // closed: the core stopped
    }
  }

  @Override
  public void close() {
    try {
      watcher.close();
    } catch (IOException e) {
      // nothing is watched any more either way
    }
  }
}

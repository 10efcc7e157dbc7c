package org.yarndrf.shim.bridge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * The live processes of this machine whose command line has a given argument, read from /proc
 * (Linux): how the tests see the `yarn-drf serve` children a scheduler started, with no handle
 * on them. A zombie has an empty command line and so does not count.
 */
public final class LiveProcesses {
  private LiveProcesses() {
  }

  /** The command lines (arguments joined by spaces) of processes with `argument` among theirs. */
  public static List<String> withArgument(String argument) throws IOException {
    List<String> out = new ArrayList<>();
    try (DirectoryStream<Path> procs = Files.newDirectoryStream(Paths.get("/proc"), "[0-9]*")) {
      for (Path proc : procs) {
        byte[] raw;
        try {
          raw = Files.readAllBytes(proc.resolve("cmdline"));
        } catch (IOException gone) {
          continue;  // ended while we looked
        }
        String[] args = new String(raw, StandardCharsets.UTF_8).split("\0");
        for (String a : args) {
          if (a.equals(argument)) {
            out.add(String.join(" ", args));
            break;
          }
        }
      }
    }
    return out;
  }
}

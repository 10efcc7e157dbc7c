package org.yarndrf.shim.bridge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The live processes of this machine whose command line has a given argument, read from /proc
 * (Linux): how the tests see the `yarn-drf serve` children a scheduler started, with no handle
 * on them. A zombie has an empty command line and so does not count.
 */
public final class LiveProcesses {
  private LiveProcesses() {
  }

  /** The argument lists, by pid, of the processes with `argument` among their arguments. */
  public static Map<Integer, List<String>> withArgument(String argument) throws IOException {
    Map<Integer, List<String>> out = new TreeMap<>();
    try (DirectoryStream<Path> procs = Files.newDirectoryStream(Paths.get("/proc"), "[0-9]*")) {
      for (Path proc : procs) {
        byte[] raw;
        try {
          raw = Files.readAllBytes(proc.resolve("cmdline"));
        } catch (IOException gone) {
          continue;  // ended while we looked
        }
        List<String> args = Arrays.asList(new String(raw, StandardCharsets.UTF_8).split("\0"));
        if (args.contains(argument)) {
          out.put(Integer.valueOf(proc.getFileName().toString()), args);
        }
      }
    }
    return out;
  }

  /** The value following `option` in `args`, or null. */
  public static String option(List<String> args, String option) {
    int i = args.indexOf(option);
    return i < 0 || i + 1 >= args.size() ? null : args.get(i + 1);
  }
}

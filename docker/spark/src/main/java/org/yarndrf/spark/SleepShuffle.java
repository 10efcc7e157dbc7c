package org.yarndrf.spark;

import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * The project's own Spark job (Maven Central has no spark-examples for YARN): TASKS tasks that
 * each sleep TASK_MS, a shuffle that gathers their numbers by the executor that ran them, a check
 * of the count and sum against the formula, then IDLE_S seconds with nothing to run, during which
 * dynamic allocation gives every executor back.
 *
 * <pre>SleepShuffle TASKS TASK_MS [IDLE_S]</pre>
 *
 * It prints one line, {@code SleepShuffle: 16 tasks on 4 executor(s), sum 120 (expected 120)},
 * and fails (non-zero exit, app FAILED) when the shuffle lost or duplicated a record.
 */
public final class SleepShuffle {
  private SleepShuffle() {
  }

  public static void main(String[] args) throws InterruptedException {
    if (args.length < 2 || args.length > 3) {
      System.err.println("usage: SleepShuffle TASKS TASK_MS [IDLE_S]");
      System.exit(2);
    }
    int tasks = Integer.parseInt(args[0]);
    long taskMs = Long.parseLong(args[1]);
    long idleS = args.length == 3 ? Long.parseLong(args[2]) : 0;
    // spark-submit names the app (--name, else the class name).
    try (JavaSparkContext sc = new JavaSparkContext(new SparkConf())) {
      List<Integer> numbers = IntStream.range(0, tasks).boxed().collect(Collectors.toList());
      // Keyed by executor id: the shuffle's output says how many executors did the work.
      List<Tuple2<String, long[]>> byExecutor = sc.parallelize(numbers, tasks)
          .mapToPair(i -> {
            Thread.sleep(taskMs);
            return new Tuple2<>(SparkEnv.get().executorId(), new long[] {1, i});
          })
          .reduceByKey((a, b) -> new long[] {a[0] + b[0], a[1] + b[1]})
          .collect();
      long count = byExecutor.stream().mapToLong(t -> t._2()[0]).sum();
      long sum = byExecutor.stream().mapToLong(t -> t._2()[1]).sum();
      long expected = (long) tasks * (tasks - 1) / 2;
      System.out.printf("SleepShuffle: %d tasks on %d executor(s), sum %d (expected %d)%n",
          count, byExecutor.size(), sum, expected);
      if (count != tasks || sum != expected) {
        throw new IllegalStateException("the shuffle returned " + count + " records summing to "
            + sum + "; expected " + tasks + " summing to " + expected);
      }
      Thread.sleep(idleS * 1000);
    }
  }
}

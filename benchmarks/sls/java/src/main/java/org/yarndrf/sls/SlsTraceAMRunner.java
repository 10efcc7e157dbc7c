package org.yarndrf.sls;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.sls.AMDefinition;
import org.apache.hadoop.yarn.sls.AMDefinitionFactory;
import org.apache.hadoop.yarn.sls.AMRunner;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.SLSRunner.TraceType;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerWrapper;
import org.apache.hadoop.yarn.sls.scheduler.SlsMetricsAccess;
import org.apache.hadoop.yarn.sls.scheduler.TaskRunner;

/**
 * SLS 3.4's AMRunner reads SLS-format traces as Map&lt;String, String&gt;, so the "job.tasks"
 * array of every job fails to deserialize ("Cannot deserialize value of type String from Array")
 * and no SLS-format job ever starts. This runner reads each job untyped, as SLS did before, and
 * hands it to SLS's own AMDefinitionFactory and AM start-up; other trace types are SLS's own path.
 */
final class SlsTraceAMRunner extends AMRunner {
  private final SLSRunner sls;
  private TraceType inputType;
  private String[] inputTraces;
  private ResourceManager rm;

  SlsTraceAMRunner(TaskRunner runner, SLSRunner sls) {
    super(runner, sls);
    this.sls = sls;
  }

  @Override
  public void setResourceManager(ResourceManager rm) {
    super.setResourceManager(rm);
    this.rm = rm;
  }

  @Override
  public void setInputType(TraceType inputType) {
    super.setInputType(inputType);
    this.inputType = inputType;
  }

  @Override
  public void setInputTraces(String[] inputTraces) {
    super.setInputTraces(inputTraces);
    this.inputTraces = inputTraces.clone();
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void startAM() throws YarnException, IOException {
    // Runs after the RM started and before any AM: the moment to patch SLS's queue booking.
    SchedulerMetrics metrics = ((SchedulerWrapper) rm.getResourceScheduler()).getSchedulerMetrics();
    if (metrics != null) {
      try {
        SlsMetricsAccess.tolerateUnmappedQueue(metrics);
      } catch (ReflectiveOperationException e) {
        throw new YarnException("this SLS version's SchedulerMetrics has changed: " + e, e);
      }
    }
    if (inputType != TraceType.SLS) {
      super.startAM();
      return;
    }
    try {
      Method startAMs = AMRunner.class.getDeclaredMethod("startAMs", AMDefinition.class);
      startAMs.setAccessible(true);
      ObjectMapper mapper = new ObjectMapper();
      for (String trace : inputTraces) {
        try (Reader input = new InputStreamReader(new FileInputStream(trace),
            StandardCharsets.UTF_8)) {
          Iterator<Map> jobs = mapper.readValues(new JsonFactory().createParser(input), Map.class);
          int n = 0;
          while (jobs.hasNext()) {
            n++;
            Map job = jobs.next();
            try {
              startAMs.invoke(this, AMDefinitionFactory.createFromSlsTrace(job, sls));
            } catch (ReflectiveOperationException | RuntimeException e) {
              Throwable cause = e.getCause() != null ? e.getCause() : e;
              throw new YarnException(trace + ": job #" + n + " (" + job.get("job.id")
                  + "): " + cause, cause);
            }
          }
        }
      }
      int numAMs = getAmMap().size();
      set("numAMs", numAMs);
      set("remainingApps", numAMs);
    } catch (ReflectiveOperationException e) {
      throw new YarnException("this SLS version's AMRunner has changed: " + e, e);
    }
  }

  private void set(String field, int value) throws ReflectiveOperationException {
    Field f = AMRunner.class.getDeclaredField(field);
    f.setAccessible(true);
    f.setInt(this, value);
  }

  /** Replaces the AMRunner an SLSRunner built for itself; call before SLSRunner.run. */
  static void install(SLSRunner sls) throws ReflectiveOperationException, YarnException {
    Field taskRunner = SLSRunner.class.getDeclaredField("runner");
    taskRunner.setAccessible(true);
    SlsTraceAMRunner am = new SlsTraceAMRunner((TaskRunner) taskRunner.get(null), sls);
    try {
      am.init(sls.getConf());
    } catch (ClassNotFoundException e) {
      throw new YarnException("an AM type class in sls-runner.xml is missing: " + e, e);
    }
    Field amRunner = SLSRunner.class.getDeclaredField("amRunner");
    amRunner.setAccessible(true);
    amRunner.set(sls, am);
  }
}

package io.beamsave.pipelines.runner;

import java.lang.reflect.Field;
import java.util.concurrent.ExecutionException;
import org.apache.beam.runners.core.metrics.MetricsContainerStepMap;
import org.apache.beam.runners.flink.FlinkDetachedRunnerResult;
import org.apache.beam.runners.flink.metrics.FlinkMetricContainer;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricResults;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.core.execution.JobClient;

/**
 * The end of a job submitted to a Flink cluster without waiting ({@code --attachedMode=false},
 * which beamsave sets so that it can poll the job every 100 ms; Flink's client backs off to 2 s).
 *
 * <p>Beam's detached result reads metrics from the cluster's live accumulators, which its REST
 * API serves from a copy of the job refreshed every few seconds: right after the job finishes
 * they can miss the last tasks' figures. The job's final result is exact, and it carries the
 * failure's cause chain when the job failed. Beam keeps the Flink client that fetches it in a
 * private field (Beam 2.62.0, pinned), read here by reflection.
 */
final class DetachedFlinkJob {
  private DetachedFlinkJob() {}

  /** Whether {@code result} is of a job submitted to a Flink cluster without waiting. */
  static boolean is(PipelineResult result) {
    return result instanceof FlinkDetachedRunnerResult;
  }

  /**
   * The finished job's metrics, or null when its client cannot be had (the caller then falls
   * back on the runner's result); throws the job's failure, translated, when it failed.
   */
  static MetricResults finalMetrics(PipelineResult result) {
    JobClient client = client(result);
    if (client == null) {
      return null;
    }
    JobExecutionResult r;
    try {
      r = client.getJobExecutionResult().get();
    } catch (ExecutionException e) {
      throw Job.translate(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
    Object metrics = r.getAllAccumulatorResults().get(FlinkMetricContainer.ACCUMULATOR_NAME);
    return metrics instanceof MetricsContainerStepMap m
        ? MetricsContainerStepMap.asAttemptedOnlyMetricResults(m)
        : null;
  }

  private static JobClient client(PipelineResult result) {
    try {
      Field f = result.getClass().getDeclaredField("jobClient");
      f.setAccessible(true);
      return f.get(result) instanceof JobClient c ? c : null;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }
}

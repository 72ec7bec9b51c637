package io.beamsave.pipelines.runner;

import io.beamsave.transforms.run.StageMetrics;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.DistributionResult;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricResults;
import org.apache.beam.sdk.metrics.MetricsFilter;

/** A finished (or running) job's wall time and the figures its transforms counted. */
public final class JobResult {
  private final PipelineResult result;
  private final double seconds;
  private final long startMillis;
  private MetricResults metrics;

  /** {@code finalMetrics}: the job's metrics when the runner's result does not hold them. */
  JobResult(PipelineResult result, MetricResults finalMetrics, double seconds, long startMillis) {
    this.result = result;
    this.metrics = finalMetrics;
    this.seconds = seconds;
    this.startMillis = startMillis;
  }

  /** Wall seconds from submitting the pipeline to its end, runner start-up included. */
  public double seconds() {
    return seconds;
  }

  public long counter(String name) {
    return counter(metrics(), name);
  }

  /** The final metrics, fetched once: on a Flink cluster each fetch is a request. */
  private MetricResults metrics() {
    if (metrics == null) {
      metrics = result.metrics();
    }
    return metrics;
  }

  static long counter(PipelineResult result, String name) {
    return counter(result.metrics(), name);
  }

  private static long counter(MetricResults metrics, String name) {
    MetricQueryResults q =
        metrics
            .queryMetrics(
                MetricsFilter.builder()
                    .addNameFilter(MetricNameFilter.named(StageMetrics.NAMESPACE, name))
                    .build());
    long sum = 0;
    for (MetricResult<Long> c : q.getCounters()) {
      Long v = c.getAttempted();
      sum += v == null ? 0 : v;
    }
    return sum;
  }

  /** Seconds from the first start to the last end each stage recorded, in the given order. */
  public Map<String, Double> stageSeconds(String... stages) {
    Map<String, Double> out = new LinkedHashMap<>();
    stageSpans(stages).forEach((k, v) -> out.put(k, Math.max(0, v[1] - v[0])));
    return out;
  }

  /**
   * When each stage started and ended, in seconds since the job was submitted: the gaps
   * between stages are the runner's own time (start-up, shuffles).
   */
  public Map<String, double[]> stageSpans(String... stages) {
    Map<String, Long> starts = new LinkedHashMap<>();
    Map<String, Long> ends = new LinkedHashMap<>();
    MetricQueryResults q =
        metrics()
            .queryMetrics(
                MetricsFilter.builder()
                    .addNameFilter(MetricNameFilter.inNamespace(StageMetrics.STAGE_NAMESPACE))
                    .build());
    for (MetricResult<DistributionResult> d : q.getDistributions()) {
      String name = d.getName().getName();
      DistributionResult v = d.getAttempted();
      if (v == null || v.getCount() == 0) {
        continue;
      }
      String stage = name.substring(0, name.lastIndexOf('.'));
      if (name.endsWith(".start")) {
        starts.merge(stage, v.getMin(), Math::min);
      } else {
        ends.merge(stage, v.getMax(), Math::max);
      }
    }
    Map<String, double[]> out = new LinkedHashMap<>();
    for (String s : stages) {
      Long a = starts.get(s);
      Long b = ends.get(s);
      out.put(
          s,
          a == null || b == null
              ? new double[] {0, 0}
              : new double[] {(a - startMillis) / 1000.0, (b - startMillis) / 1000.0});
    }
    return out;
  }
}

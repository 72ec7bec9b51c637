package io.beamsave.pipelines.runner;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.Hidden;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Where a run's workers run. {@link BeamOptions} decides it once, from the runner and the
 * Flink master the operator gave, and records it in the options ({@link Choice}); everything
 * else asks {@link #of}, so no layer guesses again from a runner's class name.
 *
 * <p>It matters in three ways: workers in this JVM write to this machine's disk and may take
 * what the launcher already read (a base image's catalog, a walk begun ahead); a Flink job's
 * progress is read from its REST API; and a cluster's workers share no memory and maybe no
 * disk with the launcher, so a run's working files go to the store.
 */
public enum Workers {
  /** The DirectRunner: the workers are this JVM's threads. */
  THIS_JVM,
  /** A Flink MiniCluster started in this JVM ({@code --flinkMaster=[local]} or none). */
  EMBEDDED_FLINK,
  /** A Flink session cluster: other JVMs, likely other machines. */
  FLINK_CLUSTER;

  /** Whether the workers are this JVM's threads, sharing its memory and disk. */
  public boolean inThisJvm() {
    return this == THIS_JVM;
  }

  /** Whether the job runs on Flink, whose progress and state come from its REST API. */
  public boolean flink() {
    return this != THIS_JVM;
  }

  /** Where the workers of a run with {@code options} run. */
  public static Workers of(PipelineOptions options) {
    Workers chosen = options.as(Choice.class).getWorkers();
    if (chosen != null) {
      return chosen;
    }
    // Options built without BeamOptions (tests' TestPipeline): the DirectRunner, or Flink's
    // default master, the embedded cluster.
    return options.getRunner().getSimpleName().equals("DirectRunner") ? THIS_JVM
        : EMBEDDED_FLINK;
  }

  /** The choice as {@link BeamOptions} records it; not an option the operator gives. */
  @Hidden
  public interface Choice extends PipelineOptions {
    @Description("Where the workers run, as beamsave decided from the runner and its master.")
    @Default.InstanceFactory(NoneYet.class)
    Workers getWorkers();

    void setWorkers(Workers workers);
  }

  /** No choice recorded: {@link #of} decides from the runner. */
  public static final class NoneYet implements org.apache.beam.sdk.options.DefaultValueFactory<Workers> {
    @Override
    public Workers create(PipelineOptions options) {
      return null;
    }
  }
}

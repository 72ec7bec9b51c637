package io.beamsave.pipelines.runner;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/** beamsave's own Beam option for Flink session clusters. */
public interface ClusterJarOptions extends PipelineOptions {
  @Description(
      "On a Flink session cluster that has this beamsave build's jar on its classpath"
          + " (deploy/flink/start-cluster.sh with BEAMSAVE_JAR, or the jar in Flink's lib/):"
          + " submit jobs without shipping the jar, so the TaskManagers keep its classes loaded"
          + " and compiled between jobs. The cluster's jar must be the same build.")
  @Default.Boolean(false)
  boolean getJarOnCluster();

  void setJarOnCluster(boolean value);
}

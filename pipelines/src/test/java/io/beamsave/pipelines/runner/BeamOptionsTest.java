package io.beamsave.pipelines.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.junit.jupiter.api.Test;

class BeamOptionsTest {
  static FlinkPipelineOptions flink(String... args) {
    return BeamOptions.parse(List.of(args)).as(FlinkPipelineOptions.class);
  }

  @Test
  void numberOfExecutionRetriesRunsTheJobWithTheTranslationBeamGivesThemTo() {
    FlinkPipelineOptions o = flink("--runner=FlinkRunner", "--flinkMaster=127.0.0.1:8081",
        "--numberOfExecutionRetries=4", "--executionRetryDelay=2500");
    assertThat(o.getUseDataStreamForBatch()).isTrue();
    assertThat(o.getNumberOfExecutionRetries()).isEqualTo(4);
    assertThat(o.getExecutionRetryDelay()).isEqualTo(2500);
  }

  @Test
  void theFlinkRunnerIsKnownHoweverBeamAllowsItToBeSpelt() {
    for (String runner : new String[] {"FlinkRunner", "flink", "Flink", "flinkrunner",
        "org.apache.beam.runners.flink.FlinkRunner"}) {
      assertThat(BeamOptions.namesFlink("--runner=" + runner)).as(runner).isTrue();
      assertThat(flink("--runner=" + runner, "--flinkMaster=127.0.0.1:8081").getFlinkMaster())
          .isEqualTo("127.0.0.1:8081");
    }
    assertThat(BeamOptions.namesFlink("--runner=DirectRunner")).isFalse();
  }

  @Test
  void withoutRetriesBatchJobsKeepTheDataSetTranslationAndTheClustersStrategy() {
    assertThat(flink("--runner=FlinkRunner", "--flinkMaster=127.0.0.1:8081")
        .getUseDataStreamForBatch()).isFalse();
    assertThat(flink("--runner=FlinkRunner", "--numberOfExecutionRetries=2",
        "--useDataStreamForBatch=false").getUseDataStreamForBatch())
        .as("the operator's choice stands").isFalse();
  }

  @Test
  void whereTheWorkersRunIsDecidedOnceAndCarriedByTheOptions() {
    assertThat(Workers.of(BeamOptions.parse(List.of()))).isEqualTo(Workers.THIS_JVM);
    assertThat(Workers.of(BeamOptions.parse(List.of("--runner=DirectRunner"))))
        .isEqualTo(Workers.THIS_JVM);
    assertThat(Workers.of(BeamOptions.parse(List.of("--runner=FlinkRunner"))))
        .isEqualTo(Workers.EMBEDDED_FLINK);
    assertThat(Workers.of(BeamOptions.parse(
        List.of("--runner=flink", "--flinkMaster=[local]")))).isEqualTo(Workers.EMBEDDED_FLINK);
    assertThat(Workers.of(BeamOptions.parse(
        List.of("--runner=FlinkRunner", "--flinkMaster=127.0.0.1:8081"))))
        .isEqualTo(Workers.FLINK_CLUSTER);
    assertThat(Workers.THIS_JVM.inThisJvm()).isTrue();
    assertThat(Workers.FLINK_CLUSTER.inThisJvm()).isFalse();
    assertThat(Workers.EMBEDDED_FLINK.flink()).isTrue();
  }
}

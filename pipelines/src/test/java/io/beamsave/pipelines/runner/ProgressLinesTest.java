package io.beamsave.pipelines.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProgressLinesTest {
  @TempDir Path dir;

  @Test
  void shardLinesShowBytesWhereKnownAndShardsOtherwise() {
    assertThat(Job.shardLine("verified", new FlinkProgress.Shards(6, 10), 2L << 30, 10, 3))
        .isEqualTo("verified ~1.2 GiB of 2.0 GiB (60%, 6 of 10 shards), 128.8 MB/s, ETA 3 s");
    assertThat(Job.shardLine("saved", new FlinkProgress.Shards(6, 17), 0, 10, -1))
        .isEqualTo("saved 6 of 17 shards (35%)");
    assertThat(Job.shardLine("saved", new FlinkProgress.Shards(4, 0), 0, 10, -1))
        .isEqualTo("saved 4 shards");
  }

  @Test
  void theRestAddressIsTheSessionClustersOrTheEmbeddedOnesConfiguredPort() throws Exception {
    assertThat(FlinkProgressPrinter.restAddress("flink-jm:8081", null))
        .isEqualTo(URI.create("http://flink-jm:8081"));
    assertThat(FlinkProgressPrinter.restAddress("[local]", null)).isNull();
    Files.writeString(dir.resolve("config.yaml"), "rest.address: 127.0.0.1\nrest.port: 40123\n");
    assertThat(FlinkProgressPrinter.restAddress("[local]", dir.toString()))
        .isEqualTo(URI.create("http://127.0.0.1:40123"));
  }

  @Test
  void theEmbeddedClusterGetsAConfigurationWithARestPortUnlessOneIsGiven() {
    FlinkPipelineOptions embedded =
        BeamOptions.parse(List.of("--runner=FlinkRunner", "--flinkMaster=[local]"))
            .as(FlinkPipelineOptions.class);
    assertThat(FlinkProgressPrinter.restAddress("[local]", embedded.getFlinkConfDir()))
        .isNotNull();
    FlinkPipelineOptions own =
        BeamOptions.parse(List.of("--runner=FlinkRunner", "--flinkConfDir=" + dir))
            .as(FlinkPipelineOptions.class);
    assertThat(own.getFlinkConfDir()).isEqualTo(dir.toString());
    FlinkPipelineOptions session =
        BeamOptions.parse(List.of("--runner=FlinkRunner", "--flinkMaster=jm:8081"))
            .as(FlinkPipelineOptions.class);
    assertThat(session.getFlinkConfDir()).isNull();
    // A session cluster's job is polled by beamsave, not waited for by Flink's client.
    assertThat(session.getAttachedMode()).isFalse();
    assertThat(embedded.getAttachedMode()).isTrue();
    FlinkPipelineOptions preinstalled =
        BeamOptions.parse(List.of("--runner=FlinkRunner", "--flinkMaster=jm:8081", "--jarOnCluster"))
            .as(FlinkPipelineOptions.class);
    assertThat(preinstalled.getFilesToStage()).hasSize(1);
    assertThat(Path.of(preinstalled.getFilesToStage().get(0))).isRegularFile();
  }

  /** What a run writes for Flink's sake is gone when its JVM exits. */
  @Test
  void theEmbeddedClustersConfigurationIsRemovedAtExit() throws Exception {
    Process child =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"),
                PrintFlinkFiles.class.getName())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    List<String> written = new String(child.getInputStream().readAllBytes()).strip().lines().toList();
    assertThat(child.waitFor()).isZero();
    assertThat(written).hasSize(2);
    for (String path : written) {
      assertThat(Path.of(path)).doesNotExist();
    }
  }

  /** Parses embedded-Flink options with {@code --jarOnCluster} and prints the paths they name. */
  public static final class PrintFlinkFiles {
    public static void main(String[] args) {
      FlinkPipelineOptions o =
          BeamOptions.parse(List.of("--runner=FlinkRunner", "--flinkMaster=[local]", "--jarOnCluster"))
              .as(FlinkPipelineOptions.class);
      System.out.println(o.getFlinkConfDir());
      System.out.println(o.getFilesToStage().get(0));
    }
  }
}

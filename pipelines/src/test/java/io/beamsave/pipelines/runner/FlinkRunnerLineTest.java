package io.beamsave.pipelines.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The runner on the class path must be of the cluster's Flink line: a REST API answering like a
 * cluster of another line, or a version the operator names, is refused in one line before
 * anything is submitted; a cluster of the runner's line, or none answering, is let through.
 */
class FlinkRunnerLineTest {
  /** A stand-in for a cluster's REST API, answering {@code /config} with {@code version}. */
  static HttpServer cluster(String version) throws IOException {
    HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    http.createContext("/config", x -> {
      byte[] body = ("{\"refresh-interval\":3000,\"flink-version\":\"" + version
          + "\",\"flink-revision\":\"0 @ 2026\"}").getBytes(StandardCharsets.UTF_8);
      x.sendResponseHeaders(200, body.length);
      x.getResponseBody().write(body);
      x.close();
    });
    http.start();
    return http;
  }

  static String master(HttpServer http) {
    return "127.0.0.1:" + http.getAddress().getPort();
  }

  @Test
  void theRunnerIsOfTheLineTheBuildNames() {
    assertThat(FlinkRunnerLine.line(FlinkRunnerLine.runnerVersion()))
        .isEqualTo(FlinkRunnerLine.line(io.beamsave.pipelines.cli.BuildInfo.flinkVersion()));
    assertThat(FlinkRunnerLine.line("1.20.5")).isEqualTo("1.20");
    assertThat(FlinkRunnerLine.line("2.1")).isEqualTo("2.1");
    assertThatThrownBy(() -> FlinkRunnerLine.line("two")).hasMessageContaining("not a Flink version");
  }

  @Test
  void aClusterOfAnotherLineIsRefusedNamingItsVersionAndTheRunners() throws IOException {
    String runner = FlinkRunnerLine.line(FlinkRunnerLine.runnerVersion());
    HttpServer other = cluster("2.1.1");
    try {
      assertThatThrownBy(() -> FlinkRunnerLine.checkCluster(master(other), null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("the Flink cluster at " + master(other) + " runs Flink 2.1.1")
          .hasMessageContaining("runner for Flink " + runner)
          .hasMessageNotContaining("\n");
      // Through the options a run parses, before anything is submitted.
      assertThatThrownBy(() -> BeamOptions.forRun(java.util.List.of("--runner=FlinkRunner",
              "--flinkMaster=" + master(other)), null))
          .hasMessageContaining("runs Flink 2.1.1");
    } finally {
      other.stop(0);
    }
  }

  @Test
  void aClusterOfTheRunnersLineIsLetThroughAndNoneAnsweringIsRefusedAtOnce() throws IOException {
    HttpServer same = cluster(FlinkRunnerLine.runnerVersion().replaceAll("\\.\\d+$", ".0"));
    try {
      FlinkRunnerLine.checkCluster(master(same), null);
    } finally {
      same.stop(0);
    }
    // Nothing listens there now: one line, not Flink's client waiting a minute.
    assertThatThrownBy(() -> FlinkRunnerLine.checkCluster(master(same), null))
        .hasMessage("no Flink cluster answers at " + master(same) + ": connection refused"
            + " (check --flinkMaster; --flink-version "
            + FlinkRunnerLine.line(FlinkRunnerLine.runnerVersion()) + " skips this question)");
    assertThatThrownBy(() -> FlinkRunnerLine.checkCluster("no-such-host.invalid:8081", null))
        .hasMessageContaining("unknown host");
    // A web server that is no Flink REST API.
    HttpServer web = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    web.createContext("/", x -> {
      x.sendResponseHeaders(404, -1);
      x.close();
    });
    web.start();
    try {
      assertThatThrownBy(() -> FlinkRunnerLine.checkCluster(master(web), null))
          .hasMessageContaining("what answers at " + master(web) + " is not a Flink REST API");
    } finally {
      web.stop(0);
    }
    // Parsing alone (as the deployment manifests' tests do) asks no cluster.
    BeamOptions.parse(java.util.List.of("--runner=FlinkRunner",
        "--flinkMaster=" + master(same)));
  }

  @Test
  void theMasterIsReadAsFlinksClientReadsIt() {
    assertThat(FlinkRunnerLine.rest("flink:8081")).hasToString("http://flink:8081");
    assertThat(FlinkRunnerLine.rest("flink")).hasToString("http://flink:8081");
    assertThat(FlinkRunnerLine.rest("http://flink:9000")).hasToString("http://flink:9000");
    assertThat(FlinkRunnerLine.rest("[::1]:8081")).hasToString("http://[::1]:8081");
  }

  /** An answer without end is read no further than 64 KiB. */
  @Test
  void anEndlessAnswerIsNotReadToTheEnd() throws IOException {
    HttpServer endless = HttpServer.create(
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    endless.createContext("/config", x -> {
      x.sendResponseHeaders(200, 0);
      byte[] junk = new byte[1 << 16];
      java.util.Arrays.fill(junk, (byte) 'x');
      try (var out = x.getResponseBody()) {
        for (int i = 0; i < 1 << 16; i++) { // 4 GiB, were it read
          out.write(junk);
        }
      } catch (IOException closed) {
        // The reader stopped reading: as it should.
      }
    });
    endless.start();
    try {
      assertThatThrownBy(() -> FlinkRunnerLine.checkCluster(master(endless), null))
          .hasMessageContaining("is not a Flink REST API");
    } finally {
      endless.stop(0);
    }
  }

  @Test
  void aVersionTheOperatorNamesWinsOverTheClusterAndMustMatchTheRunner() throws IOException {
    String runner = FlinkRunnerLine.runnerVersion();
    HttpServer other = cluster("2.0.0");
    try {
      // The operator knows better (a proxy in front of the REST API, say).
      FlinkRunnerLine.checkCluster(master(other), runner);
      assertThatThrownBy(() -> FlinkRunnerLine.checkCluster(master(other), "2.0"))
          .hasMessageContaining("(2.0, from --flink-version or $BEAMSAVE_FLINK_VERSION)")
          .hasMessageContaining("runner for Flink " + FlinkRunnerLine.line(runner));
    } finally {
      other.stop(0);
    }
  }
}

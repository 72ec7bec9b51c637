package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Flink session cluster on loopback, started and stopped by the scripts in deploy/flink
 * (one JobManager and N TaskManagers, each its own JVM, with beamsave's jar on their classpath),
 * and its REST API.
 */
final class LoopbackFlinkCluster implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();

  final Path dir;
  final int restPort;
  final Map<String, String> env;

  private LoopbackFlinkCluster(Path dir, int restPort, Map<String, String> env) {
    this.dir = dir;
    this.restPort = restPort;
    this.env = env;
  }

  /** Starts {@code taskManagers} TaskManagers under {@code dir}, which inherit {@code env}. */
  static LoopbackFlinkCluster start(Path dir, int taskManagers, Map<String, String> env)
      throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    LoopbackFlinkCluster c = new LoopbackFlinkCluster(dir, port, env);
    int exit = c.script(Map.of("BEAMSAVE_JAR",
            Path.of("target", "beamsave.jar").toAbsolutePath().toString()),
        "start-cluster.sh", dir.toString(), Integer.toString(taskManagers),
        Integer.toString(port));
    assertThat(exit).as("start-cluster.sh; see " + dir.resolve("log")).isZero();
    return c;
  }

  /** Runs a script of deploy/flink with the cluster's environment and waits for it. */
  int script(Map<String, String> extraEnv, String name, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(
        Path.of("..", "deploy", "flink", name).toAbsolutePath().normalize().toString()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
    pb.environment().putAll(env);
    pb.environment().putAll(extraEnv);
    Process p = pb.start();
    if (!p.waitFor(10, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new AssertionError(name + " did not finish in 10 minutes");
    }
    return p.exitValue();
  }

  JsonNode rest(String path) throws IOException, InterruptedException {
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort + path)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  /**
   * The environment of the cluster and of the commands submitting to it: the credentials of
   * {@code s3}, which the TaskManagers inherit to read and write {@code s3://}, and what Flink
   * needs opened on Java 17 for the client that builds and submits the job.
   */
  static Map<String, String> environment(io.beamsave.pipelines.transfer.LocalS3Server s3) {
    return Map.of(
        "AWS_ACCESS_KEY_ID", io.beamsave.pipelines.transfer.LocalS3Server.ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY", io.beamsave.pipelines.transfer.LocalS3Server.SECRET_KEY,
        "AWS_REGION", "us-east-1",
        "JDK_JAVA_OPTIONS", System.getProperty("flink.java.opens"));
  }

  /** Beam options that run a job on this cluster. */
  List<String> beamOptions() {
    return List.of("--runner=FlinkRunner", "--flinkMaster=127.0.0.1:" + restPort);
  }

  @Override
  public void close() throws Exception {
    script(Map.of(), "stop-cluster.sh", dir.toString());
  }
}

package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.beamsave.pipelines.cli.BeamsaveCommand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The files under deploy/ parse, and every beamsave command in them is one the command line
 * accepts, with images named after the library and the run's UTC start.
 */
class DeployManifestsTest {
  static final Path DEPLOY = Path.of("..", "deploy");
  static final ObjectMapper YAML = new YAMLMapper();

  static List<JsonNode> documents(Path file) throws Exception {
    List<JsonNode> docs = new ArrayList<>();
    try (var parser = new YAMLFactory().createParser(file.toFile())) {
      YAML.readValues(parser, JsonNode.class).forEachRemaining(docs::add);
    }
    return docs;
  }

  /** Parses {@code args} as the beamsave command line would; fails on anything it rejects. */
  static CommandLine.ParseResult parse(List<String> args) {
    String[] given = args.toArray(String[]::new);
    return BeamsaveCommand.commandLine(given).parseArgs(given);
  }

  static void assertTimestampedImage(List<String> args) {
    int i = args.indexOf("--image");
    if (i >= 0) {
      assertThat(args.get(i + 1)).contains("{library}").contains("{utc}");
    }
  }

  @Test
  void kubernetesCronJobsRunCommandsTheCliAcceptsAgainstTheSessionCluster() throws Exception {
    JsonNode cluster = documents(DEPLOY.resolve("k8s/flink-session-cluster.yaml")).get(0);
    assertThat(cluster.get("kind").asText()).isEqualTo("FlinkDeployment");
    assertThat(cluster.at("/spec/flinkVersion").asText()).isEqualTo("v1_19");
    assertThat(cluster.at("/spec/taskManager/replicas").asInt()).isGreaterThanOrEqualTo(2);
    String rest = cluster.at("/metadata/name").asText() + "-rest:8081";

    List<JsonNode> jobs = documents(DEPLOY.resolve("k8s/beamsave-cronjob.yaml"));
    assertThat(jobs).hasSize(2).allSatisfy(j -> assertThat(j.get("kind").asText()).isEqualTo("CronJob"));
    List<String> commands = new ArrayList<>();
    for (JsonNode job : jobs) {
      assertThat(job.at("/spec/schedule").asText()).matches("\\S+ \\S+ \\S+ \\S+ \\S+");
      JsonNode container = job.at("/spec/jobTemplate/spec/template/spec/containers/0");
      List<String> args = new ArrayList<>();
      container.get("args").forEach(a -> args.add(a.asText()));
      CommandLine.ParseResult parsed = parse(args);
      commands.add(parsed.subcommand().commandSpec().name());
      assertTimestampedImage(args);
      if (args.contains("--runner=FlinkRunner")) {
        assertThat(args).contains("--flinkMaster=" + rest);
        // No disk is shared: the image is s3://, so its shards are staged in the store.
        assertThat(args.get(args.indexOf("--image") + 1)).startsWith("s3://");
        assertThat(args).doesNotContain("--staging");
      }
    }
    assertThat(commands).containsExactly("save", "prune");
  }

  @Test
  void systemdServiceRunsCommandsTheCliAcceptsOnATimer() throws Exception {
    List<String> lines = Files.readAllLines(DEPLOY.resolve("systemd/beamsave-save.service"));
    List<String> commands = new ArrayList<>();
    for (String line : lines) {
      if (line.startsWith("ExecStart=")) {
        List<String> words = Arrays.asList(line.substring("ExecStart=".length()).split(" +"));
        assertThat(words.get(0)).endsWith("/beamsave");
        // systemd would expand % specifiers; image names use {utc} instead.
        assertThat(line).doesNotContain("%");
        List<String> args = words.subList(1, words.size());
        commands.add(parse(args).subcommand().commandSpec().name());
        assertTimestampedImage(args);
      }
    }
    assertThat(commands).containsExactly("save", "prune");
    List<String> timer = Files.readAllLines(DEPLOY.resolve("systemd/beamsave-save.timer"));
    assertThat(timer).contains("Unit=beamsave-save.service").anyMatch(l -> l.startsWith("OnCalendar="));
  }

  @Test
  void composeRunsFlinkAndMinioAndItsCommandIsOneTheCliAccepts() throws Exception {
    JsonNode compose = documents(DEPLOY.resolve("compose.yaml")).get(0);
    JsonNode services = compose.get("services");
    assertThat(services.get("jobmanager").get("image").asText()).startsWith("flink:1.19");
    assertThat(services.get("taskmanager").at("/deploy/replicas").asInt()).isEqualTo(2);
    assertThat(services.get("minio").get("image").asText()).startsWith("minio/minio");
    // The usage at the top of the file.
    String usage = Files.readAllLines(DEPLOY.resolve("compose.yaml")).stream()
        .filter(l -> l.startsWith("#"))
        .map(l -> l.substring(1).trim())
        .reduce("", (a, b) -> a.endsWith("\\") ? a.substring(0, a.length() - 1) + " " + b : a + "\n" + b);
    String save = usage.lines().filter(l -> l.contains("./beamsave save")).findFirst().orElseThrow();
    save = save.substring(save.indexOf("./beamsave save"));
    List<String> args = new ArrayList<>(Arrays.asList(save.split(" +")));
    args.remove(0);
    assertThatCode(() -> parse(args)).doesNotThrowAnyException();
    assertTimestampedImage(args);
    assertThat(args).contains("--flinkMaster=127.0.0.1:8081");
  }

  /**
   * Every cluster deploy/ starts restarts a job that lost a TaskManager, for longer than the
   * heartbeat timeout that declares the TaskManager dead: otherwise the attempts run out first.
   */
  static void assertRestartsOutlastAHeartbeat(java.util.Map<String, String> conf, String where) {
    assertThat(conf.get("restart-strategy.type")).as(where).isEqualTo("fixed-delay");
    long attempts = Long.parseLong(conf.get("restart-strategy.fixed-delay.attempts"));
    long delayMs = Long.parseLong(conf.get("restart-strategy.fixed-delay.delay")
        .replace(" s", "").trim()) * 1000;
    long timeoutMs = Long.parseLong(conf.get("heartbeat.timeout"));
    assertThat(attempts * delayMs).as(where + ": attempts x delay").isGreaterThan(2 * timeoutMs);
  }

  static java.util.Map<String, String> flatConfig(String text) {
    java.util.Map<String, String> conf = new java.util.HashMap<>();
    for (String line : text.split("\n")) {
      String l = line.strip();
      int colon = l.indexOf(": ");
      if (!l.startsWith("#") && colon > 0) {
        conf.put(l.substring(0, colon), l.substring(colon + 2).replace("\"", ""));
      }
    }
    return conf;
  }

  @Test
  void everyClusterRestartsAJobThatLostATaskManager() throws Exception {
    JsonNode k8s = documents(DEPLOY.resolve("k8s/flink-session-cluster.yaml")).get(0);
    java.util.Map<String, String> conf = new java.util.HashMap<>();
    k8s.at("/spec/flinkConfiguration").fields()
        .forEachRemaining(f -> conf.put(f.getKey(), f.getValue().asText()));
    assertRestartsOutlastAHeartbeat(conf, "k8s/flink-session-cluster.yaml");

    JsonNode services = documents(DEPLOY.resolve("compose.yaml")).get(0).get("services");
    assertRestartsOutlastAHeartbeat(
        flatConfig(services.at("/jobmanager/environment/FLINK_PROPERTIES").asText()),
        "compose.yaml jobmanager");
    assertThat(flatConfig(services.at("/taskmanager/environment/FLINK_PROPERTIES").asText()))
        .containsEntry("heartbeat.timeout", "10000");

    String script = Files.readString(DEPLOY.resolve("flink/start-cluster.sh"));
    assertRestartsOutlastAHeartbeat(flatConfig(script.substring(script.indexOf("<<YAML"),
        script.indexOf("\nYAML"))), "flink/start-cluster.sh");
  }
}

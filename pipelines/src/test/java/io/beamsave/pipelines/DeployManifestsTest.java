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
    return BeamsaveCommand.parse(args.toArray(String[]::new));
  }

  static void assertTimestampedImage(List<String> args) {
    int i = args.indexOf("--image");
    if (i >= 0) {
      assertThat(args.get(i + 1)).contains("{library}").contains("{utc}");
    }
  }

  static JsonNode ofKind(List<JsonNode> docs, String kind) {
    return docs.stream().filter(d -> kind.equals(d.path("kind").asText())).findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind));
  }

  static List<JsonNode> k8sObjects() throws Exception {
    List<JsonNode> all = new ArrayList<>();
    try (var s = Files.list(DEPLOY.resolve("k8s"))) {
      for (Path f : s.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
        all.addAll(documents(f));
      }
    }
    return all;
  }

  /** Every image: value anywhere under {@code node}. */
  static void images(JsonNode node, List<String> into) {
    if (node.isObject()) {
      node.fields().forEachRemaining(f -> {
        if (f.getKey().equals("image") && f.getValue().isTextual()) {
          into.add(f.getValue().asText());
        } else {
          images(f.getValue(), into);
        }
      });
    } else if (node.isArray()) {
      node.forEach(n -> images(n, into));
    }
  }

  @Test
  void everyImageIsPinnedToAVersionAndBeamsaveToTheProjects() throws Exception {
    List<String> all = new ArrayList<>();
    k8sObjects().forEach(d -> images(d, all));
    documents(DEPLOY.resolve("compose.yaml")).forEach(d -> images(d, all));
    assertThat(all).hasSizeGreaterThan(5).allSatisfy(image -> {
      assertThat(image).as(image).matches("[^:]+:[^:]+").doesNotEndWith(":latest");
      assertThat(image.substring(image.indexOf(':') + 1)).as(image).matches(".*[0-9].*");
    });
    String version = io.beamsave.pipelines.cli.BuildInfo.version();
    assertThat(all).filteredOn(i -> i.startsWith("beamsave:")).isNotEmpty()
        .allSatisfy(i -> assertThat(i).isEqualTo("beamsave:" + version));
    // Flink's image is the version beamsave is built against, which the session cluster runs.
    String pom = Files.readString(Path.of("..", "pom.xml"));
    String flink = pom.replaceAll("(?s).*<flink.version>([^<]+)</flink.version>.*", "$1");
    assertThat(all).filteredOn(i -> i.startsWith("flink:")).isNotEmpty()
        .allSatisfy(i -> assertThat(i).startsWith("flink:" + flink + "-"));
  }

  @Test
  void kubernetesObjectsReferencedExistAndPodsRunLockedDown() throws Exception {
    List<JsonNode> objects = k8sObjects();
    java.util.Set<String> defined = new java.util.HashSet<>();
    objects.forEach(o -> defined.add(o.path("kind").asText() + "/" + o.at("/metadata/name").asText()));
    List<JsonNode> pods = new ArrayList<>();
    for (JsonNode o : objects) {
      if (o.path("kind").asText().equals("CronJob")) {
        assertThat(o.at("/spec/concurrencyPolicy").asText()).isEqualTo("Forbid");
        assertThat(o.at("/spec/jobTemplate/spec/backoffLimit").asInt(99)).isBetween(0, 3);
        pods.add(o.at("/spec/jobTemplate/spec/template/spec"));
      }
      if (o.path("kind").asText().equals("FlinkDeployment")) {
        assertThat(defined).contains("ServiceAccount/" + o.at("/spec/serviceAccount").asText());
        pods.add(o.at("/spec/podTemplate/spec"));
      }
    }
    assertThat(pods).hasSize(3);
    List<String> refs = new ArrayList<>();
    for (JsonNode pod : pods) {
      pod.path("volumes").forEach(v -> {
        if (v.has("persistentVolumeClaim")) {
          refs.add("PersistentVolumeClaim/" + v.at("/persistentVolumeClaim/claimName").asText());
        }
      });
      pod.findValues("secretRef").forEach(r -> refs.add("Secret/" + r.get("name").asText()));
      if (pod.has("serviceAccountName")) {
        refs.add("ServiceAccount/" + pod.get("serviceAccountName").asText());
        assertThat(pod.path("automountServiceAccountToken").asBoolean(true)).isFalse();
      }
    }
    for (JsonNode o : objects) {
      if (o.path("kind").asText().equals("CronJob")) {
        JsonNode pod = o.at("/spec/jobTemplate/spec/template/spec");
        assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
        JsonNode c = pod.at("/containers/0");
        assertThat(c.at("/securityContext/readOnlyRootFilesystem").asBoolean()).isTrue();
        assertThat(c.at("/securityContext/allowPrivilegeEscalation").asBoolean(true)).isFalse();
        // The image's natives unpack into /tmp: with a read-only root it must be a volume.
        String tmpVolume = null;
        for (JsonNode m : c.path("volumeMounts")) {
          if (m.get("mountPath").asText().equals("/tmp")) {
            tmpVolume = m.get("name").asText();
          }
        }
        assertThat(tmpVolume).as("a /tmp mount").isNotNull();
        String name = tmpVolume;
        assertThat(pod.path("volumes")).anySatisfy(v -> {
          assertThat(v.get("name").asText()).isEqualTo(name);
          assertThat(v.has("emptyDir")).isTrue();
        });
      }
    }
    assertThat(refs).contains("Secret/beamsave-s3", "PersistentVolumeClaim/beamsave-libraries",
        "ServiceAccount/beamsave");
    assertThat(defined).containsAll(refs);
    // Many pods on many nodes read the libraries at once.
    JsonNode pvc = ofKind(objects, "PersistentVolumeClaim");
    assertThat(pvc.at("/spec/accessModes/0").asText()).isEqualTo("ReadOnlyMany");
  }

  @Test
  void everyFlinkClusterServesPrometheusMetrics() throws Exception {
    String factory = "org.apache.flink.metrics.prometheus.PrometheusReporterFactory";
    JsonNode k8s = ofKind(documents(DEPLOY.resolve("k8s/flink-session-cluster.yaml")),
        "FlinkDeployment");
    assertThat(k8s.at("/spec/flinkConfiguration/metrics.reporter.prom.factory.class").asText())
        .isEqualTo(factory);
    JsonNode services = documents(DEPLOY.resolve("compose.yaml")).get(0).get("services");
    for (String s : List.of("jobmanager", "taskmanager")) {
      assertThat(flatConfig(services.at("/" + s + "/environment/FLINK_PROPERTIES").asText()))
          .containsEntry("metrics.reporter.prom.factory.class", factory);
    }
    String script = Files.readString(DEPLOY.resolve("flink/start-cluster.sh"));
    assertThat(flatConfig(script.substring(script.indexOf("<<YAML"), script.indexOf("\nYAML"))))
        .containsEntry("metrics.reporter.prom.factory.class", factory);
    assertThat(Files.readString(DEPLOY.resolve("flink/pom.xml"))).contains("flink-metrics-prometheus");
  }

  @Test
  void kubernetesCronJobsRunCommandsTheCliAcceptsAgainstTheSessionCluster() throws Exception {
    JsonNode cluster = ofKind(documents(DEPLOY.resolve("k8s/flink-session-cluster.yaml")),
        "FlinkDeployment");
    assertThat(cluster.get("kind").asText()).isEqualTo("FlinkDeployment");
    assertThat(cluster.at("/spec/flinkVersion").asText()).isEqualTo("v1_20");
    assertThat(cluster.at("/spec/taskManager/replicas").asInt()).isGreaterThanOrEqualTo(2);
    String rest = cluster.at("/metadata/name").asText() + "-rest:8081";

    List<JsonNode> jobs = documents(DEPLOY.resolve("k8s/beamsave-cronjob.yaml")).stream()
        .filter(d -> d.path("kind").asText().equals("CronJob")).toList();
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
      if (line.startsWith("ExecStart=/bin/sh -c ")) {
        // The verify of the image just saved: the last save in the ledger beside it.
        assertThat(line).contains("beamsave history --at s3://backups/nightly/data")
            .contains("beamsave verify --quiet --image");
        commands.add("verify");
      } else if (line.startsWith("ExecStart=")) {
        List<String> words = Arrays.asList(line.substring("ExecStart=".length()).split(" +"));
        assertThat(words.get(0)).endsWith("/beamsave");
        // systemd would expand % specifiers; image names use {utc} instead.
        assertThat(line).doesNotContain("%");
        List<String> args = words.subList(1, words.size());
        commands.add(parse(args).subcommand().commandSpec().name());
        assertTimestampedImage(args);
      }
    }
    assertThat(commands).containsExactly("save", "verify", "prune");
    assertThat(lines).contains("ProtectSystem=strict", "ProtectHome=read-only", "PrivateTmp=yes",
        "NoNewPrivileges=yes", "DynamicUser=yes", "CapabilityBoundingSet=CAP_DAC_READ_SEARCH",
        "AmbientCapabilities=CAP_DAC_READ_SEARCH")
        .anyMatch(l -> l.startsWith("OnFailure=beamsave-failure@"));
    assertThat(DEPLOY.resolve("systemd/beamsave-failure@.service")).isRegularFile();
    List<String> timer = Files.readAllLines(DEPLOY.resolve("systemd/beamsave-save.timer"));
    assertThat(timer).contains("Unit=beamsave-save.service").anyMatch(l -> l.startsWith("OnCalendar="));
  }

  /** systemd itself accepts the units, with the launcher of this tree where /opt has it. */
  @Test
  void systemdAnalyzeVerifiesTheUnits(@org.junit.jupiter.api.io.TempDir Path dir)
      throws Exception {
    Path analyze = Path.of("/usr/bin/systemd-analyze");
    org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(analyze),
        "systemd-analyze is not installed");
    String launcher = Path.of("src/dist/bin/beamsave").toAbsolutePath().toString();
    List<String> cmd = new ArrayList<>(List.of(analyze.toString(), "verify", "--man=no"));
    try (var s = Files.list(DEPLOY.resolve("systemd"))) {
      for (Path unit : s.sorted().toList()) {
        Path copy = dir.resolve(unit.getFileName());
        Files.writeString(copy, Files.readString(unit).replace("/opt/beamsave/bin/beamsave", launcher));
        cmd.add(copy.toString());
      }
    }
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor()).as(out).isZero();
    assertThat(out).isEmpty();
  }

  @Test
  void composeRunsFlinkAndMinioAndItsCommandIsOneTheCliAccepts() throws Exception {
    JsonNode compose = documents(DEPLOY.resolve("compose.yaml")).get(0);
    JsonNode services = compose.get("services");
    assertThat(services.get("jobmanager").get("image").asText()).startsWith("flink:1.20");
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
    JsonNode k8s = ofKind(documents(DEPLOY.resolve("k8s/flink-session-cluster.yaml")),
        "FlinkDeployment");
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

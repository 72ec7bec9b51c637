package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.pipelines.transfer.LocalS3Server;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A save survives a lost TaskManager: on the 2-TaskManager loopback cluster deploy/flink
 * starts (with its restart strategy), one TaskManager is killed with SIGKILL mid-save; Flink
 * restarts the job on the other, beamsave's client waits it out, and the image verifies and
 * restores identical to the library, both in S3 (shards staged in the store) and on a disk the
 * TaskManagers share. {@code --numberOfExecutionRetries} reaches the job as its restart strategy.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FlinkFailoverIT {
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;
  static LoopbackFlinkCluster cluster;
  static LocalS3Server s3;
  static Map<String, String> env;
  static Path library;

  @BeforeAll
  static void start() throws Exception {
    s3 = LocalS3Server.start(Files.createDirectories(dir.resolve("s3")), "vault");
    env = LoopbackFlinkCluster.environment(s3);
    cluster = LoopbackFlinkCluster.start(dir.resolve("flink"), 2, env);
    library = Files.createDirectories(dir.resolve("lib"));
    Trees.mixedData(library, 192L << 20);
    Trees.linksAndEmpties(library);
    Trees.unicodeNames(library);
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
    if (s3 != null) {
      s3.close();
    }
  }

  static List<Object> onCluster(String jobName, Object... args) {
    List<Object> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--s3-endpoint", s3.endpoint(), "--"));
    all.addAll(cluster.beamOptions());
    all.addAll(List.of("--parallelism=2", "--jarOnCluster", "--jobName=" + jobName));
    return all;
  }

  /** The live TaskManagers' process ids, as start-cluster.sh and add-taskmanager.sh record them. */
  static List<Long> taskManagers() throws Exception {
    List<String> pids = Files.readAllLines(cluster.dir.resolve("pids"));
    List<Long> alive = new ArrayList<>();
    for (String p : pids.subList(1, pids.size())) {
      long pid = Long.parseLong(p.strip());
      if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
        alive.add(pid);
      }
    }
    return alive;
  }

  static String jobId(String name) throws Exception {
    for (JsonNode j : cluster.rest("/jobs/overview").get("jobs")) {
      if (j.get("name").asText().equals(name)) {
        return j.get("jid").asText();
      }
    }
    return null;
  }

  /** Shards the running job's CompressShard step has finished, summed over its subtasks. */
  static long shardsDone(String jid) throws Exception {
    for (JsonNode v : cluster.rest("/jobs/" + jid).get("vertices")) {
      if (v.get("name").asText().contains("CompressShard")) {
        return v.at("/metrics/write-records").asLong()
            + (v.get("status").asText().equals("FINISHED") ? 1_000_000 : 0);
      }
    }
    return 0;
  }

  /** Saves to {@code image} while killing a TaskManager mid-way; returns the save's output. */
  LauncherIT.Run saveLosingATaskManager(String jobName, String image) throws Exception {
    assertThat(taskManagers()).hasSize(2);
    Path out = dir.resolve(jobName + ".out");
    Path err = dir.resolve(jobName + ".err");
    Process save = LauncherIT.start(env, List.of(), out, err, onCluster(jobName, "save",
        "--library", library, "--image", image, "--codec", "xz:1", "--shard-size", "8MiB")
        .toArray());
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    String jid = null;
    while (jid == null || shardsDone(jid) < 3) {
      assertThat(save.isAlive()).as("the save ended before a TaskManager was killed: "
          + Files.readString(err)).isTrue();
      assertThat(System.nanoTime()).as("the job started compressing").isLessThan(deadline);
      Thread.sleep(200);
      jid = jid == null ? jobId(jobName) : jid;
    }
    long victim = taskManagers().get(0);
    ProcessHandle.of(victim).orElseThrow().destroyForcibly();
    assertThat(save.waitFor(10, TimeUnit.MINUTES)).as("the save finished").isTrue();
    LauncherIT.Run run = new LauncherIT.Run(save.exitValue(), Files.readString(out),
        Files.readString(err));
    assertThat(run.exit()).as(run.err()).isZero();
    // The REST API serves a copy of the job refreshed every few seconds.
    String id = jid;
    FlinkFailoverIT.await("the job FINISHED on the cluster",
        () -> cluster.rest("/jobs/" + id).get("state").asText().equals("FINISHED"));
    assertThat(cluster.rest("/jobs/" + jid + "/exceptions").at("/exceptionHistory/entries"))
        .as("the failure the restart recovered from").isNotEmpty();
    assertThat(run.err()).contains("Flink restarted the job (restart");
    return run;
  }

  void assertVerifiesAndRestoresIdentical(String image) throws Exception {
    LauncherIT.Run verify = LauncherIT.beamsave(env, List.of(), "verify", "--image", image,
        "--quiet", "--s3-endpoint", s3.endpoint());
    assertThat(verify.exit()).as(verify.err()).isZero();
    Path target = dir.resolve("restored-" + Math.abs(image.hashCode()));
    LauncherIT.Run restore = LauncherIT.beamsave(env, List.of(), "restore", "--image", image,
        "--target", target, "--quiet", "--s3-endpoint", s3.endpoint());
    assertThat(restore.exit()).as(restore.err()).isZero();
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
  }

  @Test
  @Order(1)
  void aSaveToS3StagedInTheStoreSurvivesALostTaskManager() throws Exception {
    String image = "s3://vault/failover/lib.bsave";
    saveLosingATaskManager("beamsave-failover-s3", image);
    assertVerifiesAndRestoresIdentical(image);
    try (var left = Files.list(dir.resolve("s3/vault/failover"))) {
      assertThat(left.map(p -> p.getFileName().toString()))
          .as("the staged shards are gone").containsExactlyInAnyOrder("lib.bsave",
              "beamsave-ledger");
    }
  }

  @Test
  @Order(2)
  void aSaveToASharedDiskSurvivesALostTaskManager() throws Exception {
    int exit = cluster.script(Map.of(), "add-taskmanager.sh", cluster.dir.toString());
    assertThat(exit).as("add-taskmanager.sh").isZero();
    Path image = dir.resolve("shared/lib.bsave");
    saveLosingATaskManager("beamsave-failover-disk", image.toString());
    assertVerifiesAndRestoresIdentical(image.toString());
    try (var left = Files.list(image.getParent())) {
      assertThat(left.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("lib.bsave", "beamsave-ledger");
    }
  }

  @Test
  @Order(3)
  void numberOfExecutionRetriesBecomesTheJobsRestartStrategy() throws Exception {
    Path small = Files.createDirectories(dir.resolve("small"));
    Files.writeString(small.resolve("f"), "f");
    List<Object> args = onCluster("beamsave-retries", "save", "--library", small, "--image",
        dir.resolve("small.bsave"), "--quiet");
    args.add("--numberOfExecutionRetries=3");
    args.add("--executionRetryDelay=1500");
    LauncherIT.Run save = LauncherIT.beamsave(env, List.of(), args.toArray());
    assertThat(save.exit()).as(save.err()).isZero();
    // What the JobManager uses, not only what the job asked for.
    assertThat(Files.readAllLines(cluster.dir.resolve("log/jobmanager.log")))
        .anyMatch(l -> l.contains("FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=3,"
            + " backoffTimeMS=1500) for beamsave-retries"));
    assertThat(LauncherIT.beamsave(List.of(), "verify", "--image", dir.resolve("small.bsave"))
        .exit()).isZero();
  }

  interface Check {
    boolean holds() throws Exception;
  }

  static void await(String what, Check check) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!check.holds()) {
      assertThat(System.nanoTime()).as("waited for " + what).isLessThan(end);
      Thread.sleep(200);
    }
  }
}

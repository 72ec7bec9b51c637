package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.pipelines.runner.FlinkProgress;
import io.beamsave.pipelines.transfer.LocalS3Server;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * save and restore on a real Flink 1.20 session cluster — one JobManager and two TaskManagers,
 * each its own JVM, started by deploy/flink/start-cluster.sh from Maven-resolved jars — with
 * the image and the run's staging on S3 (S3Proxy as its own process).
 */
class FlinkClusterIT {
  // Kept when a test fails, for the cluster's logs under flink/log; otherwise removed (the
  // library, its restore and the store hold about 500 MB).
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;
  static LoopbackFlinkCluster cluster;
  static LocalS3Server s3;
  static Map<String, String> env;

  @BeforeAll
  static void start() throws Exception {
    s3 = LocalS3Server.start(Files.createDirectories(dir.resolve("s3")), "vault");
    env = LoopbackFlinkCluster.environment(s3);
    // The jar on the TaskManagers' classpath lets jobs submitted with --jarOnCluster ship none.
    cluster = LoopbackFlinkCluster.start(dir.resolve("flink"), 2, env);
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

  static JsonNode rest(String path) throws IOException, InterruptedException {
    return cluster.rest(path);
  }

  Object[] onCluster(Object... args) {
    List<Object> all = new ArrayList<>(List.of(args));
    all.add("--");
    all.addAll(cluster.beamOptions());
    all.add("--parallelism=4");
    return all.toArray();
  }

  @Test
  void savesToS3AndRestoresOnTheClusterUsingBothTaskManagers() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Trees.mixedData(lib, 200L << 20);
    Trees.linksAndEmpties(lib);
    Trees.unicodeNames(lib);
    String image = "s3://vault/flink/lib.bsave";

    List<Object> saveArgs = new ArrayList<>(List.of(onCluster("save", "--library", lib,
        "--image", image, "--shard-size", "16MiB", "--quiet", "--s3-endpoint", s3.endpoint())));
    // The save ships no jar (the cluster has it); the restore below ships it, Flink's default.
    saveArgs.add("--jarOnCluster");
    saveArgs.add("--jobName=beamsave-it-save");
    LauncherIT.Run save = LauncherIT.beamsave(env, List.of(), saveArgs.toArray());
    assertThat(save.exit()).as(save.err()).isZero();
    assertThat(save.out()).contains("image: " + image);
    // What progress lines are read from: the cluster's REST API finds the job by its name and
    // counts the shards planned and compressed (200 MiB in 16 MiB shards is at least 13).
    FlinkProgress.Shards shards =
        new FlinkProgress(URI.create("http://127.0.0.1:" + cluster.restPort), "beamsave-it-save",
            "CompressShard", "PlanShards", 0).poll();
    assertThat(shards).isNotNull();
    assertThat(shards.total()).isGreaterThanOrEqualTo(13);
    assertThat(shards.done()).isEqualTo(shards.total());
    assertThat(dir.resolve("s3/vault/flink/lib.bsave")).exists();
    // The shards were staged in the store, not on a worker's disk, and are gone.
    try (var left = Files.list(dir.resolve("s3/vault/flink"))) {
      assertThat(left.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("lib.bsave", "beamsave-ledger");
    }
    try (var tmp = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      assertThat(tmp.map(p -> p.getFileName().toString()))
          .noneMatch(n -> n.startsWith(".beamsave-staging-"));
    }

    Path target = dir.resolve("restored");
    LauncherIT.Run restore = LauncherIT.beamsave(env, List.of(), onCluster("restore", "--image",
        image, "--target", target, "--quiet", "--s3-endpoint", s3.endpoint()));
    assertThat(restore.exit()).as(restore.err()).isZero();
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();

    List<JsonNode> jobs = new ArrayList<>();
    rest("/jobs/overview").get("jobs").forEach(j -> {
      if (!j.get("name").asText().startsWith(CHAIN_JOB)) {
        jobs.add(j);
      }
    });
    assertThat(jobs).hasSize(2);
    Set<String> taskManagers = new HashSet<>();
    for (JsonNode job : jobs) {
      assertThat(job.get("state").asText()).as(job.get("name").asText()).isEqualTo("FINISHED");
      String id = job.get("jid").asText();
      for (JsonNode vertex : rest("/jobs/" + id).get("vertices")) {
        JsonNode tms = rest("/jobs/" + id + "/vertices/" + vertex.get("id").asText()
            + "/taskmanagers").get("taskmanagers");
        tms.forEach(tm -> taskManagers.add(tm.get("taskmanager-id").asText()));
      }
    }
    assertThat(rest("/taskmanagers").get("taskmanagers")).hasSize(2);
    assertThat(taskManagers).as("TaskManagers that ran subtasks").hasSize(2);

    // A failure on the cluster reaches the operator as one line naming the damage.
    Path stored = dir.resolve("s3/vault/flink/lib.bsave");
    try (var ch = java.nio.channels.FileChannel.open(stored, java.nio.file.StandardOpenOption.WRITE)) {
      ch.write(java.nio.ByteBuffer.wrap(new byte[] {0x55, 0x55, 0x55, 0x55}), 4096);
    }
    LauncherIT.Run verify = LauncherIT.beamsave(env, List.of(), onCluster("verify", "--image",
        image, "--quiet", "--s3-endpoint", s3.endpoint()));
    assertThat(verify.exit()).isNotZero();
    assertThat(verify.err()).contains("checksum mismatch").doesNotContain("\tat ");
  }

  /**
   * A chain saved on the cluster restores on the DirectRunner, and an image the DirectRunner
   * saved against the cluster's restores on the cluster: the image is the same whoever wrote it.
   */
  @Test
  void aChainSavedOnFlinkRestoresOnTheDirectRunnerAndTheOtherWayRound() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("chain"));
    Trees.mixedData(lib, 20L << 20);
    Trees.linksAndEmpties(lib);
    String day0 = "s3://vault/chain/day0.bsave";
    String day1 = "s3://vault/chain/day1.bsave";
    String day2 = "s3://vault/chain/day2.bsave";
    Object[] store = {"--s3-endpoint", s3.endpoint(), "--quiet"};
    Object[] small = {"--shard-size", "4MiB"};

    run(chainJob(concat(new Object[] {"save", "--library", lib, "--image", day0}, small), store));
    Files.writeString(lib.resolve("changed-on-day-1.txt"), "day 1");
    Files.delete(lib.resolve("empty-file"));
    TreeSnapshot afterDay1 = TreeSnapshot.of(lib);
    run(chainJob(concat(new Object[] {"save", "--library", lib, "--image", day1, "--base", day0},
        small), store));
    Path direct = dir.resolve("chain-restored-direct");
    run(concat(new Object[] {"restore", day1, "--target", direct}, store));
    assertThat(TreeSnapshot.of(direct).diff(afterDay1)).isNull();

    Files.writeString(lib.resolve("changed-on-day-2.txt"), "day 2");
    TreeSnapshot afterDay2 = TreeSnapshot.of(lib);
    run(concat(concat(new Object[] {"save", "--library", lib, "--image", day2, "--base", day1},
        small), store));
    Path onFlink = dir.resolve("chain-restored-flink");
    run(chainJob(new Object[] {"restore", day2, "--target", onFlink}, store));
    assertThat(TreeSnapshot.of(onFlink).diff(afterDay2)).isNull();
  }

  /** On the cluster, named so that the other test's count of its own jobs leaves it out. */
  Object[] chainJob(Object[] command, Object[] store) {
    return concat(onCluster(concat(command, store)),
        new Object[] {"--jobName=" + CHAIN_JOB + System.nanoTime()});
  }

  static final String CHAIN_JOB = "beamsave-it-chain-";

  static Object[] concat(Object[] a, Object[] b) {
    Object[] all = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }

  static void run(Object... args) throws Exception {
    LauncherIT.Run r = LauncherIT.beamsave(env, List.of(), args);
    assertThat(r.exit()).as(java.util.Arrays.toString(args) + "\n" + r.err()).isZero();
  }
}

package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.transfer.LocalS3Server;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Object storage that dies under a save, and what runs that failed, were killed or still run
 * leave: the packaged jar as its own process against S3Proxy as its own process, so that either
 * can be killed as a crash would kill it.
 */
class StoreFailuresIT {
  static final Map<String, String> CREDENTIALS = Map.of(
      "AWS_ACCESS_KEY_ID", LocalS3Server.ACCESS_KEY,
      "AWS_SECRET_ACCESS_KEY", LocalS3Server.SECRET_KEY);

  @TempDir Path tmp;
  Path library;

  @BeforeEach
  void library() throws IOException {
    // What this JVM's own looks into the store use: the server's credentials.
    System.setProperty("aws.accessKeyId", LocalS3Server.ACCESS_KEY);
    System.setProperty("aws.secretAccessKey", LocalS3Server.SECRET_KEY);
    library = Files.createDirectories(tmp.resolve("lib"));
    Random r = new Random(17);
    byte[] data = new byte[8 << 20];
    for (int i = 0; i < 8; i++) {
      r.nextBytes(data);
      Files.write(library.resolve("random-" + i + ".bin"), data);
    }
  }

  static Store bucket(LocalS3Server s3, String bucket) {
    return S3Store.at(new S3Settings(s3.endpoint(), true, "us-east-1", 3),
        new ObjectUri(bucket, ""));
  }

  /**
   * A save slow enough to be caught in the middle, on a loaded machine too: xz on 64 MiB that
   * does not compress, on one worker, sent to the store at 3 MB/s.
   */
  Process slowSave(String image, String endpoint, Path out, Path err) throws IOException {
    return LauncherIT.start(CREDENTIALS, List.of(), out, err, "save", "--library", library,
        "--image", image, "--codec", "xz:6", "--shard-size", "6MiB", "--s3-endpoint", endpoint,
        "--link-mbps", "24", "--quiet", "--", "--targetParallelism=1");
  }

  static void await(String what, java.util.function.BooleanSupplier done) throws Exception {
    InterruptsIT.await(what, done);
  }

  /**
   * What a command said on stderr but the note that it cleared what a killed save left in the
   * temporary directory (another test's, there).
   */
  static List<String> errors(String stderr) {
    return stderr.lines().filter(l -> !l.startsWith("beamsave: removed what")).toList();
  }

  static boolean uploading(Store store, String key) {
    try {
      List<String> ids = ((S3Store) store).uploadsInProgress(key);
      return !ids.isEmpty() && !store.parts(key, ids.get(0)).isEmpty();
    } catch (RuntimeException notYet) {
      return false;
    }
  }

  @Test
  void aStoreKilledDuringASaveEndsItInOneLineAndCleanupRemovesItsUpload() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("s3"));
    Path out = tmp.resolve("out.txt");
    Path err = tmp.resolve("err.txt");
    LocalS3Server s3 = LocalS3Server.start(root, "bkt");
    Store store = bucket(s3, "bkt");
    Process save = slowSave("s3://bkt/nightly/lib.bsave", s3.endpoint(), out, err);
    long killed;
    try {
      await("the first part", () -> uploading(store, "nightly/lib.bsave"));
      s3.kill();
      killed = System.nanoTime();
      assertThat(save.waitFor(60, TimeUnit.SECONDS)).isTrue();
    } finally {
      save.destroyForcibly();
      s3.close();
    }
    double seconds = (System.nanoTime() - killed) / 1e9;
    String said = Files.readString(err);
    assertThat(save.exitValue()).as(said).isEqualTo(1);
    assertThat(seconds).as("seconds from the kill to the exit").isLessThan(20);
    assertThat(errors(said)).as(said).hasSize(1);
    assertThat(said).startsWith("beamsave: error: s3://bkt/nightly/")
        .contains("cannot connect to " + s3.endpoint())
        .contains("beamsave cleanup --at s3://bkt/nightly/ --yes")
        .doesNotContain("\tat ").doesNotContain("[ERROR]").doesNotContain("Exception");

    try (LocalS3Server again = LocalS3Server.start(root, "bkt")) {
      Store back = bucket(again, "bkt");
      assertThat(back.uploads("nightly/")).as("the dead store kept the upload").isNotEmpty();
      LauncherIT.Run cleanup = LauncherIT.beamsave(CREDENTIALS, List.of(), "cleanup", "--at",
          "s3://bkt/nightly", "--yes", "--s3-endpoint", again.endpoint());
      assertThat(cleanup.exit()).as(cleanup.err()).isZero();
      assertThat(cleanup.out()).contains("unfinished upload", "s3://bkt/nightly/lib.bsave");
      assertThat(back.uploads("")).isEmpty();
      assertThat(back.list("nightly/")).isEmpty();
    }
  }

  /**
   * A web server where the store should be (a wrong port) answers 200 with a page to anything:
   * every command fails in one line naming the endpoint, and nothing else reaches stderr (no
   * XML parser's complaint, no stack trace), and nothing is written.
   */
  @Test
  void everyCommandNamesAnEndpointThatIsNoS3ServerInOneLine() throws Exception {
    try (io.beamsave.testing.NotS3Server web = new io.beamsave.testing.NotS3Server()) {
      String endpoint = web.endpoint();
      Path image = tmp.resolve("local.bsave");
      assertThat(LauncherIT.beamsave(List.of(), "save", "--library", library, "--image", image,
          "--codec", "lz4", "-q").exit()).isZero();
      Path download = tmp.resolve("downloaded.bsave");
      for (List<Object> command : List.<List<Object>>of(
          List.of("images", "--at", "s3://bkt/p"),
          List.of("prune", "--at", "s3://bkt/p", "--keep-last", "1"),
          List.of("cleanup", "--at", "s3://bkt/p"),
          List.of("list", "s3://bkt/x.bsave"),
          List.of("download", "--from", "s3://bkt/x.bsave", "--to", download),
          List.of("upload", "--from", image, "--to", "s3://bkt/u.bsave"),
          List.of("save", "--library", library, "--image", "s3://bkt/s.bsave"))) {
        List<Object> args = new java.util.ArrayList<>(command);
        args.addAll(List.of("--s3-endpoint", endpoint));
        LauncherIT.Run r = LauncherIT.beamsave(CREDENTIALS, List.of(), args.toArray());
        assertThat(r.exit()).as(command + ": " + r.err()).isEqualTo(1);
        assertThat(r.err().strip().lines()).as(command + ": " + r.err()).hasSize(1);
        assertThat(r.err()).as(command.toString())
            .contains(endpoint + " does not answer as an S3 server");
      }
      assertThat(download).doesNotExist();
    }
  }

  @Test
  void cleanupRemovesWhatKilledAndFailedRunsLeftAndNothingOfARunInProgress() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("s3"));
    try (LocalS3Server s3 = LocalS3Server.start(root, "bkt")) {
      Store store = bucket(s3, "bkt");
      String at = "s3://bkt/n";
      Path local = Files.createDirectories(tmp.resolve("images"));

      // Killed: a save in the store and one on disk, each killed after its first shard.
      Process killed = slowSave(at + "/killed.bsave", s3.endpoint(), tmp.resolve("k.out"),
          tmp.resolve("k.err"));
      Process killedLocal = slowSave(local.resolve("killed.bsave").toString(), s3.endpoint(),
          tmp.resolve("kl.out"), tmp.resolve("kl.err"));
      await("the killed save's first part", () -> uploading(store, "n/killed.bsave"));
      await("the killed local save's first shard",
          () -> Files.exists(local.resolve("killed.bsave.partial")));
      killed.destroyForcibly().waitFor();
      killedLocal.destroyForcibly().waitFor();

      // Failed: its store refused every part of its upload, and the abort too.
      try (io.beamsave.testing.FaultProxy proxy =
          new io.beamsave.testing.FaultProxy(s3.port(), 0, 3)) {
        proxy.alwaysFail(line -> line.contains("failed.bsave") && line.contains("uploadId="));
        LauncherIT.Run failed = LauncherIT.beamsave(CREDENTIALS, List.of(), "save", "--library",
            library, "--image", at + "/failed.bsave", "--codec", "lz4", "--shard-size", "6MiB",
            "--s3-timeout", "3", "--s3-endpoint", "http://127.0.0.1:" + proxy.port());
        assertThat(failed.exit()).isEqualTo(1);
        assertThat(errors(failed.err())).hasSize(1);
        assertThat(failed.err()).contains("left behind: the multipart upload of "
            + at + "/failed.bsave");
      }
      assertThat(store.uploads("n/")).extracting(Store.Upload::key)
          .contains("n/killed.bsave", "n/failed.bsave");

      // In progress while cleanup runs: one in the store, one on disk beneath --at (a save
      // that begins clears what killed runs left in its own directory, as cleanup would).
      Process running = slowSave(at + "/running.bsave", s3.endpoint(), tmp.resolve("r.out"),
          tmp.resolve("r.err"));
      Path runningImage = local.resolve("running/running.bsave");
      Process runningLocal = slowSave(runningImage.toString(), s3.endpoint(),
          tmp.resolve("rl.out"), tmp.resolve("rl.err"));
      try {
        await("the running save's first part", () -> uploading(store, "n/running.bsave"));
        await("the running local save's first shard",
            () -> Files.exists(local.resolve("running/running.bsave.partial")));
        LauncherIT.Run dry = LauncherIT.beamsave(CREDENTIALS, List.of(), "cleanup", "--at", at,
            "--s3-endpoint", s3.endpoint());
        assertThat(dry.exit()).as(dry.err()).isZero();
        assertThat(dry.out()).contains("would remove").contains(at + "/killed.bsave")
            .contains(at + "/failed.bsave");
        assertThat(dry.out().lines().filter(l -> l.startsWith("remove")))
            .noneMatch(l -> l.contains("running"));
        assertThat(store.uploads("n/")).hasSize(3);

        LauncherIT.Run images = LauncherIT.beamsave(CREDENTIALS, List.of(), "images", "--at",
            at, "--s3-endpoint", s3.endpoint());
        assertThat(images.out()).containsPattern("\\d+ leftovers of failed or killed runs")
            .contains("'beamsave cleanup --at " + at + " --yes' removes them");

        LauncherIT.Run clean = LauncherIT.beamsave(CREDENTIALS, List.of(), "cleanup", "--at", at,
            "--yes", "--s3-endpoint", s3.endpoint());
        assertThat(clean.exit()).as(clean.err()).isZero();
        assertThat(clean.out()).contains("in progress: save");
        LauncherIT.Run cleanLocal = LauncherIT.beamsave(CREDENTIALS, List.of(), "cleanup",
            "--at", local, "--yes");
        assertThat(cleanLocal.exit()).as(cleanLocal.err()).isZero();
        assertThat(cleanLocal.out()).contains("partial image", local + "/killed.bsave.partial")
            .contains("in progress: save");

        assertThat(store.uploads("n/")).extracting(Store.Upload::key)
            .containsExactly("n/running.bsave");
        try (Stream<Path> s = Files.list(local)) {
          assertThat(s.map(p -> p.getFileName().toString()))
              .noneMatch(n -> n.startsWith("killed") || n.startsWith(".beamsave-"));
        }
        try (Stream<Path> s = Files.list(runningImage.getParent())) {
          assertThat(s.map(p -> p.getFileName().toString()))
              .contains("running.bsave.partial", "running.bsave.lock");
        }
        assertThat(running.waitFor(5, TimeUnit.MINUTES)).isTrue();
        assertThat(runningLocal.waitFor(5, TimeUnit.MINUTES)).isTrue();
        assertThat(running.exitValue()).as(Files.readString(tmp.resolve("r.err"))).isZero();
        assertThat(runningLocal.exitValue()).as(Files.readString(tmp.resolve("rl.err")))
            .isZero();
      } finally {
        running.destroyForcibly();
        runningLocal.destroyForcibly();
      }
      assertThat(LauncherIT.beamsave(CREDENTIALS, List.of(), "verify", at + "/running.bsave",
          "--s3-endpoint", s3.endpoint()).exit()).isZero();
      assertThat(LauncherIT.beamsave(List.of(), "verify", runningImage).exit()).isZero();
      LauncherIT.Run after = LauncherIT.beamsave(CREDENTIALS, List.of(), "cleanup", "--at", at,
          "--s3-endpoint", s3.endpoint());
      assertThat(after.out()).contains("nothing left by failed or killed runs");
      assertThat(store.uploads("")).isEmpty();
    }
  }
}

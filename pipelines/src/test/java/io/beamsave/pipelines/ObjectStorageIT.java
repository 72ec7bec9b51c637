package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.transfer.LocalS3Server;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.transfer.ImageUpload;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * beamsave and S3Proxy each as their own process, the way they run in production: an upload
 * killed half-way, then resumed; credentials the server refuses.
 */
class ObjectStorageIT {
  @TempDir static Path dir;
  static LocalS3Server server;
  static Map<String, String> env;
  static S3Store store;

  @BeforeAll
  static void start() throws Exception {
    server = LocalS3Server.start(Files.createDirectories(dir.resolve("s3")), "vault");
    env = Map.of(
        "AWS_ACCESS_KEY_ID", LocalS3Server.ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY", LocalS3Server.SECRET_KEY,
        "AWS_ENDPOINT_URL", server.endpoint());
    System.setProperty("aws.accessKeyId", LocalS3Server.ACCESS_KEY);
    System.setProperty("aws.secretAccessKey", LocalS3Server.SECRET_KEY);
    store = S3Store.at(new S3Settings(server.endpoint(), true, "us-east-1", 4),
        new ObjectUri("vault", ""));
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void anUploadKilledHalfWayLeavesNoObjectAndResumeCompletesIt() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Trees.mixedData(lib, 40L << 20);
    Path image = dir.resolve("lib.bsave");
    LauncherIT.Run save =
        LauncherIT.beamsave(env, List.of(), "save", "--library", lib, "--image", image, "--codec", "none");
    assertThat(save.exit()).as(save.err()).isZero();
    ObjectUri key = new ObjectUri("vault", "nightly/lib.bsave");

    Path out = dir.resolve("upload.out");
    Path err = dir.resolve("upload.err");
    // 40 Mbit/s: 5 MB/s, so the upload takes several seconds and can be killed in the middle.
    Process upload = LauncherIT.start(env, List.of(), out, err, "upload", "--from", image,
        "--to", key, "--part-size", "5MiB", "--parallel", "1", "--link-mbps", "40",
        "--quiet");
    // Parts land on the server's disk as <name>-<n> in a .mpus-* directory once whole.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (storedParts() < 2 && upload.isAlive() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(upload.isAlive()).as("upload still running when 2 parts are stored: "
        + Files.readString(err)).isTrue();
    upload.destroyForcibly().waitFor();

    assertThat(store.stat(key.key())).as("no object at the final key").isEmpty();
    assertThat(mpuDirectories()).as("the interrupted upload, kept for --resume").hasSize(1);
    assertThat(store.stat(ImageUpload.stateObject(key).key())).isPresent();

    LauncherIT.Run resume = LauncherIT.beamsave(env, List.of(), "upload", "--from", image,
        "--to", key, "--part-size", "5MiB", "--resume", "--quiet");
    assertThat(resume.exit()).as(resume.err()).isZero();
    assertThat(resume.out()).containsPattern("\\(\\d+ already stored, kept\\)");
    assertThat(Files.mismatch(dir.resolve("s3/vault/nightly/lib.bsave"), image)).isEqualTo(-1);
    assertThat(store.uploadsInProgress(key.key())).as("no orphan multipart uploads").isEmpty();
    assertThat(mpuDirectories()).as("no parts left on the server's disk").isEmpty();
    assertThat(store.stat(ImageUpload.stateObject(key).key())).isEmpty();

    LauncherIT.Run verify = LauncherIT.beamsave(env, List.of(), "verify", "--image", key, "--quiet");
    assertThat(verify.exit()).as(verify.err()).isZero();
    LauncherIT.Run history = LauncherIT.beamsave(env, List.of(), "history", "--at", "s3://vault/nightly");
    assertThat(history.out()).contains("upload").contains("raw transfer");
  }

  static long storedParts() throws java.io.IOException {
    long n = 0;
    for (Path d : mpuDirectories()) {
      try (var s = Files.list(d)) {
        n += s.filter(p -> p.getFileName().toString().matches("lib\\.bsave-\\d+")).count();
      }
    }
    return n;
  }

  static List<Path> mpuDirectories() throws java.io.IOException {
    try (var s = Files.list(dir.resolve("s3/vault"))) {
      return s.filter(p -> p.getFileName().toString().startsWith(".mpus-")).toList();
    }
  }

  @Test
  void refusedCredentialsAreOneLineAndNonZero() throws Exception {
    Map<String, String> wrong = new java.util.HashMap<>(env);
    wrong.put("AWS_SECRET_ACCESS_KEY", "not-the-secret");
    LauncherIT.Run list = LauncherIT.beamsave(wrong, List.of(), "list", "--image", "s3://vault/x.bsave");
    assertThat(list.exit()).isEqualTo(1);
    assertThat(list.err().strip()).isEqualTo("beamsave: error: s3://vault/x.bsave: the secret key"
        + " does not match the access key (SignatureDoesNotMatch)");
    assertThat(list.err()).doesNotContain("not-the-secret");
  }
}

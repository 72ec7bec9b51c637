package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.testing.FaultProxy;
import io.beamsave.testing.S3MockServer;
import io.beamsave.testing.S3TestServer;
import io.beamsave.testing.TestS3;
import io.beamsave.transforms.sink.ImageSink;
import io.beamsave.transforms.sink.StoreImageSink;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.BeforeAll;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The commands against each of two real S3 servers on loopback (S3Proxy, and S3Mock, which is
 * stricter), as an operator runs them.
 */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {S3TestServer.NAME, S3MockServer.NAME})
class ObjectStorageTest {
  static final String BUCKET = "backups";

  @TempDir static Path dir;
  /** S3Proxy or S3Mock. */
  @Parameter String kind;
  static TestS3 server;
  /** This server's own directory, for what a test restores or downloads. */
  static Path work;
  static Path library;
  static Path image;

  @BeforeParameterizedClassInvocation
  static void startServer(String kind) throws Exception {
    work = Files.createDirectories(dir.resolve(kind));
    server = TestS3.start(kind, work.resolve("s3"), BUCKET);
  }

  @AfterParameterizedClassInvocation
  static void stopServer() throws Exception {
    server.close();
  }

  /** The library and its local image, made once for both servers. */
  @BeforeAll
  static void start() throws Exception {
    if (library != null) {
      return;
    }
    library = Files.createDirectories(dir.resolve("payroll"));
    Trees.mixedData(library, 12L << 20);
    Trees.unicodeNames(library);
    Trees.linksAndEmpties(library);
    Files.writeString(library.resolve("small.txt"), "just this one");
    image = dir.resolve("payroll.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--shard-size", "2MiB", "--quiet");
  }

  static Object[] s3(int port) {
    return new Object[] {"--s3-endpoint", "http://127.0.0.1:" + port};
  }

  static Cli ok(int port, Object... args) {
    return Cli.ok(concat(args, s3(port)));
  }

  static Cli run(int port, Object... args) {
    return Cli.run(concat(args, s3(port)));
  }

  static Object[] concat(Object[] a, Object[] b) {
    Object[] all = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }

  @Test
  void smallShardsStagedUnderAnS3StagingAreGatheredAndLeaveNothingBehind() throws Exception {
    int port = server.port();
    // Staging in the store is what runs on several machines use; --staging s3:// asks for it.
    // At 6 MiB the random shards go straight into the upload and the log's, compressed to
    // little, are staged there.
    Cli save = ok(port, "save", "--library", library, "--image", "s3://backups/staged/payroll.bsave",
        "--staging", "s3://backups/work", "--shard-size", "6MiB", "--quiet");
    assertThat(save.out()).contains("image: s3://backups/staged/payroll.bsave");
    Path target = work.resolve("restored-staged");
    ok(port, "restore", "--image", "s3://backups/staged/payroll.bsave", "--target", target, "--quiet");
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
    ok(port, "verify", "--image", "s3://backups/staged/payroll.bsave", "--quiet");
    S3Store store = S3Store.at(server.settings(), new ObjectUri(BUCKET, ""));
    assertThat(store.list("work/")).isEmpty();
    assertThat(store.list("staged/")).extracting(Store.Item::key)
        .contains("staged/payroll.bsave").noneMatch(k -> k.contains(".beamsave-staging-"));
    assertThat(store.uploadsInProgress("staged/payroll.bsave")).isEmpty();
  }

  @Test
  void savesStraightToObjectStorageAndRestoresFromIt() throws Exception {
    int port = server.port();
    java.util.Set<String> before = tmpStaging();
    Cli save = ok(port, "save", "--library", library, "--image", "s3://backups/direct/payroll.bsave",
        "--shard-size", "2MiB", "--quiet");
    assertThat(save.out()).contains("image: s3://backups/direct/payroll.bsave");
    assertThat(server.file(BUCKET, "direct/payroll.bsave")).exists();
    Path target = work.resolve("restored-direct");
    ok(port, "restore", "--image", "s3://backups/direct/payroll.bsave", "--target", target, "--quiet");
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
    Cli history = ok(port, "history", "--at", "s3://backups/direct");
    assertThat(history.out()).contains("save-upload").contains("payroll")
        .contains("compress while transferring")
        .contains("s3://backups/direct/payroll.bsave");
    // No staging or partial image left on the local disk.
    assertThat(tmpStaging()).allMatch(before::contains);
  }

  @Test
  void aLibraryOfMoreShardsThanAnUploadHasPartsIsRefusedWhenPlanned() throws Exception {
    Path many = Files.createDirectories(work.resolve("many"));
    try (var f = new java.io.RandomAccessFile(many.resolve("sparse.img").toFile(), "rw")) {
      f.setLength(10_000L << 16); // 10,000 shards of 64 KiB, no byte on disk
    }
    Cli save = run(server.port(), "save", "--library", many, "--image", "s3://backups/many/x.bsave",
        "--block-size", "64KiB", "--shard-size", "64KiB", "--quiet");
    assertThat(save.exit()).isEqualTo(1);
    assertThat(save.err().strip()).isEqualTo("beamsave: error: s3://backups/many/x.bsave: 10000"
        + " shards are more than the 9000 this image can hold; use --shard-size 1MiB or more");
    S3Store store = S3Store.at(server.settings(), new ObjectUri(BUCKET, ""));
    assertThat(store.stat("many/x.bsave")).isEmpty();
    assertThat(store.uploadsInProgress("many/x.bsave")).isEmpty();
  }

  /**
   * The run staging directories in the temporary directory: a save leaves none of its own
   * (other processes of the machine may have left theirs, which are no concern here).
   */
  static java.util.Set<String> tmpStaging() throws java.io.IOException {
    try (var s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> n.startsWith(".beamsave-staging-"))
          .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
    }
  }

  @Test
  void aSaveWhoseUploadFailsIsOneLineAndLeavesNothingAnywhere() throws Exception {
    java.util.Set<String> before = tmpStaging();
    try (FaultProxy failing = new FaultProxy(server.port(), 0, 1)) {
      failing.alwaysFail(line -> line.contains("partNumber=1"));
      Cli save = run(failing.port(), "save", "--library", library,
          "--image", "s3://backups/failing/payroll.bsave", "--shard-size", "2MiB", "--quiet");
      assertThat(save.exit()).isEqualTo(1);
      assertThat(save.err().strip()).isEqualTo("beamsave: error: s3://backups/failing/payroll.bsave"
          + " part 1: HTTP 500 InternalError: injected (gave up after 8 attempts)");
    }
    S3Store store = S3Store.at(server.settings(), new ObjectUri(BUCKET, ""));
    assertThat(store.stat("failing/payroll.bsave")).isEmpty();
    assertThat(store.uploadsInProgress("failing/payroll.bsave")).isEmpty();
    assertThat(store.list("failing/")).as("no staged shard is left")
        .extracting(Store.Item::key).noneMatch(k -> k.contains(".beamsave-staging-"));
    java.util.Set<String> left = tmpStaging();
    left.removeAll(before);
    assertThat(left).as(() -> "what the staging left holds: " + left.stream()
        .map(n -> Path.of(System.getProperty("java.io.tmpdir"), n)).map(p -> {
          try (var w = Files.walk(p)) {
            return w.map(f -> p.relativize(f) + (Files.isDirectory(f) ? "/" : "")).toList()
                .toString();
          } catch (java.io.IOException e) {
            return p + ": " + e;
          }
        }).toList()).isEmpty();
  }

  @Test
  void uploadsWithTransferCompressionAndReadsItBackEveryWay() throws Exception {
    int port = server.port();
    Cli up = ok(port, "upload", "--from", image, "--to", "s3://backups/zlib/payroll.bsave",
        "--transfer-codec", "zlib:6", "--part-size", "5MiB", "--quiet");
    assertThat(up.out()).contains("zlib:6");
    ok(port, "verify", "--image", "s3://backups/zlib/payroll.bsave", "--quiet");
    assertThat(ok(port, "list", "--image", "s3://backups/zlib/payroll.bsave").out())
        .contains("small.txt");
    Path target = work.resolve("restored-zlib");
    ok(port, "restore", "--image", "s3://backups/zlib/payroll.bsave", "--target", target, "--quiet");
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
    Path back = work.resolve("back-zlib.bsave");
    ok(port, "download", "--from", "s3://backups/zlib/payroll.bsave", "--to", back, "--quiet");
    assertThat(Files.mismatch(back, image)).isEqualTo(-1);
    Cli again = run(port, "download", "--from", "s3://backups/zlib/payroll.bsave", "--to", back);
    assertThat(again.exit()).isEqualTo(1);
    assertThat(again.err().strip()).isEqualTo("beamsave: error: " + back + " exists; use --overwrite to replace it");
    assertThat(ok(port, "history", "--at", "s3://backups/zlib").out())
        .contains("upload").contains("compress in transfer");
  }

  @Test
  void listAndSingleFileRestoreFetchOnlyWhatTheyNeed() throws Exception {
    ok(server.port(), "upload", "--from", image, "--to", "s3://backups/ranged/payroll.bsave", "--quiet");
    long size = Files.size(image);
    try (FaultProxy counting = new FaultProxy(server.port(), 0, 1)) {
      ok(counting.port(), "list", "--image", "s3://backups/ranged/payroll.bsave");
      long forList = counting.answerBytes();
      assertThat(forList).as("bytes fetched by list").isLessThan(size / 20);
      Path target = work.resolve("restored-one");
      ok(counting.port(), "restore", "--image", "s3://backups/ranged/payroll.bsave",
          "--target", target, "--include", "small.txt", "--quiet");
      assertThat(Files.readString(target.resolve("small.txt"))).isEqualTo("just this one");
      assertThat(counting.answerBytes() - forList).as("bytes fetched by a one-file restore")
          .isLessThan(size / 3);
    }
  }

  @Test
  void uploadDownloadAndRestoreSurviveAFlakyNetwork() throws Exception {
    try (FaultProxy flaky = new FaultProxy(server.port(), 0.25, 99)) {
      int port = flaky.port();
      ok(port, "upload", "--from", image, "--to", "s3://backups/flaky/payroll.bsave",
          "--part-size", "5MiB", "--parallel", "3", "--quiet");
      Path back = work.resolve("back-flaky.bsave");
      ok(port, "download", "--from", "s3://backups/flaky/payroll.bsave", "--to", back, "--quiet");
      assertThat(Files.mismatch(back, image)).isEqualTo(-1);
      Path target = work.resolve("restored-flaky");
      ok(port, "restore", "--image", "s3://backups/flaky/payroll.bsave", "--target", target, "--quiet");
      assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
      assertThat(flaky.faults()).as("faults injected").isGreaterThan(3);
    }
  }

  @Test
  void aByteChangedOnTheServersDiskIsCaughtByVerifyAndRestore() throws Exception {
    int port = server.port();
    ok(port, "upload", "--from", image, "--to", "s3://backups/rot/payroll.bsave", "--quiet");
    Path stored = server.file(BUCKET, "rot/payroll.bsave");
    try (var ch = java.nio.channels.FileChannel.open(stored, StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
      ch.read(b, 100_000);
      b.put(0, (byte) (b.get(0) ^ 0x40)).rewind();
      ch.write(b, 100_000);
    }
    Cli verify = run(port, "verify", "--image", "s3://backups/rot/payroll.bsave", "--quiet");
    assertThat(verify.exit()).isEqualTo(1);
    assertThat(verify.err()).startsWith("beamsave: error: s3://backups/rot/payroll.bsave: shard ")
        .contains("; damaged file");
    Cli restore = run(port, "restore", "--image", "s3://backups/rot/payroll.bsave",
        "--target", work.resolve("restored-rot"), "--quiet");
    assertThat(restore.exit()).isEqualTo(1);
    assertThat(restore.err()).contains("s3://backups/rot/payroll.bsave: shard ");
  }

  @Test
  void anUploadToAServerThatIsNotRunningOrSpeaksNoTlsIsOneLineWithItsRemedy() throws Exception {
    int closed;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1,
        java.net.InetAddress.getLoopbackAddress())) {
      closed = s.getLocalPort();
    }
    Cli refused = run(closed, "upload", "--from", image, "--to", "s3://backups/x.bsave");
    assertThat(refused.exit()).isEqualTo(1);
    assertThat(refused.err().strip()).isEqualTo("beamsave: error: s3://backups/x.bsave: cannot"
        + " connect to http://127.0.0.1:" + closed + ": connection refused (is the S3 server"
        + " running? check --s3-endpoint)");
    Cli tls = Cli.run("upload", "--from", image, "--to", "s3://backups/x.bsave",
        "--s3-endpoint", "https://127.0.0.1:" + server.port());
    assertThat(tls.exit()).isEqualTo(1);
    assertThat(tls.err().strip()).isEqualTo("beamsave: error: s3://backups/x.bsave: cannot"
        + " connect to https://127.0.0.1:" + server.port() + ": the TLS handshake failed; the"
        + " server speaks plain HTTP? use http://127.0.0.1:" + server.port());
  }

  @Test
  void aMissingBucketOrImageOrServerIsOneClearLine() {
    Cli noBucket = run(server.port(), "upload", "--from", image, "--to", "s3://nowhere/x.bsave");
    assertThat(noBucket.exit()).isEqualTo(1);
    assertThat(noBucket.err().strip()).isEqualTo("beamsave: error: s3://nowhere/x.bsave: no such bucket");
    Cli noImage = run(server.port(), "list", "--image", "s3://backups/none.bsave");
    assertThat(noImage.err().strip()).isEqualTo("beamsave: error: s3://backups/none.bsave: no such image");
    Cli noServer = Cli.run("list", "--image", "s3://backups/x.bsave", "--s3-endpoint", "http://127.0.0.1:1");
    assertThat(noServer.exit()).isEqualTo(1);
    assertThat(noServer.err().strip())
        .isEqualTo("beamsave: error: s3://backups/x.bsave: cannot connect to http://127.0.0.1:1:"
            + " connection refused (is the S3 server running? check --s3-endpoint)");
    Cli badUri = Cli.run("download", "--from", "s3://x/y", "--to", work.resolve("z"));
    assertThat(badUri.err().strip()).isEqualTo("beamsave: error: s3://x/y: 'x' is not a valid bucket name");
  }

  /**
   * What a save killed after sending its first shard leaves in the store: the image's upload,
   * holding one part, and the claim beside its key that names it (made by the save's own sink,
   * which a killed process never finishes nor discards).
   */
  static String killedSave(String image) throws java.io.IOException {
    StoreImageSink sink = new StoreImageSink(ObjectUri.parse(image, false),
        ObjectUri.parse(image + "-staging/", true), server.settings(), 0, 1);
    ImageSink prepared = sink.prepare();
    byte[] shard = new byte[6 << 20];
    new java.util.Random(7).nextBytes(shard);
    prepared.writeShard(0, shard, shard.length);
    String key = ObjectUri.parse(image, false).key();
    S3Store store = S3Store.at(server.settings(), new ObjectUri(BUCKET, ""));
    return store.uploadsInProgress(key).get(0);
  }

  /**
   * What a killed save leaves in the store (an unfinished upload beside a finished image) is
   * listed by cleanup, removed with --yes, and the finished image is left whole.
   */
  @Test
  void cleanupRemovesAnUnfinishedUploadAndLeavesTheFinishedImage() throws Exception {
    int port = server.port();
    ok(port, "upload", "--from", image, "--to", "s3://backups/tidy/payroll.bsave", "--quiet");
    S3Store store = S3Store.at(server.settings(), new ObjectUri(BUCKET, ""));
    killedSave("s3://backups/tidy/killed.bsave");
    // A sibling prefix is another location: what is left there is not this one's to remove.
    killedSave("s3://backups/tidy-old/killed.bsave");
    assertThat(store.uploads("tidy/")).extracting(Store.Upload::key)
        .containsExactly("tidy/killed.bsave");

    Cli dry = ok(port, "cleanup", "--at", "s3://backups/tidy");
    assertThat(dry.out()).contains("would remove").contains("s3://backups/tidy/killed.bsave")
        .doesNotContain("payroll").doesNotContain("tidy-old");
    assertThat(store.uploads("tidy/")).hasSize(1);
    Cli clean = ok(port, "cleanup", "--at", "s3://backups/tidy", "--yes");
    assertThat(clean.out()).contains("s3://backups/tidy/killed.bsave");
    assertThat(store.uploads("tidy/")).isEmpty();
    assertThat(store.uploads("tidy-old/")).extracting(Store.Upload::key)
        .containsExactly("tidy-old/killed.bsave");
    ok(port, "cleanup", "--at", "s3://backups/tidy-old", "--yes");
    assertThat(store.uploads("tidy-old/")).isEmpty();
    ok(port, "verify", "s3://backups/tidy/payroll.bsave", "--quiet");
    assertThat(ok(port, "cleanup", "--at", "s3://backups/tidy").out())
        .contains("nothing left by failed or killed runs");
  }

  /**
   * Cleanup aborts only the uploads beamsave began: another application's uploads (begun with
   * the AWS SDK, no beamsave metadata, one of them to a key ending in .bsave) beside which a
   * writer put objects by an upload state's name, a 2-byte one and one naming an upload that
   * does not exist, survive it and can still be completed; the uploads a killed save and a
   * killed upload left beside them are aborted.
   */
  @Test
  void cleanupAbortsOnlyWhatBeamsaveBeganWhateverLiesBesideAnotherApplicationsUpload()
      throws Exception {
    int port = server.port();
    S3Store store = S3Store.at(server.settings(), new ObjectUri(BUCKET, ""));
    byte[] report = "id,total\n1,42\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    try (S3Client other = otherApplication()) {
      String csv = begin(other, "shared/report.csv", report);
      String bsave = begin(other, "shared/theirs.bsave", report);
      byte[] forged = "hi".getBytes(java.nio.charset.StandardCharsets.UTF_8);
      store.put("shared/report.csv.beamsave-upload", forged, forged.length, "text/plain");
      byte[] guessed = "uploadId=guessed\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);
      store.put("shared/theirs.bsave.beamsave-upload", guessed, guessed.length, "text/plain");

      killedSave("s3://backups/shared/killed.bsave");
      // A killed upload's state, as every version writes it: the upload's id first of all.
      String interrupted = store.createMultipart("shared/interrupted.bsave",
          "application/octet-stream", java.util.Map.of());
      byte[] state = ("uploadId=" + interrupted + "\ncodec=none\n")
          .getBytes(java.nio.charset.StandardCharsets.UTF_8);
      store.put("shared/interrupted.bsave.beamsave-upload", state, state.length, "text/plain");
      assertThat(store.uploads("shared/")).hasSize(4);

      Cli dry = ok(port, "cleanup", "--at", "s3://backups/shared");
      assertThat(dry.out().lines().filter(l -> l.contains("unfinished upload")))
          .as(dry.out())
          .noneMatch(l -> l.startsWith("remove") && (l.contains("report") || l.contains("theirs")))
          .anyMatch(l -> l.startsWith("remove") && l.contains("shared/killed.bsave"))
          .anyMatch(l -> l.startsWith("remove") && l.endsWith("shared/interrupted.bsave"))
          .anyMatch(l -> l.startsWith("keep") && l.contains("shared/report.csv (not"
              + " beamsave's: no upload state beamsave wrote names it)"))
          .anyMatch(l -> l.startsWith("keep") && l.contains("shared/theirs.bsave (not"
              + " beamsave's"));
      assertThat(dry.out()).contains("s3://backups/shared/report.csv.beamsave-upload (not"
          + " beamsave's: not an upload state beamsave wrote)");

      Cli clean = ok(port, "cleanup", "--at", "s3://backups/shared", "--yes");
      // Both uploads and their states, and the state naming an upload that is not there.
      assertThat(clean.out()).contains("removed 5 leftovers")
          .contains("removed  upload state             17 B  s3://backups/shared/theirs.bsave"
              + ".beamsave-upload\n");
      assertThat(store.uploads("shared/")).extracting(Store.Upload::uploadId)
          .containsExactlyInAnyOrder(csv, bsave);
      assertThat(store.get("shared/report.csv.beamsave-upload")).isEqualTo(forged);
      assertThat(store.list("shared/")).extracting(Store.Item::key)
          .containsExactly("shared/report.csv.beamsave-upload");

      // Both of the other application's uploads are whole: it completes them.
      for (String[] up : new String[][] {{"shared/report.csv", csv}, {"shared/theirs.bsave",
          bsave}}) {
        other.completeMultipartUpload(r -> r.bucket(BUCKET).key(up[0]).uploadId(up[1])
            .multipartUpload(m -> m.parts(other.listParts(l -> l.bucket(BUCKET).key(up[0])
                .uploadId(up[1])).parts().stream().map(pt -> CompletedPart.builder()
                    .partNumber(pt.partNumber()).eTag(pt.eTag()).build()).toList())));
        assertThat(store.get(up[0])).as(up[0]).isEqualTo(report);
      }
    }
    assertThat(store.uploads("shared/")).isEmpty();
    store.delete("shared/report.csv");
    store.delete("shared/theirs.bsave");
    store.delete("shared/report.csv.beamsave-upload");
  }

  /** Another application's client: the AWS SDK as it comes, nothing of beamsave's. */
  static S3Client otherApplication() {
    return S3Client.builder()
        .endpointOverride(java.net.URI.create(server.endpoint()))
        .forcePathStyle(true)
        .region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
            S3TestServer.ACCESS_KEY, S3TestServer.SECRET_KEY)))
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .httpClient(Apache5HttpClient.create())
        .build();
  }

  /** Begins {@code key}'s upload with {@code part} as its only part; returns its id. */
  static String begin(S3Client client, String key, byte[] part) {
    String id = client.createMultipartUpload(r -> r.bucket(BUCKET).key(key)).uploadId();
    client.uploadPart(r -> r.bucket(BUCKET).key(key).uploadId(id).partNumber(1),
        RequestBody.fromBytes(part));
    return id;
  }
}

package io.beamsave.transforms.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.ZstdInputStream;
import io.beamsave.testing.FaultProxy;
import io.beamsave.testing.S3MockServer;
import io.beamsave.testing.S3TestServer;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.store.Md5;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.Stores;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Upload and download of images against a real S3 server (S3Proxy), with and without faults. */
class ImageTransferTest {
  static final String BUCKET = "images";
  static final long PART = ImageUpload.MIN_PART;

  @TempDir static Path dir;
  static S3TestServer server;
  static Store store;
  static S3Store raw;
  static Path image;

  @BeforeAll
  static void start() throws Exception {
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), BUCKET);
    store = Stores.bucketOf(new ObjectUri(BUCKET, ""), server.settings());
    raw = S3Store.at(server.settings(), new ObjectUri(BUCKET, ""));
    image = dir.resolve("image.bsave");
    Files.write(image, mixed(3 * PART + 12345));
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  /** Half random, half text: some parts compress, some do not. */
  static byte[] mixed(long size) {
    byte[] b = new byte[(int) size];
    Random r = new Random(7);
    for (int i = 0; i < b.length; i += 1 << 16) {
      int n = Math.min(1 << 16, b.length - i);
      if ((i >> 16) % 2 == 0) {
        byte[] rnd = new byte[n];
        r.nextBytes(rnd);
        System.arraycopy(rnd, 0, b, i, n);
      } else {
        for (int j = 0; j < n; j++) {
          b[i + j] = (byte) ("the quick brown fox " + (i + j) / 100).charAt(j % 20);
        }
      }
    }
    return b;
  }

  static ImageUpload.Options options(String codec, boolean resume) {
    return new ImageUpload.Options(TransferCodec.parse(codec), PART, 3, 0, resume);
  }

  @ParameterizedTest
  @ValueSource(strings = {"none", "zlib:6", "zstd:3"})
  void uploadsAndDownloadsIdenticalBytesWithEveryTransferCodec(String codec) throws Exception {
    ObjectUri to = new ObjectUri(BUCKET, "codec/" + codec.replace(':', '-') + ".bsave");
    ImageUpload.Result up = ImageUpload.upload(store, image, to, options(codec, false), null);
    assertThat(up.rawBytes()).isEqualTo(Files.size(image));
    assertThat(up.parts()).isGreaterThan(1);
    Path stored = server.file(BUCKET, to.key());
    assertThat(Files.size(stored)).isEqualTo(up.storedBytes());
    // The stored object is one standard stream that ordinary tools read.
    byte[] decoded;
    try (InputStream in =
        codec.startsWith("zlib") ? new GZIPInputStream(Files.newInputStream(stored))
            : codec.startsWith("zstd") ? new ZstdInputStream(Files.newInputStream(stored))
            : Files.newInputStream(stored)) {
      decoded = in.readAllBytes();
    }
    assertThat(decoded).isEqualTo(Files.readAllBytes(image));
    if (!codec.equals("none")) {
      assertThat(up.storedBytes()).isLessThan(up.rawBytes());
    }
    Path back = dir.resolve("back-" + codec.replace(':', '-') + ".bsave");
    ImageDownload.Result down = ImageDownload.download(store, to, back, 3, null);
    assertThat(down.codec().spec()).isEqualTo(TransferCodec.parse(codec).spec());
    assertThat(Files.readAllBytes(back)).isEqualTo(Files.readAllBytes(image));
    assertThat(store.stat(ImageUpload.stateObject(to).key())).isEmpty();
    assertThat(raw.uploadsInProgress(to.key())).isEmpty();
  }

  @Test
  void smallCompressedChunksAreGatheredIntoPartsOfAtLeastFiveMiB() throws Exception {
    Path zeros = dir.resolve("zeros.bsave");
    Files.write(zeros, new byte[(int) (6 * PART)]);
    ObjectUri to = new ObjectUri(BUCKET, "zeros.bsave");
    ImageUpload.Result up = ImageUpload.upload(store, zeros, to, options("zstd:3", false), null);
    assertThat(up.parts()).isEqualTo(1);
    Path back = dir.resolve("zeros-back.bsave");
    ImageDownload.download(store, to, back, 2, null);
    assertThat(Files.readAllBytes(back)).isEqualTo(Files.readAllBytes(zeros));
  }

  @Test
  void survivesServerErrorsThrottlingAndResetConnections() throws Exception {
    try (FaultProxy proxy = new FaultProxy(server.port(), 0.3, 42)) {
      Store flaky = Stores.bucketOf(new ObjectUri(BUCKET, ""), S3TestServer.settings(proxy.port()).withMaxAttempts(12));
      for (String codec : new String[] {"none", "zstd:3"}) {
        ObjectUri to = new ObjectUri(BUCKET, "flaky/" + codec.replace(':', '-') + ".bsave");
        ImageUpload.upload(flaky, image, to, options(codec, false), null);
        Path back = dir.resolve("flaky-" + codec.replace(':', '-') + ".bsave");
        ImageDownload.download(flaky, to, back, 3, null);
        assertThat(Files.readAllBytes(back)).isEqualTo(Files.readAllBytes(image));
      }
      assertThat(proxy.faults()).as("faults injected").isGreaterThan(5);
    }
  }

  @Test
  void aFailedUploadIsAbortedAndLeavesNoObjectNoPartsNoState() throws Exception {
    try (FaultProxy proxy = new FaultProxy(server.port(), 0, 1)) {
      proxy.alwaysFail(line -> line.contains("partNumber=2"));
      Store failing = Stores.bucketOf(new ObjectUri(BUCKET, ""), S3TestServer.settings(proxy.port()).withMaxAttempts(2));
      ObjectUri to = new ObjectUri(BUCKET, "aborted.bsave");
      assertThatThrownBy(() -> ImageUpload.upload(failing, image, to, options("none", false), null))
          .isInstanceOf(BeamsaveException.class)
          .hasMessageContaining("s3://images/aborted.bsave part 2")
          .hasMessageContaining("gave up after 2 attempts");
      assertThat(store.stat(to.key())).isEmpty();
      assertThat(raw.uploadsInProgress(to.key())).isEmpty();
      assertThat(store.stat(ImageUpload.stateObject(to).key())).isEmpty();
    }
  }

  @Test
  void resumeKeepsIntactPartsAndResendsOnlyTheRest() throws Exception {
    ObjectUri to = new ObjectUri(BUCKET, "resumed.bsave");
    // An interrupted upload, as a killed process leaves it: begun, two parts stored.
    String id = store.createMultipart(to.key(), "application/octet-stream",
        java.util.Map.of(ImageUpload.META_CODEC, "none"));
    byte[] all = Files.readAllBytes(image);
    for (int part = 1; part <= 2; part++) {
      int off = (int) ((part - 1) * PART);
      store.uploadPart(to.key(), id, part, java.util.Arrays.copyOfRange(all, off, (int) (off + PART)),
          (int) PART, Md5.of(all, off, (int) PART));
    }
    java.util.Properties state = new java.util.Properties();
    state.setProperty("uploadId", id);
    state.setProperty("codec", "none");
    state.setProperty("partSize", Long.toString(PART));
    state.setProperty("imageSize", Long.toString(all.length));
    java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
    state.store(b, null);
    store.put(ImageUpload.stateObject(to).key(), b.toByteArray(), b.size(), "text/plain");
    assertThat(store.stat(to.key())).as("nothing at the key before completion").isEmpty();

    ImageUpload.Result r = ImageUpload.upload(store, image, to, options("none", true), null);
    assertThat(r.partsReused()).isEqualTo(2);
    assertThat(r.parts()).isEqualTo(4);
    assertThat(Files.readAllBytes(server.file(BUCKET, to.key()))).isEqualTo(all);
    assertThat(raw.uploadsInProgress(to.key())).isEmpty();
    assertThat(store.stat(ImageUpload.stateObject(to).key())).isEmpty();
  }

  /**
   * An upload interrupted while its key was empty, resumed after another writer put an object
   * there, is refused rather than replacing that object; on S3Mock, which enforces the
   * completion's If-None-Match, and on S3Proxy, which the look before completing covers.
   */
  @Test
  void aResumedUploadDoesNotReplaceAnObjectWrittenWhileItWasInterrupted() throws Exception {
    try (S3MockServer strict = S3MockServer.start(dir.resolve("s3mock"), BUCKET)) {
      for (Store at : List.of(store,
          Stores.bucketOf(new ObjectUri(BUCKET, ""), strict.settings()))) {
        ObjectUri to = new ObjectUri(BUCKET, "appeared.bsave");
        String id = at.createMultipart(to.key(), "application/octet-stream",
            java.util.Map.of(ImageUpload.META_CODEC, "none"));
        byte[] all = Files.readAllBytes(image);
        java.util.Properties state = new java.util.Properties();
        state.setProperty("uploadId", id);
        state.setProperty("codec", "none");
        state.setProperty("partSize", Long.toString(PART));
        state.setProperty("imageSize", Long.toString(all.length));
        state.setProperty("expect", Store.ABSENT);
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        state.store(b, null);
        at.put(ImageUpload.stateObject(to).key(), b.toByteArray(), b.size(), "text/plain");
        byte[] theirs = "another writer's".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        at.put(to.key(), theirs, theirs.length, "application/octet-stream");

        assertThatThrownBy(() -> ImageUpload.upload(at, image, to, options("none", true), null))
            .hasMessageContaining("s3://" + BUCKET + "/appeared.bsave: another object was"
                + " written under this key meanwhile; nothing was written over it");
        if (at == store) {
          // (S3Mock's abort removes the object as well: a defect of the mock.)
          assertThat(at.get(to.key())).isEqualTo(theirs);
        }
        // A fresh upload means to replace what is there, and does.
        ImageUpload.upload(at, image, to, options("none", false), null);
        assertThat(at.get(to.key())).isEqualTo(all);
      }
    }
  }

  @Test
  void resumingWithOtherOptionsIsRefused() throws Exception {
    ObjectUri to = new ObjectUri(BUCKET, "other-options.bsave");
    String id = store.createMultipart(to.key(), "application/octet-stream", java.util.Map.of());
    java.util.Properties state = new java.util.Properties();
    state.setProperty("uploadId", id);
    state.setProperty("codec", "zstd:3");
    state.setProperty("partSize", Long.toString(PART));
    state.setProperty("imageSize", Long.toString(Files.size(image)));
    java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
    state.store(b, null);
    store.put(ImageUpload.stateObject(to).key(), b.toByteArray(), b.size(), "text/plain");
    assertThatThrownBy(() -> ImageUpload.upload(store, image, to, options("none", true), null))
        .hasMessageContaining("used --transfer-codec zstd:3");
    // Without --resume, a fresh upload replaces it and leaves no parts behind.
    ImageUpload.upload(store, image, to, options("none", false), null);
    assertThat(raw.uploadsInProgress(to.key())).isEmpty();
    assertThat(Files.readAllBytes(server.file(BUCKET, to.key()))).isEqualTo(Files.readAllBytes(image));
  }

  @Test
  void aDamagedStoredStreamFailsItsDownloadAndLeavesNoFile() throws Exception {
    ObjectUri to = new ObjectUri(BUCKET, "damaged.bsave");
    ImageUpload.upload(store, image, to, options("zlib:6", false), null);
    Path stored = server.file(BUCKET, to.key());
    byte[] b = Files.readAllBytes(stored);
    b[b.length / 2] ^= 0x55;
    Files.write(stored, b);
    Path back = dir.resolve("damaged-back.bsave");
    assertThatThrownBy(() -> ImageDownload.download(store, to, back, 2, null))
        .isInstanceOf(BeamsaveException.class)
        .hasMessageContaining("s3://images/damaged.bsave");
    assertThat(back).doesNotExist();
    assertThat(dir.resolve("damaged-back.bsave.partial")).doesNotExist();
    assertThat(dir.resolve("damaged-back.bsave.download")).doesNotExist();
  }

  @Test
  void missingBucketAndWrongCredentialsFailWithOneClearLine() {
    ObjectUri nowhere = new ObjectUri("no-such-bucket", "x.bsave");
    assertThatThrownBy(() -> ImageUpload.upload(Stores.bucketOf(nowhere, server.settings()),
            image, nowhere, options("none", false), null))
        .hasMessage("s3://no-such-bucket/x.bsave: no such bucket");
    assertThatThrownBy(
            () -> Stores.bucketOf(nowhere, new S3Settings("http://127.0.0.1:1", true, "us-east-1",
                2)).stat("x"))
        .hasMessage("s3://no-such-bucket/x: cannot connect to http://127.0.0.1:1: connection"
            + " refused (is the S3 server running? check --s3-endpoint)");
  }
}

package io.beamsave.transforms.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.testing.S3MockServer;
import io.beamsave.testing.S3TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An upload's claim, on both S3 servers: it names the upload beamsave began and no other, and
 * nothing else that lies by a claim's name is taken for one.
 */
class UploadClaimTest {
  static final String BUCKET = "claims";

  @TempDir static Path dir;
  static S3TestServer server;
  static S3MockServer strict;

  @BeforeAll
  static void start() throws Exception {
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), BUCKET);
    strict = S3MockServer.start(dir.resolve("s3mock"), BUCKET);
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
    strict.close();
  }

  static int roots;

  /** Each test's own bucket root on each server. */
  static Stream<Store> stores() {
    int n = ++roots;
    return Stream.of(Stores.open("s3://" + BUCKET + "/r" + n, server.settings()),
        Stores.open("s3://" + BUCKET + "/r" + n, strict.settings()));
  }

  static Store.Upload listed(Store store, String key, String id) {
    return store.uploads(key).stream().filter(u -> u.uploadId().equals(id)).findFirst()
        .orElseThrow();
  }

  @ParameterizedTest
  @MethodSource("stores")
  void aClaimNamesTheUploadItWasWrittenForAndNoOther(Store store) {
    String key = "claims/a.bsave";
    UploadClaim claim = UploadClaim.begin(store, key, "application/octet-stream",
        Map.of("beamsave-run", "r1"), "image", "r1");
    String theirs = store.createMultipart(key, "application/octet-stream", Map.of());
    String name = UploadClaim.nameFor(key, claim.uploadId());
    assertThat(UploadClaim.claimedKey(name)).isEqualTo(key);

    UploadClaim read = UploadClaim.read(store, name).orElseThrow();
    assertThat(read.uploadId()).isEqualTo(claim.uploadId());
    assertThat(read.get("kind")).isEqualTo("image");
    assertThat(read.claims(name, listed(store, key, claim.uploadId()))).isTrue();
    assertThat(read.claims(name, listed(store, key, theirs))).as("another upload to the key")
        .isFalse();
    // The same claim moved beside another key claims nothing there.
    byte[] text = store.get(name);
    String moved = UploadClaim.nameFor("claims/b.bsave", claim.uploadId());
    store.put(moved, text, text.length, "text/plain");
    assertThat(UploadClaim.read(store, moved)).isEmpty();
    store.abort(key, claim.uploadId());
    store.abort(key, theirs);
  }

  @ParameterizedTest
  @MethodSource("stores")
  void whatLiesByAClaimsNameButIsNoneIsNotTakenForOne(Store store) {
    put(store, "x.csv" + UploadClaim.SUFFIX, "hi");
    put(store, "y.csv" + UploadClaim.SUFFIX, "uploadId=\\uZZZZ\n");
    put(store, "z.csv" + UploadClaim.SUFFIX, "codec=none\n");
    byte[] big = new byte[(int) UploadClaim.MAX_BYTES + 1];
    byte[] head = "uploadId=abc\n".getBytes(StandardCharsets.UTF_8);
    System.arraycopy(head, 0, big, 0, head.length);
    store.put("w.csv" + UploadClaim.SUFFIX, big, big.length, "text/plain");
    for (String k : new String[] {"x", "y", "z", "w"}) {
      assertThat(UploadClaim.read(store, k + ".csv" + UploadClaim.SUFFIX)).as(k).isEmpty();
    }
    assertThat(UploadClaim.read(store, "none.csv" + UploadClaim.SUFFIX)).isEmpty();
    // A state an earlier version wrote names its id alone, and is taken for the one beside it.
    put(store, "old.bsave" + UploadClaim.SUFFIX, "uploadId=abc\ncodec=none\n");
    assertThat(UploadClaim.read(store, "old.bsave" + UploadClaim.SUFFIX))
        .map(UploadClaim::uploadId).contains("abc");
  }

  @Test
  void onlyAClaimsOwnNamesAreClaimsNames() {
    assertThat(UploadClaim.claimedKey("a/b.bsave.beamsave-upload")).isEqualTo("a/b.bsave");
    assertThat(UploadClaim.claimedKey("a/b.bsave.beamsave-upload-0123456789abcdef"))
        .isEqualTo("a/b.bsave");
    assertThat(UploadClaim.nameFor("a/b.bsave", "some-id")).startsWith("a/b.bsave.beamsave-upload-");
    assertThat(UploadClaim.claimedKey(UploadClaim.nameFor("k", "id"))).isEqualTo("k");
    for (String other : new String[] {"a/b.bsave", "a/b.bsave.beamsave-upload-0123",
        "a/b.bsave.beamsave-upload-0123456789ABCDEF", "a/b.bsave.beamsave-uploads",
        ".beamsave-upload-0123456789abcdef"}) {
      assertThat(UploadClaim.claimedKey(other)).as(other).isNull();
    }
  }

  static void put(Store store, String key, String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    store.put(key, b, b.length, "text/plain");
  }
}

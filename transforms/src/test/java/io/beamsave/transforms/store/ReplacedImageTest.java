package io.beamsave.transforms.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.S3TestServer;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.read.ImageSources;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An image put in the place of the one a command began reading is reported as replaced, never
 * as damage: object reads carry the ETag first seen ({@code If-Match}), part copies the ETag the
 * copied bytes were checked under ({@code x-amz-copy-source-if-match}), and a reader told what
 * another saw refuses a different file or object at the same name.
 */
class ReplacedImageTest {
  @TempDir static Path dir;
  static S3TestServer server;
  static Store store;

  @BeforeAll
  static void start() throws Exception {
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), "bucket");
    store = Stores.bucketOf(new ObjectUri("bucket", ""), server.settings());
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  static byte[] bytes(String s, int n) {
    return s.repeat(n).getBytes(StandardCharsets.US_ASCII);
  }

  static void put(String key, byte[] b) {
    store.put(key, b, b.length, "application/octet-stream");
  }

  @Test
  void anObjectReplacedWhileItIsReadFailsItsNextReadAsReplaced() throws Exception {
    put("images/a.bsave", bytes("first ", 20_000));
    try (ImageSource src = ImageSources.open("s3://bucket/images/a.bsave", server.settings())) {
      byte[] buf = new byte[6];
      src.read(0, buf, 0, 6);
      assertThat(new String(buf, StandardCharsets.US_ASCII)).isEqualTo("first ");
      put("images/a.bsave", bytes("other ", 20_000));
      assertThatThrownBy(() -> src.read(6, buf, 0, 6))
          .isInstanceOfSatisfying(StoreException.class,
              e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.CHANGED))
          .hasMessageContaining("s3://bucket/images/a.bsave")
          .hasMessageContaining("replaced");
    }
  }

  @Test
  void aReaderToldTheTagAnotherSawRefusesWhatIsThereNow() throws Exception {
    put("images/b.bsave", bytes("first ", 100));
    String seen;
    try (ImageSource src = ImageSources.open("s3://bucket/images/b.bsave", server.settings())) {
      seen = src.tag();
    }
    assertThat(seen).isNotEmpty();
    ImageSources.open("s3://bucket/images/b.bsave", server.settings(), seen).close();
    put("images/b.bsave", bytes("later ", 100));
    assertThatThrownBy(
        () -> ImageSources.open("s3://bucket/images/b.bsave", server.settings(), seen))
        .isInstanceOfSatisfying(StoreException.class,
            e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.CHANGED))
        .hasMessageContaining("replaced");

    Path file = dir.resolve("c.bsave");
    Files.write(file, bytes("first ", 100));
    String fileTag;
    try (ImageSource src = ImageSources.open(file.toString(), null)) {
      fileTag = src.tag();
    }
    ImageSources.open(file.toString(), null, fileTag).close();
    Path other = dir.resolve("c.bsave.new");
    Files.write(other, bytes("first ", 100));
    Files.move(other, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    assertThatThrownBy(() -> ImageSources.open(file.toString(), null, fileTag))
        .isInstanceOfSatisfying(StoreException.class,
            e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.CHANGED))
        .hasMessageContaining(file.toString());
  }

  @Test
  void aPartCopiedFromAnObjectReplacedSinceItWasCheckedIsRefused() {
    byte[] five = new byte[5 << 20];
    put("images/src.bsave", five);
    String etag = store.stat("images/src.bsave").orElseThrow().etag();
    String upload = store.createMultipart("images/dst.bsave", "application/octet-stream",
        java.util.Map.of());
    try {
      store.copyPart("images/dst.bsave", upload, 1, "images/src.bsave", etag, 0, five.length);
      five[0] = 1;
      put("images/src.bsave", five);
      assertThatThrownBy(() -> store.copyPart("images/dst.bsave", upload, 2, "images/src.bsave",
          etag, 0, five.length))
          .isInstanceOfSatisfying(StoreException.class,
              e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.CHANGED));
    } finally {
      store.abort("images/dst.bsave", upload);
    }
  }
}

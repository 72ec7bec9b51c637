package io.beamsave.testing;

import io.beamsave.transforms.store.S3Settings;
import java.nio.file.Path;

/**
 * A real S3 server on loopback for tests. Two implementations, since each forgives what the
 * other refuses: {@link S3TestServer} (S3Proxy in this JVM, objects as plain files) and {@link
 * S3MockServer} (Adobe S3Mock as a process of its own, strict about conditional writes).
 */
public interface TestS3 extends AutoCloseable {
  /** Which server this is, for test names. */
  String name();

  int port();

  default String endpoint() {
    return "http://127.0.0.1:" + port();
  }

  /** Settings for this server (path-style, few attempts so failing tests fail fast). */
  default S3Settings settings() {
    return S3TestServer.settings(port());
  }

  /** Where the bytes of the object {@code bucket/key} lie on disk (to damage them). */
  Path file(String bucket, String key);

  /** Whether the server refuses a write whose If-None-Match or If-Match does not hold. */
  boolean enforcesConditionalWrites();

  /** Starts one of the two servers, storing under {@code root}, with {@code buckets}. */
  static TestS3 start(String kind, Path root, String... buckets) throws Exception {
    return switch (kind) {
      case S3TestServer.NAME -> S3TestServer.start(root, buckets);
      case S3MockServer.NAME -> S3MockServer.start(root, buckets);
      default -> throw new IllegalArgumentException(kind);
    };
  }
}

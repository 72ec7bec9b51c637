package io.beamsave.transforms.store;

import java.nio.file.Path;

/** Opens the {@link Store} at a location: {@code s3://BUCKET/PREFIX/} or a local directory. */
public final class Stores {
  private Stores() {}

  /**
   * The store rooted at {@code location}, retried as {@code s3} says when it is object
   * storage. A prefix is taken as a directory: keys are relative to {@code PREFIX/}.
   */
  public static Store open(String location, S3Settings s3) {
    if (!Location.inStore(location)) {
      return new LocalStore(Path.of(location));
    }
    ObjectUri root = ObjectUri.parse(location, true);
    String prefix = root.key().isEmpty() || root.key().endsWith("/") ? root.key()
        : root.key() + "/";
    return inBucket(s3, root.bucket(), prefix);
  }

  /** The store holding {@code uri}: its bucket, so that {@code uri.key()} is the key. */
  public static Store bucketOf(ObjectUri uri, S3Settings s3) {
    return inBucket(s3, uri.bucket(), "");
  }

  private static Store inBucket(S3Settings s3, String bucket, String prefix) {
    if (s3 == null) {
      throw new IllegalArgumentException("object storage needs its settings");
    }
    return new RetryingStore(new S3Store(s3, bucket, prefix), s3.maxAttempts(), s3.timeout(),
        s3.attemptTimeout());
  }
}

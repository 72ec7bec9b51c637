package io.beamsave.transforms.store;

import java.nio.file.Path;

/** Opens the {@link Store} at a location: {@code s3://BUCKET/PREFIX/} or a local directory. */
public final class Stores {
  private Stores() {}

  /**
   * The store rooted at {@code location}, retried as {@code settings} say when it is object
   * storage. A prefix is taken as a directory: keys are relative to {@code PREFIX/}.
   */
  public static Store open(String location, S3Settings settings) {
    if (!ObjectUri.isObject(location)) {
      return new LocalStore(Path.of(location));
    }
    ObjectUri root = ObjectUri.parse(location, true);
    String prefix = root.key().isEmpty() || root.key().endsWith("/") ? root.key()
        : root.key() + "/";
    return s3(settings, root.bucket(), prefix);
  }

  /** The store holding {@code uri}: its bucket, so that {@code uri.key()} is the key. */
  public static Store bucketOf(ObjectUri uri, S3Settings settings) {
    return s3(settings, uri.bucket(), "");
  }

  private static Store s3(S3Settings settings, String bucket, String prefix) {
    if (settings == null) {
      throw new IllegalArgumentException("object storage needs its settings");
    }
    return new RetryingStore(new S3Store(settings, bucket, prefix), settings.maxAttempts(),
        settings.timeout(), settings.attemptTimeout());
  }
}

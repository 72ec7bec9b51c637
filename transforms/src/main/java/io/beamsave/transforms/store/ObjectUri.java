package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import java.io.Serializable;

/** An object (or a key prefix) in a bucket, written {@code s3://BUCKET/KEY}. */
public record ObjectUri(String bucket, String key) implements Serializable {
  public static final String SCHEME = "s3://";

  /** Parses {@code s3://BUCKET/KEY}; the key may be empty only when {@code prefixOk}. */
  public static ObjectUri parse(String uri, boolean prefixOk) {
    if (!Location.inStore(uri)) {
      throw new BeamsaveException(uri + ": not an s3:// location");
    }
    String rest = uri.substring(SCHEME.length());
    int slash = rest.indexOf('/');
    String bucket = slash < 0 ? rest : rest.substring(0, slash);
    String key = slash < 0 ? "" : rest.substring(slash + 1);
    // Bucket naming rules of S3 (3-63 characters of lower-case letters, digits, dots, hyphens).
    if (!bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
      throw new BeamsaveException(uri + ": '" + bucket + "' is not a valid bucket name");
    }
    if (key.isEmpty() && !prefixOk) {
      throw new BeamsaveException(uri + ": no object key after the bucket (s3://BUCKET/KEY)");
    }
    return new ObjectUri(bucket, key);
  }

  /** The object {@code name} under this prefix. */
  public ObjectUri child(String name) {
    return new ObjectUri(bucket, key.isEmpty() || key.endsWith("/") ? key + name : key + "/" + name);
  }

  /** The prefix holding this object ({@code s3://b/a/x} gives {@code s3://b/a/}). */
  public ObjectUri parent() {
    int slash = key.lastIndexOf('/');
    return new ObjectUri(bucket, slash < 0 ? "" : key.substring(0, slash + 1));
  }

  /** The last path segment of the key. */
  public String name() {
    String k = key.endsWith("/") ? key.substring(0, key.length() - 1) : key;
    return k.substring(k.lastIndexOf('/') + 1);
  }

  @Override
  public String toString() {
    return SCHEME + bucket + "/" + key;
  }
}

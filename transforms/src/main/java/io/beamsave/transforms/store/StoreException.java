package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;

/**
 * A store operation that failed, with one line naming the object and the cause, and what kind
 * of failure it was, so callers decide by {@link #kind} and {@link #isTransient} rather than by
 * unwrapping causes or reading messages.
 */
public final class StoreException extends BeamsaveException {
  /** What went wrong, as far as a caller needs to tell. */
  public enum Kind {
    /** No such object, bucket, upload or part. */
    NOT_FOUND,
    /** The credentials are refused or lack the permission. */
    ACCESS_DENIED,
    /** The store does not implement the operation (S3's 501, UploadPartCopy on some servers). */
    NOT_SUPPORTED,
    /** Anything else: a server error, a broken connection, bad data. */
    FAILED
  }

  private final Kind kind;
  private final boolean transientFailure;

  public StoreException(Kind kind, boolean transientFailure, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
    this.transientFailure = transientFailure;
  }

  public StoreException(Kind kind, String message) {
    this(kind, false, message, null);
  }

  public Kind kind() {
    return kind;
  }

  /** Whether trying again may succeed (a 503, throttling, a timeout, a reset connection). */
  public boolean isTransient() {
    return transientFailure;
  }

  /** The same failure with {@code suffix} added to its message, e.g. how often it was tried. */
  StoreException withSuffix(String suffix) {
    return new StoreException(kind, false, getMessage() + suffix, getCause());
  }
}

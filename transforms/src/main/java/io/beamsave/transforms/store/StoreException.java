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
    /**
     * No conversation with the store could begin: nothing listens at the endpoint, its host is
     * unknown, or TLS failed (a plain HTTP server, an untrusted certificate).
     */
    UNREACHABLE,
    /**
     * The object is not the one the caller began with: it was replaced since (its ETag changed,
     * S3's 412 on a conditional request).
     */
    CHANGED,
    /** Anything else: a server error, a broken connection, bad data. */
    FAILED
  }

  private final Kind kind;
  private final boolean transientFailure;
  private final int attempts;

  public StoreException(Kind kind, boolean transientFailure, String message, Throwable cause) {
    this(kind, transientFailure, message, cause, 1);
  }

  private StoreException(
      Kind kind, boolean transientFailure, String message, Throwable cause, int attempts) {
    super(message, cause);
    this.kind = kind;
    this.transientFailure = transientFailure;
    this.attempts = attempts;
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

  /** How many times the operation was tried before it failed like this. */
  public int attempts() {
    return attempts;
  }

  /**
   * The same failure after {@code n} attempts, no longer worth repeating (the retries are
   * spent, or it never was); the message says so only where attempts were spent on it.
   */
  StoreException after(int n) {
    if (n == attempts && !transientFailure) {
      return this;
    }
    String message = transientFailure && n > 1
        ? getMessage() + " (gave up after " + n + " attempts)"
        : getMessage();
    return new StoreException(kind, false, message, getCause(), n);
  }
}

package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The one retry policy for object storage: server errors (500, 502, 503, 504), throttling
 * (SlowDown, 429), timeouts and broken connections are retried with exponential backoff and
 * jitter; anything else (wrong credentials, a missing bucket) fails at once. Every failure that
 * leaves here is a {@link BeamsaveException} with one line naming the object and the cause.
 */
final class Retry {
  private static final long BASE_MILLIS = 100;
  private static final long CAP_MILLIS = 5_000;

  private Retry() {}

  static <T> T call(S3Settings settings, String what, Supplier<T> op) {
    int attempts = settings.maxAttempts();
    for (int attempt = 1; ; attempt++) {
      try {
        return op.get();
      } catch (SdkException | UncheckedIOException e) {
        if (!retryable(e)) {
          throw new BeamsaveException(what + ": " + describe(e, settings), e);
        }
        if (attempt >= attempts) {
          throw new BeamsaveException(
              what + ": " + describe(e, settings) + " (gave up after " + attempts + " attempts)", e);
        }
        sleep(attempt);
      }
    }
  }

  static boolean retryable(Throwable e) {
    if (e instanceof S3Exception s) {
      int status = s.statusCode();
      String code = s.awsErrorDetails() == null ? null : s.awsErrorDetails().errorCode();
      return status == 500 || status == 502 || status == 503 || status == 504 || status == 429
          || "SlowDown".equals(code) || "RequestTimeout".equals(code)
          || "InternalError".equals(code);
    }
    if (e instanceof SdkClientException || e instanceof UncheckedIOException) {
      return !hasCause(e, UnknownHostException.class) && !isMissingCredentials(e);
    }
    return false;
  }

  /** The cause in an operator's words: what the server said, or why it could not be reached. */
  static String describe(Throwable e, S3Settings settings) {
    if (e instanceof S3Exception s) {
      String code = s.awsErrorDetails() == null ? null : s.awsErrorDetails().errorCode();
      int status = s.statusCode();
      if ("NoSuchBucket".equals(code)) {
        return "no such bucket";
      }
      if ("InvalidAccessKeyId".equals(code)) {
        return "the access key is not known to " + settings.where() + " (InvalidAccessKeyId)";
      }
      if ("SignatureDoesNotMatch".equals(code)) {
        return "the secret key does not match the access key (SignatureDoesNotMatch)";
      }
      if (status == 403) {
        return "access denied" + (code == null ? "" : " (" + code + ")");
      }
      if ("NoSuchKey".equals(code) || status == 404) {
        return "no such object";
      }
      String message = s.awsErrorDetails() == null ? null : s.awsErrorDetails().errorMessage();
      return "HTTP " + status + (code == null ? "" : " " + code)
          + (message == null ? "" : ": " + message);
    }
    if (isMissingCredentials(e)) {
      return "no credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile)";
    }
    if (hasCause(e, UnknownHostException.class)) {
      return "cannot resolve the host of " + settings.where();
    }
    if (hasCause(e, ConnectException.class)) {
      return "cannot connect to " + settings.where();
    }
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root.getMessage();
    if (root instanceof IOException && m != null) {
      return m;
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  private static boolean isMissingCredentials(Throwable e) {
    return e.getMessage() != null && e.getMessage().contains("Unable to load credentials");
  }

  private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  private static void sleep(int attempt) {
    long ceiling = Math.min(CAP_MILLIS, BASE_MILLIS << Math.min(attempt - 1, 20));
    long millis = ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("interrupted while waiting to retry");
    }
  }
}

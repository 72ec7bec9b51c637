package io.beamsave.transforms.store;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketException;
import java.net.URI;
import java.net.UnknownHostException;
import java.security.GeneralSecurityException;
import java.util.Locale;
import java.util.Set;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The one place that decides what an S3 failure is: its {@link StoreException.Kind}, whether
 * trying again may help (which {@link RetryingStore} acts on), and the cause in an operator's
 * words. The SDK reports a request that never reached a server as an {@link SdkClientException}
 * whose cause chain holds the socket's own exception (a {@link ConnectException} for a refused
 * connection, an {@link SSLException} for a failed handshake), and an answer with an error as an
 * {@link S3Exception} with its HTTP status and S3 error code; both are read here and nowhere
 * else.
 *
 * <p>Retried: 5xx answers but 501, 429, 408, the codes S3 documents as "try again" ({@code
 * SlowDown}, {@code RequestTimeout}, {@code InternalError}, {@code ServiceUnavailable}), and a
 * connection that broke or timed out once it was made. Not retried, since the next attempt
 * meets the same wall: a refused connection (nothing listening), an unknown host, a TLS
 * handshake or certificate failure, missing credentials, and every other 4xx answer, {@code
 * RequestTimeTooSkewed} included (the clock stays skewed).
 */
final class S3Failure {
  private S3Failure() {}

  /** Codes S3 documents as worth repeating, whatever the status they come with. */
  private static final Set<String> RETRYABLE_CODES =
      Set.of("SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "Throttling",
          "ThrottlingException", "RequestThrottled");

  /** The failure of the request about {@code what} (an object, a part), as a StoreException. */
  static StoreException of(String what, RuntimeException e, S3Settings s3) {
    StoreException.Kind kind;
    boolean retry;
    String cause;
    if (e instanceof S3Exception s) {
      String code = code(s);
      int status = s.statusCode();
      kind = status == 404 || "NoSuchKey".equals(code) || "NoSuchBucket".equals(code)
              || "NoSuchUpload".equals(code) ? StoreException.Kind.NOT_FOUND
          : status == 403 ? StoreException.Kind.ACCESS_DENIED
          : status == 501 || "NotImplemented".equals(code) ? StoreException.Kind.NOT_SUPPORTED
          : status == 412 || "PreconditionFailed".equals(code) ? StoreException.Kind.CHANGED
          : StoreException.Kind.FAILED;
      retry = kind == StoreException.Kind.FAILED
          && (status >= 500 || status == 429 || status == 408
              || (code != null && RETRYABLE_CODES.contains(code)));
      cause = answer(s, s3);
    } else if (isMissingCredentials(e)) {
      kind = StoreException.Kind.ACCESS_DENIED;
      retry = false;
      cause = "no credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile)";
    } else {
      Network n = network(e, s3);
      kind = n.kind;
      retry = n.retry;
      cause = n.cause;
    }
    return new StoreException(kind, retry, what + ": " + cause, e);
  }

  private record Network(StoreException.Kind kind, boolean retry, String cause) {}

  /** A request that got no answer: why, and whether that may pass. */
  private static Network network(Throwable e, S3Settings s3) {
    String at = s3.where();
    if (find(e, UnknownHostException.class) != null) {
      return unreachable("cannot resolve the host of " + at + " (check --s3-endpoint)");
    }
    SSLException tls = find(e, SSLException.class);
    // Under TLS a connection reset mid-transfer surfaces as an SSLException caused by the
    // socket's: that is the network, not the handshake, and may pass.
    if (tls != null && find(tls.getCause(), SocketException.class) == null
        && find(tls.getCause(), EOFException.class) == null) {
      if (find(tls, GeneralSecurityException.class) != null
          || tls instanceof SSLPeerUnverifiedException) {
        return unreachable("cannot connect to " + at + ": its TLS certificate is not trusted ("
            + message(tls) + ")");
      }
      if (message(tls).toLowerCase(Locale.ROOT).contains("unrecognized ssl message")) {
        // The JDK's words when the first bytes back are not a TLS record: a plain HTTP server.
        return unreachable("cannot connect to " + at + ": the TLS handshake failed; the server"
            + " speaks plain HTTP? use " + plainHttp(s3));
      }
      return unreachable("cannot connect to " + at + ": the TLS handshake failed ("
          + message(tls) + ")");
    }
    ConnectException refused = find(e, ConnectException.class);
    if (refused != null && message(refused).toLowerCase(Locale.ROOT).contains("refused")) {
      return unreachable("cannot connect to " + at + ": connection refused (is the S3 server"
          + " running? check --s3-endpoint)");
    }
    if (find(e, NoRouteToHostException.class) != null) {
      return unreachable("cannot connect to " + at + ": no route to host (check --s3-endpoint)");
    }
    // A connection that broke, timed out (connecting or reading) or ended early: the network
    // or a busy server, worth another attempt. A client failure with no I/O beneath it (a bad
    // request the SDK refused to send) would only fail the same way again.
    IOException io = find(e, IOException.class);
    if (io == null) {
      return new Network(StoreException.Kind.FAILED, false, message(e));
    }
    if (find(e, java.net.SocketTimeoutException.class) != null) {
      return new Network(StoreException.Kind.FAILED, true, refused != null
          ? "cannot connect to " + at + ": no answer to the connection"
          : "no answer from " + at + " within " + s3.attemptTimeout().toSeconds() + " s"
              + " (--s3-timeout " + s3.timeoutSeconds() + " allows three attempts)");
    }
    String what = message(root(e) instanceof IOException r ? r : io);
    return new Network(StoreException.Kind.FAILED, true,
        refused != null ? "cannot connect to " + at + ": " + what : what);
  }

  private static Network unreachable(String cause) {
    return new Network(StoreException.Kind.UNREACHABLE, false, cause);
  }

  /** What the server said, in an operator's words. */
  private static String answer(S3Exception s, S3Settings s3) {
    String code = code(s);
    int status = s.statusCode();
    if ("NoSuchBucket".equals(code)) {
      return "no such bucket";
    }
    if ("InvalidAccessKeyId".equals(code)) {
      return "the access key is not known to " + s3.where() + " (InvalidAccessKeyId)";
    }
    if ("SignatureDoesNotMatch".equals(code)) {
      return "the secret key does not match the access key (SignatureDoesNotMatch)";
    }
    if ("RequestTimeTooSkewed".equals(code)) {
      return "this machine's clock differs too much from the server's (RequestTimeTooSkewed);"
          + " set the clock";
    }
    if (status == 403) {
      return "access denied" + (code == null ? "" : " (" + code + ")");
    }
    if (status == 412 || "PreconditionFailed".equals(code)) {
      return "it was replaced while it was being read (its ETag changed)";
    }
    if ("NoSuchKey".equals(code) || status == 404) {
      return "no such object";
    }
    String message = s.awsErrorDetails() == null ? null : s.awsErrorDetails().errorMessage();
    return "HTTP " + status + (code == null ? "" : " " + code)
        + (message == null ? "" : ": " + message);
  }

  /** The S3 error code of an answer, or null where its body held none (not S3's, or a HEAD). */
  static String code(S3Exception s) {
    return s.awsErrorDetails() == null ? null : s.awsErrorDetails().errorCode();
  }

  /** The endpoint with {@code http:} for its {@code https:}, for the hint. */
  private static String plainHttp(S3Settings s3) {
    URI u = URI.create(s3.endpoint() == null ? "https://s3.amazonaws.com"
        : s3.endpoint());
    return "http://" + u.getRawAuthority() + (u.getRawPath() == null ? "" : u.getRawPath());
  }

  private static boolean isMissingCredentials(Throwable e) {
    return e instanceof SdkClientException && e.getMessage() != null
        && e.getMessage().contains("Unable to load credentials");
  }

  /** The first of {@code e} and its causes that is a {@code type}, or null. */
  private static <T extends Throwable> T find(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }

  private static Throwable root(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root;
  }

  private static String message(Throwable e) {
    if (e instanceof UncheckedIOException u && u.getCause() != null) {
      e = u.getCause();
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}

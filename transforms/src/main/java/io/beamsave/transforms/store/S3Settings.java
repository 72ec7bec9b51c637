package io.beamsave.transforms.store;

import java.io.Serializable;
import java.net.URI;

/**
 * How to reach object storage: endpoint ({@code null} for AWS itself), path-style addressing,
 * region, how many attempts a request gets, and how long a request may go unanswered, its
 * attempts included, before it fails ({@code timeoutSeconds}). Credentials are deliberately not here: they come
 * from the SDK's default chain (environment, profile, instance role) on every machine that runs
 * a worker, and so never travel inside pipeline options or logs.
 */
public record S3Settings(
    String endpoint, boolean pathStyle, String region, int maxAttempts, int timeoutSeconds)
    implements Serializable {
  public static final int DEFAULT_ATTEMPTS = 8;

  /**
   * A silent endpoint (one that accepts connections and never answers) fails a command after
   * about this long: three attempts of a third of it each. With the SDK's 60 s socket timeout
   * and 8 attempts it took 494 s.
   */
  public static final int DEFAULT_TIMEOUT_SECONDS = 30;

  /** Settings with the default timeout. */
  public S3Settings(String endpoint, boolean pathStyle, String region, int maxAttempts) {
    this(endpoint, pathStyle, region, maxAttempts, DEFAULT_TIMEOUT_SECONDS);
  }

  public S3Settings {
    if (endpoint != null) {
      URI u;
      try {
        u = URI.create(endpoint);
      } catch (IllegalArgumentException e) {
        u = null; // "127.0.0.1:9000" is no URI at all: a scheme cannot begin with a digit.
      }
      if (u == null || u.getScheme() == null || u.getHost() == null) {
        throw new IllegalArgumentException(
            "endpoint " + endpoint + " is not a URL like http://host:port");
      }
    }
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("attempts must be at least 1");
    }
    if (timeoutSeconds < 3 || timeoutSeconds > 3600) {
      throw new IllegalArgumentException(
          "timeout " + timeoutSeconds + " s: give 3 to 3600 seconds");
    }
  }

  /**
   * Settings from the command line, falling back to {@code AWS_ENDPOINT_URL} and {@code
   * AWS_REGION}; an explicit endpoint (MinIO, Ceph, S3Proxy) implies path-style addressing,
   * which they all serve, unless virtual hosts were asked for.
   */
  public static S3Settings resolve(String endpoint, Boolean pathStyle, String region) {
    String ep = endpoint != null ? endpoint : blankToNull(System.getenv("AWS_ENDPOINT_URL"));
    String rg = region != null ? region : blankToNull(System.getenv("AWS_REGION"));
    if (rg == null) {
      rg = blankToNull(System.getenv("AWS_DEFAULT_REGION"));
    }
    boolean ps = pathStyle != null ? pathStyle : ep != null;
    return new S3Settings(ep, ps, rg == null ? "us-east-1" : rg, DEFAULT_ATTEMPTS);
  }

  public S3Settings withMaxAttempts(int attempts) {
    return new S3Settings(endpoint, pathStyle, region, attempts, timeoutSeconds);
  }

  public S3Settings withTimeoutSeconds(int seconds) {
    return new S3Settings(endpoint, pathStyle, region, maxAttempts, seconds);
  }

  /**
   * How long one attempt waits for the server to answer (each read of its answer): a third of
   * the timeout, so that a silent endpoint gets three attempts within it.
   */
  public java.time.Duration attemptTimeout() {
    return java.time.Duration.ofSeconds(Math.max(1, timeoutSeconds / 3));
  }

  /** How long a request may take, its attempts and the pauses between them included. */
  public java.time.Duration timeout() {
    return java.time.Duration.ofSeconds(timeoutSeconds);
  }

  /**
   * Whether request bodies are signed (SigV4 over plain HTTP): the store then checks each body's
   * SHA-256 itself, and a Content-MD5 beside it would only cost a second hash.
   */
  public boolean signsPayload() {
    return endpoint != null && endpoint.regionMatches(true, 0, "http:", 0, 5);
  }

  /** Where requests go, for messages. */
  public String where() {
    return endpoint != null ? endpoint : "AWS S3 (" + region + ")";
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s.strip();
  }
}

package io.beamsave.transforms.store;

import java.io.Serializable;
import java.net.URI;

/**
 * How to reach object storage: endpoint ({@code null} for AWS itself), path-style addressing,
 * region, and how many attempts a request gets. Credentials are deliberately not here: they come
 * from the SDK's default chain (environment, profile, instance role) on every machine that runs
 * a worker, and so never travel inside pipeline options or logs.
 */
public record S3Settings(String endpoint, boolean pathStyle, String region, int maxAttempts)
    implements Serializable {
  public static final int DEFAULT_ATTEMPTS = 8;

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
    return new S3Settings(endpoint, pathStyle, region, attempts);
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

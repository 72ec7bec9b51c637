package io.beamsave.transforms.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Object storage as this JVM reaches it with one {@link S3Settings}: the SDK client and its
 * connection pool, and the buckets found to answer as S3 through it. There is one per settings,
 * shared by every thread and every {@link S3Store} with those settings, for as long as the JVM
 * lives: workers reuse it from task to task. The client never retries, so that {@link
 * RetryingStore} is the only code that does and attempts do not multiply.
 */
final class S3Endpoint {
  /**
   * One per settings this JVM used: a handful (each command or job names one endpoint), closed
   * with the JVM so that their connections are given back rather than dropped.
   */
  private static final Map<S3Settings, S3Endpoint> ENDPOINTS = new ConcurrentHashMap<>();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      for (S3Endpoint e : ENDPOINTS.values()) {
        try {
          e.client.close();
        } catch (RuntimeException ignored) {
          // Exiting anyway: a client that cannot close has nothing left to lose.
        }
      }
    }, "beamsave-s3-close"));
  }

  private final S3Settings s3;
  private final S3Client client;
  private final Set<String> verified = ConcurrentHashMap.newKeySet();

  private S3Endpoint(S3Settings s3) {
    this.s3 = s3;
    this.client = newClient(s3);
  }

  /** The endpoint of {@code s3}, made on first use. */
  static S3Endpoint of(S3Settings s3) {
    return ENDPOINTS.computeIfAbsent(s3, S3Endpoint::new);
  }

  S3Client client() {
    return client;
  }

  private static S3Client newClient(S3Settings s3) {
    var b =
        S3Client.builder()
            .region(Region.of(s3.region()))
            .forcePathStyle(s3.pathStyle())
            // Many S3-compatible servers reject the SDK's default aws-chunked bodies with
            // trailing checksums; integrity is checked with Content-MD5 and ETags instead.
            .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
            .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
            // Retries have one owner, RetryingStore, so attempts do not multiply.
            .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry()))
            .putAuthScheme(WholePayloadSigner.scheme())
            .httpClientBuilder(
                Apache5HttpClient.builder()
                    .maxConnections(64)
                    .connectionTimeout(s3.attemptTimeout().compareTo(Duration.ofSeconds(5)) < 0
                        ? s3.attemptTimeout() : Duration.ofSeconds(5))
                    // How long a read of an answer may wait: a silent server fails an attempt
                    // after this, and RetryingStore gives the request s3.timeout() in all.
                    .socketTimeout(s3.attemptTimeout()));
    if (s3.endpoint() != null) {
      b.endpointOverride(URI.create(s3.endpoint()));
    }
    return b.build();
  }

  /**
   * Fails unless the endpoint answers as an S3 server, asked once per bucket before the first
   * request about {@code what} in it: a one-key listing of the bucket must come back as S3 lists
   * (naming the bucket), or as an S3 error (a code such as {@code AccessDenied} or {@code
   * NoSuchBucket}, which the request itself then reports). A web server or another service on
   * the port answers 200 to anything, which the SDK would read as an empty listing, an object of
   * its page's bytes or an upload without an id: "no images", a download of junk, exit 0.
   */
  void verify(String bucket, String what) {
    if (verified.contains(bucket)) {
      return;
    }
    String notS3 = null;
    try {
      var listing = client.listObjectsV2(r -> r.bucket(bucket).maxKeys(1));
      if (!bucket.equals(listing.name())) {
        notS3 = "a listing of bucket '" + bucket + "' came back without the bucket's name";
      }
    } catch (S3Exception e) {
      if (e.statusCode() >= 500) {
        throw S3Failure.of(what, e, s3); // Busy or failing, S3 or not: worth another attempt.
      }
      if (S3Failure.code(e) == null) {
        notS3 = "HTTP " + e.statusCode() + " without an S3 error in its body";
      }
      // Else an S3 error: the request itself meets it, and reports it as such.
    } catch (SdkClientException e) {
      // An answer cut short by the network does not parse either: that may pass.
      if (isUnparsable(e) && !brokenConnection(e)) {
        notS3 = "its answer to a listing of bucket '" + bucket + "' is not S3's XML";
      } else {
        throw S3Failure.of(what, e, s3);
      }
    } catch (SdkException | UncheckedIOException e) {
      throw S3Failure.of(what, e, s3);
    }
    if (notS3 != null) {
      throw new StoreException(StoreException.Kind.UNREACHABLE, what + ": " + s3.where()
          + " does not answer as an S3 server (" + notS3 + "; a web server, or the wrong"
          + " port? check --s3-endpoint)");
    }
    verified.add(bucket);
  }

  private static boolean brokenConnection(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof IOException) {
        return true;
      }
    }
    return false;
  }

  /** Whether the SDK failed because an answer would not parse as what S3 sends. */
  private static boolean isUnparsable(SdkClientException e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String m = t.getMessage() == null ? "" : t.getMessage();
      if (m.contains("parse XML") || m.contains("unmarshall") || m.contains("Unmarshall")
          || t instanceof javax.xml.stream.XMLStreamException) {
        return true;
      }
    }
    return false;
  }
}

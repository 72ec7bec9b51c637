package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.Part;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The object-store operations beamsave needs, each one retried by {@link Retry} and failing
 * with a one-line error naming the object. One SDK client (and connection pool) per settings
 * per JVM, shared by all threads.
 */
public final class S3Store {
  private static final Map<S3Settings, S3Client> CLIENTS = new ConcurrentHashMap<>();

  private final S3Settings settings;
  private final S3Client s3;

  private S3Store(S3Settings settings) {
    this.settings = settings;
    this.s3 = CLIENTS.computeIfAbsent(settings, S3Store::newClient);
  }

  public static S3Store of(S3Settings settings) {
    return new S3Store(settings);
  }

  public S3Settings settings() {
    return settings;
  }

  private static S3Client newClient(S3Settings s) {
    var b =
        S3Client.builder()
            .region(Region.of(s.region()))
            .forcePathStyle(s.pathStyle())
            // Many S3-compatible servers reject the SDK's default aws-chunked bodies with
            // trailing checksums; integrity is checked with Content-MD5 and ETags instead.
            .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
            .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
            // Retry has one owner, Retry, so attempts do not multiply.
            .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry()))
            .putAuthScheme(WholePayloadSigner.scheme())
            .httpClientBuilder(
                Apache5HttpClient.builder()
                    .maxConnections(64)
                    .connectionTimeout(Duration.ofSeconds(5))
                    .socketTimeout(Duration.ofSeconds(60)));
    if (s.endpoint() != null) {
      b.endpointOverride(URI.create(s.endpoint()));
    }
    return b.build();
  }

  /** Fails with a clear line if the bucket is missing or the credentials are refused. */
  public void checkBucket(ObjectUri uri) {
    Retry.call(
        settings,
        uri.toString(),
        () -> {
          try {
            return s3.headBucket(r -> r.bucket(uri.bucket()));
          } catch (S3Exception e) {
            if (e.statusCode() != 403 && e.statusCode() != 404) {
              throw e;
            }
            // HEAD answers carry no error code; a one-key listing says what is wrong (a
            // missing bucket, an unknown key, a bad secret).
            try {
              return s3.listObjectsV2(r -> r.bucket(uri.bucket()).maxKeys(1));
            } catch (S3Exception listing) {
              String code =
                  listing.awsErrorDetails() == null ? null : listing.awsErrorDetails().errorCode();
              if ("AccessDenied".equals(code)) {
                // Credentials are fine but may not list: let the real request decide.
                return null;
              }
              throw listing;
            }
          }
        });
  }

  /** The object's metadata, or empty when there is no such object. */
  public Optional<HeadObjectResponse> head(ObjectUri uri) {
    return Retry.call(
        settings,
        uri.toString(),
        () -> {
          try {
            return Optional.of(s3.headObject(r -> r.bucket(uri.bucket()).key(uri.key())));
          } catch (S3Exception e) {
            // HEAD answers carry no error code: a 404 is a missing key unless the bucket is
            // missing, and a 403 may be a bad key or secret; the bucket check tells.
            if (e.statusCode() == 404 || e instanceof NoSuchKeyException) {
              checkBucket(uri);
              return Optional.empty();
            }
            if (e.statusCode() == 403) {
              checkBucket(uri);
            }
            throw e;
          }
        });
  }

  /** Reads {@code len} bytes from {@code offset} of the object into {@code buf[off..]}. */
  public void read(ObjectUri uri, long offset, byte[] buf, int off, int len) {
    if (len == 0) {
      return;
    }
    String range = "bytes=" + offset + "-" + (offset + len - 1);
    Retry.call(
        settings,
        uri + " (bytes " + offset + "+" + len + ")",
        () -> {
          try (InputStream in =
              s3.getObject(r -> r.bucket(uri.bucket()).key(uri.key()).range(range))) {
            int n = in.readNBytes(buf, off, len);
            if (n != len || in.read() >= 0) {
              throw new java.io.UncheckedIOException(
                  new IOException("short read: " + n + " of " + len + " bytes"));
            }
            return null;
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
  }

  /** A whole small object (a ledger record, an upload state). */
  public byte[] get(ObjectUri uri) {
    return Retry.call(
        settings,
        uri.toString(),
        () -> {
          ResponseBytes<GetObjectResponse> b =
              s3.getObjectAsBytes(r -> r.bucket(uri.bucket()).key(uri.key()));
          return b.asByteArray();
        });
  }

  /** Writes a small object in one request, checked with Content-MD5. */
  public void put(ObjectUri uri, byte[] data, String contentType) {
    put(uri, data, data.length, contentType);
  }

  /** Writes {@code data[0, len)} as one object in one request, checked with Content-MD5. */
  public void put(ObjectUri uri, byte[] data, int len, String contentType) {
    String md5 = Base64.getEncoder().encodeToString(Md5.of(data, 0, len));
    Retry.call(
        settings,
        uri.toString(),
        () ->
            s3.putObject(
                r -> r.bucket(uri.bucket()).key(uri.key()).contentType(contentType).contentMD5(md5)
                    .contentLength((long) len),
                RequestBody.fromContentProvider(
                    () -> new ByteArrayInputStream(data, 0, len), len, contentType)));
  }

  /**
   * Makes the whole of object {@code from} part {@code partNumber} of upload {@code uploadId}
   * without the bytes leaving the store (UploadPartCopy); returns the part's ETag.
   */
  public String copyPart(ObjectUri to, String uploadId, int partNumber, ObjectUri from) {
    return Retry.call(
        settings,
        to + " part " + partNumber,
        () -> s3.uploadPartCopy(
                r -> r.sourceBucket(from.bucket()).sourceKey(from.key())
                    .destinationBucket(to.bucket()).destinationKey(to.key())
                    .uploadId(uploadId).partNumber(partNumber))
            .copyPartResult().eTag());
  }

  public void delete(ObjectUri uri) {
    Retry.call(settings, uri.toString(), () -> s3.deleteObject(r -> r.bucket(uri.bucket()).key(uri.key())));
  }

  /** Every object under {@code prefix}, in key order. */
  public List<S3Object> list(ObjectUri prefix) {
    return Retry.call(
        settings,
        prefix.toString(),
        () -> {
          List<S3Object> all = new ArrayList<>();
          ListObjectsV2Request req =
              ListObjectsV2Request.builder().bucket(prefix.bucket()).prefix(prefix.key()).build();
          s3.listObjectsV2Paginator(req).contents().forEach(all::add);
          return all;
        });
  }

  // ---- multipart uploads ----

  public String createMultipart(ObjectUri uri, String contentType, Map<String, String> metadata) {
    return Retry.call(
        settings,
        uri.toString(),
        () ->
            s3.createMultipartUpload(
                    r -> r.bucket(uri.bucket()).key(uri.key()).contentType(contentType)
                        .metadata(metadata))
                .uploadId());
  }

  /**
   * Uploads one part and returns its ETag. With {@code md5} (needed where the payload is not
   * signed, see {@link S3Settings#signsPayload}) the part goes with its Content-MD5, so the store
   * refuses a body that does not match, and the returned ETag is checked against it.
   */
  public String uploadPart(
      ObjectUri uri, String uploadId, int partNumber, byte[] data, int len, byte[] md5,
      LinkThrottle throttle) {
    String contentMd5 = md5 == null ? null : Base64.getEncoder().encodeToString(md5);
    String expected = md5 == null ? null : Md5.hex(md5);
    return Retry.call(
        settings,
        uri + " part " + partNumber,
        () -> {
          String etag =
              s3.uploadPart(
                      r -> r.bucket(uri.bucket()).key(uri.key()).uploadId(uploadId)
                          .partNumber(partNumber).contentLength((long) len).contentMD5(contentMd5),
                      RequestBody.fromContentProvider(body(data, len, throttle), len,
                          "application/octet-stream"))
                  .eTag();
          String got = unquote(etag);
          if (expected != null && Md5.isPlainMd5(got) && !got.equalsIgnoreCase(expected)) {
            throw new BeamsaveException(
                uri + " part " + partNumber + ": stored part has MD5 " + got + ", sent " + expected);
          }
          return etag;
        });
  }

  /**
   * A part's body for one attempt, slowed to the emulated link. Where the payload is signed the
   * SDK reads the body once to hash it before it reads it again to send it: only the sending
   * read crosses the link, so only it pays the throttle.
   */
  private ContentStreamProvider body(byte[] data, int len, LinkThrottle throttle) {
    AtomicInteger reads = new AtomicInteger(settings.signsPayload() ? 0 : 1);
    return () -> {
      InputStream in = new ByteArrayInputStream(data, 0, len);
      return reads.getAndIncrement() == 0 ? in : LinkThrottle.wrap(in, throttle);
    };
  }

  /** Uploads in progress for exactly this key, newest first. */
  public List<MultipartUpload> uploadsInProgress(ObjectUri uri) {
    return Retry.call(
        settings,
        uri.toString(),
        () -> {
          List<MultipartUpload> found = new ArrayList<>();
          s3.listMultipartUploadsPaginator(r -> r.bucket(uri.bucket()).prefix(uri.key()))
              .uploads()
              .forEach(
                  u -> {
                    if (u.key().equals(uri.key())) {
                      found.add(u);
                    }
                  });
          found.sort(
              Comparator.comparing(
                      MultipartUpload::initiated,
                      Comparator.nullsFirst(Comparator.<java.time.Instant>naturalOrder()))
                  .reversed());
          return found;
        });
  }

  /** Parts already stored for an upload in progress. */
  public List<Part> parts(ObjectUri uri, String uploadId) {
    return Retry.call(
        settings,
        uri + " upload " + uploadId,
        () -> {
          List<Part> parts = new ArrayList<>();
          s3.listPartsPaginator(r -> r.bucket(uri.bucket()).key(uri.key()).uploadId(uploadId))
              .parts()
              .forEach(parts::add);
          return parts;
        });
  }

  public String complete(ObjectUri uri, String uploadId, List<CompletedPart> parts) {
    return Retry.call(
        settings,
        uri.toString(),
        () ->
            s3.completeMultipartUpload(
                    r -> r.bucket(uri.bucket()).key(uri.key()).uploadId(uploadId)
                        .multipartUpload(m -> m.parts(parts)))
                .eTag());
  }

  public void abort(ObjectUri uri, String uploadId) {
    Retry.call(
        settings,
        uri.toString(),
        () -> s3.abortMultipartUpload(r -> r.bucket(uri.bucket()).key(uri.key()).uploadId(uploadId)));
  }

  static String unquote(String etag) {
    if (etag == null) {
      return "";
    }
    return etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"")
        ? etag.substring(1, etag.length() - 1)
        : etag;
  }

  /** For messages only: the store failed in a way no retry fixes. */
  static BeamsaveException fail(ObjectUri uri, String why) {
    return new BeamsaveException(uri + ": " + why);
  }
}

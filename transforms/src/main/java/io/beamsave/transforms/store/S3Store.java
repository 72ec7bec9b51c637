package io.beamsave.transforms.store;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
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
import java.util.function.Supplier;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * A {@link Store} in a bucket of S3-compatible storage, under a key prefix, through the AWS SDK.
 * It does not retry (the SDK's own retries are off, so attempts do not multiply); it turns every
 * SDK failure into a {@link StoreException} that names the object and, through {@link
 * S3Failure}, says whether it may pass and in an operator's words what the server said or why
 * it could not be reached. One SDK client (and connection
 * pool) per settings per JVM, shared by all threads. Open one with {@link Stores}.
 */
public final class S3Store implements Store {
  private static final Map<S3Settings, S3Client> CLIENTS = new ConcurrentHashMap<>();

  private final S3Settings settings;
  private final S3Client s3;
  private final String bucket;
  private final String prefix;

  S3Store(S3Settings settings, String bucket, String prefix) {
    this.settings = settings;
    this.s3 = CLIENTS.computeIfAbsent(settings, S3Store::newClient);
    this.bucket = bucket;
    this.prefix = prefix;
  }

  /**
   * The store under {@code root} (a bucket, or a prefix in one), without retries: for checks
   * of what S3 alone can tell, such as {@link #uploadsInProgress}. Everything else opens stores
   * with {@link Stores}.
   */
  public static S3Store at(S3Settings settings, ObjectUri root) {
    return new S3Store(settings, root.bucket(), root.key());
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
            // Retries have one owner, RetryingStore, so attempts do not multiply.
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

  private String full(String key) {
    return prefix + key;
  }

  @Override
  public String where(String key) {
    return ObjectUri.SCHEME + bucket + "/" + full(key);
  }

  @Override
  public boolean wantsPartMd5() {
    return !settings.signsPayload();
  }

  /** Runs one request, turning what the SDK throws into a {@link StoreException} about {@code what}. */
  private <T> T call(String what, Supplier<T> op) {
    try {
      return op.get();
    } catch (SdkException | UncheckedIOException e) {
      throw failure(what, e);
    }
  }

  private StoreException failure(String what, RuntimeException e) {
    return S3Failure.of(what, e, settings);
  }

  private static String code(S3Exception s) {
    return s.awsErrorDetails() == null ? null : s.awsErrorDetails().errorCode();
  }

  /** Fails with a clear line if the bucket is missing or the credentials are refused. */
  @Override
  public void check(String key) {
    call(
        where(key),
        () -> {
          try {
            return s3.headBucket(r -> r.bucket(bucket));
          } catch (S3Exception e) {
            if (e.statusCode() != 403 && e.statusCode() != 404) {
              throw e;
            }
            // HEAD answers carry no error code; a one-key listing says what is wrong (a
            // missing bucket, an unknown key, a bad secret).
            try {
              return s3.listObjectsV2(r -> r.bucket(bucket).maxKeys(1));
            } catch (S3Exception listing) {
              if ("AccessDenied".equals(code(listing))) {
                // Credentials are fine but may not list: let the real request decide.
                return null;
              }
              throw listing;
            }
          }
        });
  }

  @Override
  public Optional<Stat> stat(String key) {
    HeadObjectResponse head = call(
        where(key),
        () -> {
          try {
            return s3.headObject(r -> r.bucket(bucket).key(full(key)));
          } catch (S3Exception e) {
            // HEAD answers carry no error code: a 404 is a missing key unless the bucket is
            // missing, and a 403 may be a bad key or secret; the bucket check tells.
            if (e.statusCode() == 404 || e instanceof NoSuchKeyException) {
              check(key);
              return null;
            }
            if (e.statusCode() == 403) {
              check(key);
            }
            throw e;
          }
        });
    return head == null ? Optional.empty()
        : Optional.of(new Stat(head.contentLength(), unquote(head.eTag()), head.metadata()));
  }

  @Override
  public void read(String key, long offset, byte[] buf, int off, int len) {
    if (len == 0) {
      return;
    }
    String range = "bytes=" + offset + "-" + (offset + len - 1);
    call(
        where(key) + " (bytes " + offset + "+" + len + ")",
        () -> {
          try (InputStream in = s3.getObject(r -> r.bucket(bucket).key(full(key)).range(range))) {
            int n = in.readNBytes(buf, off, len);
            if (n != len || in.read() >= 0) {
              throw new UncheckedIOException(
                  new IOException("short read: " + n + " of " + len + " bytes"));
            }
            return null;
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
  }

  @Override
  public byte[] get(String key) {
    return call(where(key),
        () -> s3.getObjectAsBytes(r -> r.bucket(bucket).key(full(key))).asByteArray());
  }

  /** Writes {@code data[0, len)} as one object in one request, checked with Content-MD5. */
  @Override
  public void put(String key, byte[] data, int len, String contentType, LinkThrottle throttle) {
    String md5 = Base64.getEncoder().encodeToString(Md5.of(data, 0, len));
    call(
        where(key),
        () ->
            s3.putObject(
                r -> r.bucket(bucket).key(full(key)).contentType(contentType).contentMD5(md5)
                    .contentLength((long) len),
                RequestBody.fromContentProvider(body(data, len, throttle), len, contentType)));
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from) {
    return call(
        where(key) + " part " + number,
        () -> s3.uploadPartCopy(
                r -> r.sourceBucket(bucket).sourceKey(full(from))
                    .destinationBucket(bucket).destinationKey(full(key))
                    .uploadId(uploadId).partNumber(number))
            .copyPartResult().eTag());
  }

  @Override
  public String copyPart(
      String key, String uploadId, int number, String from, long offset, long length) {
    if (offset < 0 || length < 1) {
      throw new IllegalArgumentException("copy range " + offset + "+" + length + " of " + from);
    }
    String range = "bytes=" + offset + "-" + (offset + length - 1);
    return call(
        where(key) + " part " + number + " (copy of " + where(from) + " bytes " + offset + "+"
            + length + ")",
        () -> s3.uploadPartCopy(
                r -> r.sourceBucket(bucket).sourceKey(full(from)).copySourceRange(range)
                    .destinationBucket(bucket).destinationKey(full(key))
                    .uploadId(uploadId).partNumber(number))
            .copyPartResult().eTag());
  }

  @Override
  public void delete(String key) {
    call(where(key), () -> s3.deleteObject(r -> r.bucket(bucket).key(full(key))));
  }

  /** Every object whose key starts with {@code under}, in key order. */
  @Override
  public List<Item> list(String under) {
    return call(
        where(under),
        () -> {
          List<Item> all = new ArrayList<>();
          ListObjectsV2Request req =
              ListObjectsV2Request.builder().bucket(bucket).prefix(full(under)).build();
          // Keys ending in / are directory markers some servers (S3Proxy's filesystem
          // backend) list; beamsave never writes one.
          s3.listObjectsV2Paginator(req).contents().stream()
              .filter(o -> !o.key().endsWith("/"))
              .forEach(o -> all.add(
                  new Item(o.key().substring(prefix.length()), o.size(), o.lastModified())));
          return all;
        });
  }

  @Override
  public String createMultipart(String key, String contentType, Map<String, String> metadata) {
    return call(
        where(key),
        () ->
            s3.createMultipartUpload(
                    r -> r.bucket(bucket).key(full(key)).contentType(contentType)
                        .metadata(metadata))
                .uploadId());
  }

  /**
   * With {@code md5} (needed where the payload is not signed, see {@link
   * S3Settings#signsPayload}) the part goes with its Content-MD5, so the store refuses a body
   * that does not match, and the returned ETag is checked against it.
   */
  @Override
  public String uploadPart(
      String key, String uploadId, int number, byte[] data, int len, byte[] md5,
      LinkThrottle throttle) {
    String contentMd5 = md5 == null ? null : Base64.getEncoder().encodeToString(md5);
    String expected = md5 == null ? null : Md5.hex(md5);
    String what = where(key) + " part " + number;
    String etag = call(
        what,
        () ->
            s3.uploadPart(
                    r -> r.bucket(bucket).key(full(key)).uploadId(uploadId)
                        .partNumber(number).contentLength((long) len).contentMD5(contentMd5),
                    RequestBody.fromContentProvider(body(data, len, throttle), len,
                        "application/octet-stream"))
                .eTag());
    String got = unquote(etag);
    if (expected != null && Md5.isPlainMd5(got) && !got.equalsIgnoreCase(expected)) {
      throw new StoreException(StoreException.Kind.FAILED,
          what + ": stored part has MD5 " + got + ", sent " + expected);
    }
    return etag;
  }

  /**
   * A body for one attempt, slowed to the emulated link. Where the payload is signed the SDK
   * reads the body once to hash it before it reads it again to send it: only the sending read
   * crosses the link, so only it pays the throttle.
   */
  private ContentStreamProvider body(byte[] data, int len, LinkThrottle throttle) {
    AtomicInteger reads = new AtomicInteger(settings.signsPayload() ? 0 : 1);
    return () -> {
      InputStream in = new ByteArrayInputStream(data, 0, len);
      return reads.getAndIncrement() == 0 ? in : LinkThrottle.wrap(in, throttle);
    };
  }

  /** Upload ids in progress for exactly {@code key}, newest first (for checks and tests). */
  public List<String> uploadsInProgress(String key) {
    return call(
        where(key),
        () -> {
          List<MultipartUpload> found = new ArrayList<>();
          s3.listMultipartUploadsPaginator(r -> r.bucket(bucket).prefix(full(key)))
              .uploads()
              .forEach(
                  u -> {
                    if (u.key().equals(full(key))) {
                      found.add(u);
                    }
                  });
          found.sort(
              Comparator.comparing(
                      MultipartUpload::initiated,
                      Comparator.nullsFirst(Comparator.<java.time.Instant>naturalOrder()))
                  .reversed());
          return found.stream().map(MultipartUpload::uploadId).toList();
        });
  }

  @Override
  public List<Part> parts(String key, String uploadId) {
    return call(
        where(key) + " upload " + uploadId,
        () -> {
          List<Part> parts = new ArrayList<>();
          s3.listPartsPaginator(r -> r.bucket(bucket).key(full(key)).uploadId(uploadId))
              .parts()
              .forEach(p -> parts.add(new Part(p.partNumber(), p.eTag(),
                  p.size() == null ? -1 : p.size())));
          return parts;
        });
  }

  @Override
  public String complete(String key, String uploadId, List<Part> parts) {
    List<CompletedPart> completed = parts.stream()
        .map(p -> CompletedPart.builder().partNumber(p.number()).eTag(p.etag()).build())
        .toList();
    return unquote(call(
        where(key),
        () ->
            s3.completeMultipartUpload(
                    r -> r.bucket(bucket).key(full(key)).uploadId(uploadId)
                        .multipartUpload(m -> m.parts(completed)))
                .eTag()));
  }

  @Override
  public void abort(String key, String uploadId) {
    call(where(key),
        () -> s3.abortMultipartUpload(r -> r.bucket(bucket).key(full(key)).uploadId(uploadId)));
  }

  /** An ETag without the quotes S3 puts around it; empty for none. */
  public static String unquote(String etag) {
    if (etag == null) {
      return "";
    }
    return etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"")
        ? etag.substring(1, etag.length() - 1)
        : etag;
  }
}

package io.beamsave.transforms.store;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.ContentStreamProvider;
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
 * it could not be reached. Its client is its settings' {@link S3Endpoint}, shared by all threads;
 * a store itself holds no more than where it is. Open one with {@link Stores}.
 */
public final class S3Store implements Store {
  /** S3's smallest part of a multipart upload but the last. */
  public static final long MIN_PART = 5L << 20;
  private final S3Settings s3;
  private final S3Endpoint endpoint;
  private final S3Client client;
  private final String bucket;
  private final String prefix;

  S3Store(S3Settings s3, String bucket, String prefix) {
    this.s3 = s3;
    this.endpoint = S3Endpoint.of(s3);
    this.client = endpoint.client();
    this.bucket = bucket;
    this.prefix = prefix;
  }

  /**
   * The store under {@code root} (a bucket, or a prefix in one), without retries: for checks
   * of what S3 alone can tell, such as {@link #uploadsInProgress}. Everything else opens stores
   * with {@link Stores}.
   */
  public static S3Store at(S3Settings s3, ObjectUri root) {
    return new S3Store(s3, root.bucket(), root.key());
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
    return !s3.signsPayload();
  }

  /**
   * Runs one request, turning what the SDK throws into a {@link StoreException} about {@code
   * what}; the first request to a bucket first makes sure the endpoint answers as S3.
   */
  private <T> T call(String what, Supplier<T> op) {
    endpoint.verify(bucket, what);
    try {
      return op.get();
    } catch (SdkException | UncheckedIOException e) {
      throw S3Failure.of(what, e, s3);
    }
  }

  /** Fails with a clear line if the bucket is missing or the credentials are refused. */
  @Override
  public void check(String key) {
    call(
        where(key),
        () -> {
          try {
            return client.headBucket(r -> r.bucket(bucket));
          } catch (S3Exception e) {
            if (e.statusCode() != 403 && e.statusCode() != 404) {
              throw e;
            }
            // HEAD answers carry no error code; a one-key listing says what is wrong (a
            // missing bucket, an unknown key, a bad secret).
            try {
              return client.listObjectsV2(r -> r.bucket(bucket).maxKeys(1));
            } catch (S3Exception listing) {
              if ("AccessDenied".equals(S3Failure.code(listing))) {
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
            return client.headObject(r -> r.bucket(bucket).key(full(key)));
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
  public void read(String key, String etag, long offset, byte[] buf, int off, int len) {
    if (len == 0) {
      return;
    }
    String range = "bytes=" + offset + "-" + (offset + len - 1);
    String ifMatch = etag == null || etag.isEmpty() ? null : "\"" + etag + "\"";
    call(
        where(key) + " (bytes " + offset + "+" + len + ")",
        () -> {
          try (InputStream in = client.getObject(
              r -> r.bucket(bucket).key(full(key)).range(range).ifMatch(ifMatch))) {
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
        () -> client.getObjectAsBytes(r -> r.bucket(bucket).key(full(key))).asByteArray());
  }

  /** Writes {@code body} as one object in one request, checked with Content-MD5. */
  @Override
  public void put(String key, Body body, String contentType) {
    String md5 = Base64.getEncoder().encodeToString(Md5.of(body.data(), 0, body.length()));
    call(
        where(key),
        () ->
            client.putObject(
                r -> r.bucket(bucket).key(full(key)).contentType(contentType).contentMD5(md5)
                    .contentLength((long) body.length()),
                RequestBody.fromContentProvider(sent(body), body.length(), contentType)));
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from) {
    return call(
        where(key) + " part " + number,
        () -> client.uploadPartCopy(
                r -> r.sourceBucket(bucket).sourceKey(full(from))
                    .destinationBucket(bucket).destinationKey(full(key))
                    .uploadId(uploadId).partNumber(number))
            .copyPartResult().eTag());
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from, String fromEtag,
      long offset, long length) {
    if (offset < 0 || length < 1) {
      throw new IllegalArgumentException("copy range " + offset + "+" + length + " of " + from);
    }
    String range = "bytes=" + offset + "-" + (offset + length - 1);
    String ifMatch = fromEtag == null || fromEtag.isEmpty() ? null : "\"" + fromEtag + "\"";
    return call(
        where(key) + " part " + number + " (copy of " + where(from) + " bytes " + offset + "+"
            + length + ")",
        () -> client.uploadPartCopy(
                r -> r.sourceBucket(bucket).sourceKey(full(from)).copySourceRange(range)
                    .copySourceIfMatch(ifMatch)
                    .destinationBucket(bucket).destinationKey(full(key))
                    .uploadId(uploadId).partNumber(number))
            .copyPartResult().eTag());
  }

  @Override
  public void delete(String key) {
    call(where(key), () -> client.deleteObject(r -> r.bucket(bucket).key(full(key))));
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
          client.listObjectsV2Paginator(req).contents().stream()
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
            client.createMultipartUpload(
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
  public String uploadPart(String key, String uploadId, int number, Body body, byte[] md5) {
    String contentMd5 = md5 == null ? null : Base64.getEncoder().encodeToString(md5);
    String expected = md5 == null ? null : Md5.hex(md5);
    String what = where(key) + " part " + number;
    String etag = call(
        what,
        () ->
            client.uploadPart(
                    r -> r.bucket(bucket).key(full(key)).uploadId(uploadId)
                        .partNumber(number).contentLength((long) body.length())
                        .contentMD5(contentMd5),
                    RequestBody.fromContentProvider(sent(body), body.length(),
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
   * The body of one attempt. Where the payload is signed the SDK reads it once to hash it before
   * it reads it again to send it: only the sending read is of the bytes as they travel ({@link
   * Body#stream}), so only it crosses what a wrapper put in their way (an emulated link).
   */
  private ContentStreamProvider sent(Body body) {
    AtomicInteger reads = new AtomicInteger(s3.signsPayload() ? 0 : 1);
    return () -> reads.getAndIncrement() == 0
        ? new ByteArrayInputStream(body.data(), 0, body.length()) : body.stream();
  }

  /** Upload ids in progress for exactly {@code key}, newest first (for checks and tests). */
  public List<String> uploadsInProgress(String key) {
    List<String> ids = new ArrayList<>();
    for (Upload u : uploads(key)) {
      if (u.key().equals(key)) {
        ids.add(0, u.uploadId());
      }
    }
    return ids;
  }

  @Override
  public List<Upload> uploads(String under) {
    return call(
        where(under),
        () -> {
          List<Upload> found = new ArrayList<>();
          for (MultipartUpload u : client.listMultipartUploadsPaginator(
              r -> r.bucket(bucket).prefix(full(under))).uploads()) {
            if (u.key().startsWith(prefix)) {
              found.add(new Upload(u.key().substring(prefix.length()), u.uploadId(),
                  u.initiated() == null ? java.time.Instant.EPOCH : u.initiated()));
            }
          }
          found.sort(Comparator.comparing(Upload::initiated));
          return found;
        });
  }

  @Override
  public List<Part> parts(String key, String uploadId) {
    return call(
        where(key) + " upload " + uploadId,
        () -> {
          List<Part> parts = new ArrayList<>();
          client.listPartsPaginator(r -> r.bucket(bucket).key(full(key)).uploadId(uploadId))
              .parts()
              .forEach(p -> parts.add(new Part(p.partNumber(), p.eTag(),
                  p.size() == null ? -1 : p.size())));
          return parts;
        });
  }

  @Override
  public String complete(String key, String uploadId, List<Part> parts, String expect) {
    List<CompletedPart> completed = parts.stream()
        .map(p -> CompletedPart.builder().partNumber(p.number()).eTag(p.etag()).build())
        .toList();
    String ifNoneMatch = ABSENT.equals(expect) ? "*" : null;
    String ifMatch = expect == null || expect.isEmpty() || ABSENT.equals(expect) ? null
        : "\"" + expect + "\"";
    try {
      return unquote(call(
          where(key),
          () ->
              client.completeMultipartUpload(
                      r -> r.bucket(bucket).key(full(key)).uploadId(uploadId)
                          .ifNoneMatch(ifNoneMatch).ifMatch(ifMatch)
                          .multipartUpload(m -> m.parts(completed)))
                  .eTag()));
    } catch (StoreException e) {
      if ((ifNoneMatch != null || ifMatch != null)
          && (e.kind() == StoreException.Kind.CHANGED || conflict(e))) {
        throw new StoreException(StoreException.Kind.CHANGED, false, where(key) + ": "
            + (ABSENT.equals(expect) ? "another object was written under this key meanwhile"
                : "the object it was to replace was replaced or removed meanwhile")
            + " (" + (ifMatch == null ? "If-None-Match" : "If-Match") + " failed); nothing"
            + " was written over it", e);
      }
      throw e;
    }
  }

  /** S3's answer to two conditional writes of one key at once: 409 ConditionalRequestConflict. */
  private static boolean conflict(StoreException e) {
    return e.getCause() instanceof S3Exception s && s.statusCode() == 409;
  }

  @Override
  public void abort(String key, String uploadId) {
    call(where(key),
        () -> client.abortMultipartUpload(r -> r.bucket(bucket).key(full(key)).uploadId(uploadId)));
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

package io.beamsave.transforms.store;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * What ties a multipart upload in progress to beamsave: a small object beside the upload's key,
 * written by the run that began the upload right after it began it, naming the upload's id and
 * the object it is to become, as Java properties. {@code cleanup} aborts an upload only when a
 * claim names it ({@link #claims}); the run that began it removes the claim once the upload is
 * completed or aborted.
 *
 * <p>Why the id, and an object beside the key. While an upload is in progress S3 shows nothing
 * of what its creator sent with CreateMultipartUpload: ListMultipartUploads and ListParts give
 * its key, id, Initiated time, initiator and owner, storage class and checksum algorithm, and
 * its parts' numbers, ETags and sizes, never its metadata or content type. Of those, only the
 * id is the upload's own and not shown to every writer: S3 gives it to whoever began the
 * upload, and to whoever may list the bucket's uploads. A writer that can name an upload's id
 * and write beside its key can also end that upload without beamsave (UploadPart and
 * CompleteMultipartUpload need only the id and the right to write the key), so a claim that
 * must name the id lends such a writer nothing. Initiated is not used: S3Proxy's filesystem
 * backend reports the time of the listing. The initiator depends on the server and on the
 * credentials, and the parts' ETags are shown to whoever may list parts, so neither proves more
 * than the id does.
 *
 * <p>A whole-image upload keeps its claim at {@code KEY.beamsave-upload}, where {@code upload
 * --resume} finds it and its resume fields ({@link #with}); every other upload at a name of its
 * own, {@code KEY.beamsave-upload-} and 16 hex digits of the SHA-256 of its id ({@link
 * #nameFor}), so that two uploads to one key never share a claim. Immutable, and cheap.
 */
public final class UploadClaim {
  /** What a claim's name ends in, or has before its upload's digest. */
  public static final String SUFFIX = ".beamsave-upload";
  /**
   * A claim is a few hundred bytes; an object by a claim's name larger than this is not read
   * (a writer could otherwise make {@code cleanup} download anything it likes).
   */
  static final long MAX_BYTES = 64 << 10;

  private static final String ID = "uploadId";
  private static final String OBJECT = "object";

  private final Properties properties;

  private UploadClaim(Properties properties) {
    this.properties = properties;
  }

  /**
   * The claim of upload {@code uploadId} to {@code object} (the key as the store names it,
   * {@link Store#where}) by a run of {@code kind} ({@code image}, {@code upload}, {@code
   * rekey}); {@code run} names the run where there is a name, else null.
   */
  public static UploadClaim of(String uploadId, String object, String kind, String run) {
    Properties p = new Properties();
    p.setProperty(ID, uploadId);
    p.setProperty(OBJECT, object);
    p.setProperty("kind", kind);
    if (run != null) {
      p.setProperty("run", run);
    }
    p.setProperty("began", Instant.now().toString());
    return new UploadClaim(p);
  }

  /** This claim with one more property (a resume field). */
  public UploadClaim with(String name, String value) {
    Properties p = new Properties();
    p.putAll(properties);
    p.setProperty(name, value);
    return new UploadClaim(p);
  }

  /** A property of the claim, or null. */
  public String get(String name) {
    return properties.getProperty(name);
  }

  public String uploadId() {
    return properties.getProperty(ID);
  }

  /**
   * Begins a multipart upload to {@code key} with {@code metadata} and leaves its claim beside
   * it ({@link #nameFor}); returns the claim. Where the claim cannot be written, the upload is
   * aborted (nothing could tie it to beamsave afterwards) and the failure thrown.
   */
  public static UploadClaim begin(Store store, String key, String contentType,
      Map<String, String> metadata, String kind, String run) {
    String id = store.createMultipart(key, contentType, metadata);
    UploadClaim claim = of(id, store.where(key), kind, run);
    try {
      claim.write(store, nameFor(key, id));
    } catch (RuntimeException e) {
      try {
        store.abort(key, id);
      } catch (RuntimeException ignored) {
        // The store is failing: the claim's failure is the one to report.
      }
      throw e;
    }
    return claim;
  }

  /** Where the claim of upload {@code uploadId} to {@code key} is, begun by {@link #begin}. */
  public static String nameFor(String key, String uploadId) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256")
          .digest(uploadId.getBytes(StandardCharsets.UTF_8));
      return key + SUFFIX + "-" + HexFormat.of().formatHex(d, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }

  /**
   * The key whose upload an object named {@code name} would claim, or null if that is no
   * claim's name.
   */
  public static String claimedKey(String name) {
    if (name.endsWith(SUFFIX)) {
      return name.substring(0, name.length() - SUFFIX.length());
    }
    int at = name.length() - SUFFIX.length() - 17;
    if (at > 0 && name.startsWith(SUFFIX + "-", at)
        && name.substring(at + SUFFIX.length() + 1).matches("[0-9a-f]{16}")) {
      return name.substring(0, at);
    }
    return null;
  }

  /**
   * The claim at {@code name}, or empty if there is none or what is there is not one: larger
   * than a claim, not properties naming an upload id, or naming another object than the one
   * whose name it has ({@link #claimedKey}). A claim written before claims named their object
   * names none, and is taken for the one beside it.
   */
  public static Optional<UploadClaim> read(Store store, String name) {
    String key = claimedKey(name);
    if (key == null) {
      return Optional.empty();
    }
    Optional<Store.Stat> stat = store.stat(name);
    if (stat.isEmpty() || stat.get().size() > MAX_BYTES) {
      return Optional.empty();
    }
    byte[] text;
    try {
      text = store.get(name);
    } catch (StoreException e) {
      if (e.kind() == StoreException.Kind.NOT_FOUND) {
        return Optional.empty(); // Its upload ended meanwhile.
      }
      throw e;
    }
    Properties p = new Properties();
    try {
      p.load(new ByteArrayInputStream(text));
    } catch (IOException | IllegalArgumentException e) {
      return Optional.empty(); // Not properties (a malformed \\u escape, say).
    }
    String id = p.getProperty(ID);
    String object = p.getProperty(OBJECT);
    if (id == null || id.isBlank() || object != null && !object.equals(store.where(key))) {
      return Optional.empty();
    }
    return Optional.of(new UploadClaim(p));
  }

  /**
   * Whether this claim, found at {@code name}, names {@code upload} as {@code store} lists it:
   * an upload to the key beside which the claim lies, with the id the claim names.
   */
  public boolean claims(String name, Store.Upload upload) {
    return upload.key().equals(claimedKey(name)) && upload.uploadId().equals(uploadId());
  }

  /** Writes this claim at {@code name}, replacing any. */
  public void write(Store store, String name) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      properties.store(out, "beamsave upload in progress; removed when it completes");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    byte[] text = out.toByteArray();
    store.put(name, text, text.length, "text/plain");
  }
}

package io.beamsave.transforms.store;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * The one contract beamsave needs from where images and working files live: a local directory
 * ({@link LocalStore}) or a bucket and prefix of S3-compatible storage ({@link S3Store}).
 * Objects are named by keys relative to the store's root, with {@code /} between components.
 *
 * <p>Every failure is a {@link StoreException} naming the object, of a {@link
 * StoreException.Kind} callers can act on. A store does not retry; {@link RetryingStore} does,
 * around any store, in one place; {@link ThrottledStore} sends writes at a link's speed. An
 * object written with {@link #put} or completed from a multipart upload appears whole or not at
 * all.
 *
 * <p>Multipart uploads ({@link #createMultipart}, {@link #uploadPart}, {@link #copyPart}, {@link
 * #parts}, {@link #complete}, {@link #abort}) are object storage's, and a backend may not
 * support them: a directory ({@link LocalStore}) does not, and fails them with {@link
 * StoreException.Kind#NOT_SUPPORTED}, while {@link #uploads} finds none there. Images are
 * written by parts only to {@code s3://} locations.
 */
public interface Store {
  /** What an object is: its length, its ETag (quotes removed; may be empty) and metadata. */
  record Stat(long size, String etag, Map<String, String> metadata) {}

  /** One object found by {@link #list}: its key relative to the root, and its length. */
  record Item(String key, long size, java.time.Instant modified) {}

  /** A part of a multipart upload: its number, its ETag as the store gave it, its length. */
  record Part(int number, String etag, long size) {}

  /**
   * What a write sends: {@code data[0, length)}, and the way its bytes travel to the store. A
   * store that sends them over a connection reads {@link #stream} once for each attempt, and
   * takes whatever else it needs of them (a digest, the hash a signature covers, a file's
   * content) from {@link #data}, so that only the bytes that travel pass what a wrapper put in
   * their way ({@link #through}). The array is not copied: it must not change during the write.
   */
  record Body(byte[] data, int length, UnaryOperator<InputStream> way) {
    /** {@code data[0, length)}, travelling as they are. */
    public static Body of(byte[] data, int length) {
      return new Body(data, length, UnaryOperator.identity());
    }

    /** The bytes as they travel to the store: a new stream for each attempt. */
    public InputStream stream() {
      return way.apply(new ByteArrayInputStream(data, 0, length));
    }

    /** These bytes, travelling also through {@code next} (a throttle, a counter). */
    public Body through(UnaryOperator<InputStream> next) {
      return new Body(data, length, in -> next.apply(way.apply(in)));
    }
  }

  /** {@code key} as the operator would write it, for messages: {@code s3://B/K} or a path. */
  String where(String key);

  /**
   * Fails with one line naming {@code key} if the store cannot be reached, refuses the
   * credentials, or its root (bucket, directory) does not exist.
   */
  void check(String key);

  /** The object's length, ETag and metadata, or empty if there is no such object. */
  Optional<Stat> stat(String key);

  /** Reads exactly {@code len} bytes from {@code offset} of the object into {@code buf[off..]}. */
  default void read(String key, long offset, byte[] buf, int off, int len) {
    read(key, "", offset, buf, off, len);
  }

  /**
   * Like {@link #read(String, long, byte[], int, int)}, from the object whose ETag is {@code
   * etag}: {@link StoreException.Kind#CHANGED} if the object there now has another (it was
   * replaced since its ETag was read). An empty {@code etag} reads whatever is there; so does a
   * store without ETags.
   */
  void read(String key, String etag, long offset, byte[] buf, int off, int len);

  /** A whole (small) object. */
  byte[] get(String key);

  /** Writes {@code data[0, len)} as one object, replacing any. */
  default void put(String key, byte[] data, int len, String contentType) {
    put(key, Body.of(data, len), contentType);
  }

  /** Writes {@code body} as one object, replacing any. */
  void put(String key, Body body, String contentType);

  /** Every object whose key starts with {@code prefix}, in key order. */
  List<Item> list(String prefix);

  /** Removes the object; removing one that does not exist is not an error. */
  void delete(String key);

  /** Begins a multipart upload to {@code key}; returns its id. */
  String createMultipart(String key, String contentType, Map<String, String> metadata);

  /** Stores {@code data[0, len)} as part {@code number}, as the method below does a body. */
  default String uploadPart(
      String key, String uploadId, int number, byte[] data, int len, byte[] md5) {
    return uploadPart(key, uploadId, number, Body.of(data, len), md5);
  }

  /**
   * Stores {@code body} as part {@code number}, replacing a part of that number; returns its
   * ETag. With {@code md5}, the store refuses a body that does not match it.
   */
  String uploadPart(String key, String uploadId, int number, Body body, byte[] md5);

  /**
   * Makes the whole object {@code from} part {@code number} without its bytes leaving the
   * store; returns the part's ETag. {@link StoreException.Kind#NOT_SUPPORTED} where the store
   * cannot.
   */
  String copyPart(String key, String uploadId, int number, String from);

  /**
   * Makes bytes {@code [offset, offset + length)} of the object {@code from} part {@code number}
   * without them leaving the store (S3's UploadPartCopy with {@code x-amz-copy-source-range});
   * returns the part's ETag. Safe to repeat: a part of that number is replaced. {@link
   * StoreException.Kind#NOT_FOUND} if {@code from} or the upload does not exist; a range past
   * the object's end fails. With a {@code fromEtag} that is not empty, {@link
   * StoreException.Kind#CHANGED} if {@code from} no longer has that ETag ({@code
   * x-amz-copy-source-if-match}), so that the bytes copied are those the caller checked.
   */
  String copyPart(String key, String uploadId, int number, String from, String fromEtag,
      long offset, long length);

  /** The parts stored so far; {@link StoreException.Kind#NOT_FOUND} if there is no such upload. */
  List<Part> parts(String key, String uploadId);

  /** Makes the object from {@code parts} (in order); returns its ETag. */
  default String complete(String key, String uploadId, List<Part> parts) {
    return complete(key, uploadId, parts, null);
  }

  /** For {@link #complete(String, String, List, String)}: the key must hold no object. */
  String ABSENT = "*";

  /**
   * Makes the object from {@code parts} (in order) only if the key holds what the caller saw
   * there: nothing ({@link #ABSENT}, S3's {@code If-None-Match: *}), or an object with the ETag
   * {@code expect} ({@code If-Match}); null makes it whatever is there. Fails with {@link
   * StoreException.Kind#CHANGED}, completing nothing, when the condition does not hold. A store
   * that cannot make the write conditional checks the key just before instead ({@link
   * #checkHolds}: a narrow race left open). Returns the object's ETag.
   */
  String complete(String key, String uploadId, List<Part> parts, String expect);

  /**
   * Fails as a conditional completion would ({@link StoreException.Kind#CHANGED}) unless the key
   * holds what {@code expect} says (see {@link #complete(String, String, List, String)}; "" is
   * any object): the look a writer takes just before completing, where a store ignores the
   * condition or cannot make the write conditional.
   */
  default void checkHolds(String key, String expect) {
    if (expect == null) {
      return;
    }
    Stat now = stat(key).orElse(null);
    boolean absent = ABSENT.equals(expect);
    if (absent ? now != null : now == null || !expect.isEmpty() && !expect.equals(now.etag())) {
      throw new StoreException(StoreException.Kind.CHANGED, where(key) + ": "
          + (absent ? "another object was written under this key meanwhile"
              : "the object it was to replace was replaced or removed meanwhile")
          + "; nothing was written over it");
    }
  }

  /** Drops the upload and its parts. */
  void abort(String key, String uploadId);

  /** A multipart upload not yet completed or aborted: its key, its id, when it began. */
  record Upload(String key, String uploadId, java.time.Instant initiated) {}

  /**
   * Every upload in progress to a key that starts with {@code prefix}, oldest first; none in a
   * store without multipart uploads.
   */
  List<Upload> uploads(String prefix);

  /**
   * Whether each part must carry its Content-MD5 to be checked on arrival (a store that signs
   * payloads checks them by their signed hash instead).
   */
  default boolean wantsPartMd5() {
    return true;
  }

  /**
   * A small object that says a run is alive while it is held ({@link #lease}): another run tells a
   * live holder from a dead one by it.
   */
  interface Lease extends AutoCloseable {
    /** Writes it again, where it lives by being written ({@link #refreshed}). */
    void refresh();

    /**
     * Whether it must be written again now and then to count as live (in object storage, where
     * nothing can be locked); otherwise the holder's lock on it says so for as long as it lives.
     */
    boolean refreshed();

    /** Removes it. */
    @Override
    void close();
  }

  /**
   * Leaves {@code content} at {@code key} as a lease: here an object written now and at each
   * {@link Lease#refresh}, removed at {@link Lease#close}; a directory overrides this with a
   * file held locked, which the kernel lets go however the holder ends.
   */
  default Lease lease(String key, byte[] content) {
    put(key, content, content.length, "text/plain");
    return new Lease() {
      @Override
      public void refresh() {
        put(key, content, content.length, "text/plain");
      }

      @Override
      public boolean refreshed() {
        return true;
      }

      @Override
      public void close() {
        delete(key);
      }
    };
  }

  /**
   * A lease found ({@link #leases}): its key, what it says, and whether its holder holds its lock
   * (null where leases live by being written; then {@code written} says when it last was).
   */
  record FoundLease(String key, byte[] says, Boolean held, java.time.Instant written) {}

  /**
   * The most of a lease that is read: a prune's intent names about 110 bytes per image it
   * deletes, so this holds tens of thousands; what is beyond is not read.
   */
  int LEASE_MOST = 4 << 20;

  /** Every lease at any depth under this store whose name starts with {@code name}. */
  default List<FoundLease> leases(String name) {
    List<FoundLease> out = new java.util.ArrayList<>();
    for (Item item : list("")) {
      if (!item.key().substring(item.key().lastIndexOf('/') + 1).startsWith(name)) {
        continue;
      }
      // Only its head is read: an object grown huge meanwhile costs no more.
      byte[] says = new byte[(int) Math.min(item.size(), LEASE_MOST)];
      try {
        read(item.key(), 0, says, 0, says.length);
        out.add(new FoundLease(item.key(), says, null, item.modified()));
      } catch (StoreException e) {
        if (e.kind() != StoreException.Kind.NOT_FOUND) {
          throw e;
        }
        // Its holder ended meanwhile.
      }
    }
    return out;
  }

  /**
   * The store's own clock: the time an object written now gets, so that a lease's age does not
   * depend on how far this host's clock is from its writer's. This host's where nothing can be
   * written.
   */
  default java.time.Instant now() {
    byte[] b = new byte[8];
    new java.security.SecureRandom().nextBytes(b);
    String key = ".beamsave-clock-" + java.util.HexFormat.of().formatHex(b);
    try {
      put(key, new byte[0], 0, "text/plain");
      try {
        for (Item i : list(key)) {
          if (i.key().equals(key)) {
            return i.modified();
          }
        }
      } finally {
        delete(key);
      }
    } catch (RuntimeException readOnly) {
      // Credentials that may not write: this host's clock it is.
    }
    return java.time.Instant.now();
  }
}

package io.beamsave.transforms.transfer;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.store.LinkThrottle;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.Md5;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.StoreException;
import io.beamsave.transforms.store.Stores;
import io.beamsave.transforms.store.ThrottledStore;
import io.beamsave.transforms.store.UploadClaim;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongConsumer;

/**
 * Uploads an image file to one object as a multipart upload with parallel parts, optionally
 * compressing it in transfer ({@link TransferCodec}), throttled to a link speed if asked.
 *
 * <ul>
 *   <li>Every part goes with its Content-MD5 and its ETag is checked; once complete, the
 *       object's length and ETag are checked against what was sent, and an object that does not
 *       match is deleted.
 *   <li>The object exists at its key only once the upload completes (S3 shows nothing of a
 *       multipart upload before that), so a complete-looking object is always complete.
 *   <li>On failure the upload is aborted, leaving no parts behind. A process killed half-way
 *       leaves the upload in progress, with a small state object beside the key ({@code
 *       KEY.beamsave-upload}, {@link UploadState}); {@code resume} continues it, re-sending
 *       only parts whose MD5 does not match what the store holds ({@link UploadParts}); the
 *       state names the upload's id, which is what lets {@code cleanup} abort it.
 * </ul>
 */
public final class ImageUpload {
  public static final long MIN_PART = S3Store.MIN_PART;
  public static final long MAX_PART = 5L << 30;
  public static final long DEFAULT_PART = 16L << 20;
  static final int MAX_PARTS = 10_000;
  static final String META_CODEC = "beamsave-transfer-codec";
  static final String META_RAW_LENGTH = "beamsave-raw-length";
  /** Where an upload's state lies: beside its key, as its {@link UploadClaim}. */
  public static final String STATE_SUFFIX = UploadClaim.SUFFIX;

  /** How to upload. {@code linkMbps} 0 means unthrottled. */
  public record Options(
      TransferCodec codec, long partSize, int parallelParts, double linkMbps, boolean resume) {
    public Options {
      if (partSize < MIN_PART || partSize > MAX_PART) {
        throw new IllegalArgumentException("--part-size must be between 5 MiB and 5 GiB");
      }
      if (parallelParts < 1 || parallelParts > 64) {
        throw new IllegalArgumentException("--parallel-parts must be between 1 and 64");
      }
      if (linkMbps < 0) {
        throw new IllegalArgumentException("--link-mbps must not be negative");
      }
    }

    public static Options defaults() {
      return new Options(TransferCodec.NONE, DEFAULT_PART, 4, 0, false);
    }
  }

  /** What an upload did. */
  public record Result(
      ObjectUri to,
      TransferCodec codec,
      long rawBytes,
      long storedBytes,
      int parts,
      int partsReused,
      boolean resumed,
      double seconds) {}

  private final Store store;
  /** {@link #store} carrying the parts at the link's speed, if there is a limit. */
  private final Store link;
  private final String name;
  private final ObjectUri to;
  private final Options o;
  private final LongConsumer rawProgress;

  private ImageUpload(Store store, String name, ObjectUri to, Options o, LongConsumer progress) {
    this.store = store;
    this.link = ThrottledStore.over(store, LinkThrottle.of(o.linkMbps()));
    this.name = name;
    this.to = to;
    this.o = o;
    this.rawProgress = progress == null ? n -> {} : progress;
  }

  /**
   * Uploads {@code image} to {@code to}, in {@code store} (the store of {@code to}'s bucket,
   * see {@link Stores#bucketOf}).
   *
   * @param progress told the raw bytes of each part once it is stored (from worker threads)
   */
  /** Uploads {@code image} to the object {@code to} (with {@code s3}'s settings). */
  public static Result upload(Path image, Location to, S3Settings s3, Options options,
      LongConsumer progress) {
    if (!(to instanceof Location.InStore object)) {
      throw new BeamsaveException(to + ": an upload goes to object storage, s3://BUCKET/KEY");
    }
    return upload(to.placed(s3).store(), image, object.uri(), options, progress);
  }

  public static Result upload(
      Store store, Path image, ObjectUri to, Options options, LongConsumer progress) {
    ImageUpload u = new ImageUpload(store, image.getFileName().toString(), to, options, progress);
    FileChannel in;
    try {
      in = FileChannel.open(image, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw new BeamsaveException(image + ": no such image");
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read", image, e);
    }
    return u.run(in, image);
  }

  /** Where the state of an upload in progress to {@code to} is kept. */
  public static ObjectUri stateObject(ObjectUri to) {
    return new ObjectUri(to.bucket(), to.key() + STATE_SUFFIX);
  }

  private Result run(FileChannel in, Path image) {
    long start = System.nanoTime();
    try (in) {
      long size = in.size();
      store.check(to.key());
      // S3 allows 10,000 parts: a huge image gets larger parts rather than failing.
      long chunk = Math.max(o.partSize(), (size + MAX_PARTS - 1) / MAX_PARTS);
      Map<Integer, Store.Part> existing = new HashMap<>();
      Begun begun = begin(size, chunk, existing);
      String uploadId = begun.uploadId();
      try {
        UploadParts.Sent sent = new UploadParts(link, to.key(), uploadId, o, existing,
            rawProgress).send(in, size, chunk);
        finish(uploadId, sent, begun.expect());
        store.delete(stateObject(to).key());
        return new Result(
            to, o.codec(), sent.raw(), sent.stored(), sent.parts().size(), sent.reused(),
            begun.resumed(), (System.nanoTime() - start) / 1e9);
      } catch (RuntimeException | Error e) {
        abortQuietly(uploadId);
        throw e;
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read", image, e);
    }
  }

  /**
   * The upload to send parts to, whether it is an interrupted one being continued, and what the
   * key held when it began ({@link Store#ABSENT}, or the ETag of the object it replaces; null
   * from a state an earlier version wrote): what the key must still hold for it to complete.
   */
  private record Begun(String uploadId, boolean resumed, String expect) {}

  private Begun begin(long size, long chunk, Map<Integer, Store.Part> existing) {
    UploadState state = UploadState.read(store, to);
    if (state != null && o.resume()) {
      state.checkResumable(to, o.codec(), chunk, size);
      // The state names the upload; its parts, not a listing of all uploads, say whether it is
      // still there (listings of uploads are not reliable on every S3-compatible server).
      List<Store.Part> parts = partsIfInProgress(state.uploadId());
      if (parts != null) {
        for (Store.Part p : parts) {
          existing.put(p.number(), p);
        }
        return new Begun(state.uploadId(), true, state.expect());
      }
    }
    if (state != null && !o.resume()) {
      // A fresh upload replaces an interrupted one: drop its parts rather than orphan them.
      abortQuietly(state.uploadId());
    }
    Map<String, String> meta = new HashMap<>();
    meta.put(META_CODEC, o.codec().spec());
    meta.put(META_RAW_LENGTH, Long.toString(size));
    String there = store.stat(to.key()).map(Store.Stat::etag).orElse(Store.ABSENT);
    String id = store.createMultipart(to.key(), o.codec().contentType(), meta);
    try {
      UploadState.begun(to, id, there, o.codec(), chunk, size, name).write(store, to);
    } catch (RuntimeException e) {
      abortQuietly(id);
      throw e;
    }
    return new Begun(id, false, there);
  }

  /** The parts stored for upload {@code id}, or null when there is no such upload any more. */
  private List<Store.Part> partsIfInProgress(String id) {
    try {
      return store.parts(to.key(), id);
    } catch (StoreException e) {
      if (e.kind() == StoreException.Kind.NOT_FOUND) {
        return null;
      }
      throw e;
    }
  }

  /**
   * Completes the upload and checks the object is what was sent: its length and, in the
   * multipart form of its ETag, the number of parts and (where the parts' MD5s are known) the
   * MD5 of their MD5s. Each part's bytes were checked by the store on arrival, against its signed
   * SHA-256 or its Content-MD5.
   */
  private void finish(String uploadId, UploadParts.Sent sent, String expect) {
    boolean allMd5 = sent.md5s().stream().allMatch(Objects::nonNull);
    String expectedMultipart = allMd5 ? Md5.multipartEtag(sent.md5s()) : null;
    String partCount = "-" + sent.md5s().size();
    String etag;
    try {
      // Where the server ignores the condition, this look leaves only a narrow race.
      store.checkHolds(to.key(), expect);
      etag = store.complete(to.key(), uploadId, sent.parts(), expect);
    } catch (StoreException e) {
      // A completion whose answer was lost is retried and then finds no such upload (or, with
      // its condition, the object it made): the object itself says whether the first attempt
      // took effect; the checks below decide.
      boolean retried = e.kind() == StoreException.Kind.NOT_FOUND
          || e.kind() == StoreException.Kind.CHANGED && e.attempts() > 1;
      if (!retried || store.stat(to.key()).isEmpty()) {
        throw e;
      }
      etag = "";
    }
    Store.Stat head = store.stat(to.key()).orElseThrow(
        () -> new BeamsaveException(to + ": missing right after its upload completed"));
    String problem = null;
    if (head.size() != sent.stored()) {
      problem = "stored " + head.size() + " bytes, sent " + sent.stored();
    } else {
      for (String tag : new String[] {etag, head.etag()}) {
        if (!tag.contains("-")) {
          continue;
        }
        if (!tag.endsWith(partCount)) {
          problem = "ETag " + tag + " counts other parts than the " + sent.md5s().size()
              + " sent";
        } else if (expectedMultipart != null && !tag.equalsIgnoreCase(expectedMultipart)) {
          problem = "ETag " + tag + " does not match the parts sent (" + expectedMultipart + ")";
        }
      }
    }
    if (problem != null) {
      store.delete(to.key());
      throw new BeamsaveException(
          to + ": upload failed its integrity check and was removed: " + problem);
    }
  }

  private void abortQuietly(String uploadId) {
    try {
      store.abort(to.key(), uploadId);
    } catch (RuntimeException e) {
      // Already gone (completed or aborted), or the store is unreachable: the original error
      // is the one to report.
    }
    try {
      store.delete(stateObject(to).key());
    } catch (RuntimeException ignored) {
      // As above.
    }
  }
}

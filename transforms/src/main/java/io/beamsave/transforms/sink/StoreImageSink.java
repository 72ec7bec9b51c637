package io.beamsave.transforms.sink;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.image.catalog.Catalog;
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
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * An image in object storage, written as one multipart upload to the image's key, begun by
 * {@link #prepare} before the pipeline runs. Each worker sends its shard the moment it is
 * compressed, so the link is busy while later shards still compress, and no worker needs a disk
 * it shares with another:
 *
 * <ul>
 *   <li>a shard of at least 5 MiB (S3's smallest part but the last) goes straight into the
 *       upload as part {@code shard + 1}; shard 0's part begins with the image's header;
 *   <li>a smaller one is staged as an object of its own under the run's staging prefix ({@code
 *       .../shard-000042-ID}), and finishing gathers it, with the catalog and trailer, into the
 *       parts that follow the last shard's (or, when shard 0 is small, into part 1 with the
 *       header, padded to 5 MiB by a gap no reader visits if that is all the staged shards fill).
 * </ul>
 *
 * <p>A task that runs twice sends its part again, replacing the first; finishing ({@link
 * Assembly}) lists the upload's parts and keeps, of the copies the job's results name, the one
 * whose ETag the part has, so the catalog always describes the bytes the image holds. The image
 * appears at its key only when complete and its length checked. A failed or interrupted run
 * aborts the upload once its workers in this JVM have no write in flight ({@link UploadGate}),
 * and its staged shards are removed either way ({@link UploadCleanup}). From its beginning
 * until it is completed or aborted, the upload's {@link UploadClaim} lies beside the image's
 * key: where a run is killed, or its store stops answering before the abort, the claim is what
 * lets {@code cleanup} abort the upload it left.
 */
public final class StoreImageSink implements ImageSink {
  private static final long serialVersionUID = 3L;

  /** S3's smallest part but the last. */
  public static final long MIN_PART = S3Store.MIN_PART;
  /** S3's part numbers are 1 .. 10,000. */
  static final int MAX_PARTS = 10_000;
  /** The image's metadata naming the run that made it. */
  static final String RUN_TAG = "beamsave-run";

  private final String image;
  private final String staging;
  private final S3Settings s3;
  private final double linkMbps;
  private final int parallelParts;
  /** The image's multipart upload, begun by {@link #prepare}; null before. */
  private final String uploadId;
  /** A random name for this run, in the upload's metadata; null before {@link #prepare}. */
  private final String runTag;
  /** The key of an encrypted image; null otherwise. */
  private final ImageKey imageKey;
  /**
   * What the image's key held when {@link #prepare} began the upload: {@link Store#ABSENT}, or
   * the ETag of the image this run replaces ("" where the store gives none); the upload completes
   * only if the key holds it still, so that no object written meanwhile is silently replaced.
   */
  private final String expect;

  /**
   * The image {@code image} ({@code s3://B/K}), its small shards staged under {@code staging}
   * (an {@code s3://} prefix in the same bucket), sent at {@code linkMbps} (0: no limit), with
   * up to {@code parallelParts} requests at once when finishing.
   */
  public StoreImageSink(
      ObjectUri image, ObjectUri staging, S3Settings s3, double linkMbps, int parallelParts) {
    this(image.toString(), staging.key().endsWith("/") ? staging.key() : staging.key() + "/",
        s3, linkMbps, parallelParts, null, null, null, null);
    if (!image.bucket().equals(staging.bucket())) {
      throw new BeamsaveException("staging " + staging + " must be in the bucket of the image "
          + image + " (staged shards are kept beside the image they become part of)");
    }
  }

  private StoreImageSink(
      String image, String staging, S3Settings s3, double linkMbps, int parallelParts,
      String uploadId, String runTag, ImageKey key, String expect) {
    if (parallelParts < 1) {
      throw new IllegalArgumentException("parallel parts must be at least 1");
    }
    this.image = image;
    this.staging = staging;
    this.s3 = s3;
    this.linkMbps = linkMbps;
    this.parallelParts = parallelParts;
    this.uploadId = uploadId;
    this.runTag = runTag;
    this.imageKey = key;
    this.expect = expect;
  }

  @Override
  public ImageKey key() {
    return imageKey;
  }

  @Override
  public StoreImageSink encryptedWith(ImageKey newKey) {
    return new StoreImageSink(image, staging, s3, linkMbps, parallelParts, uploadId, runTag,
        newKey, expect);
  }

  public ObjectUri uri() {
    return ObjectUri.parse(image, false);
  }

  /** Where this run stages small shards: an {@code s3://} prefix beside the image. */
  public String stagingLocation() {
    return new ObjectUri(uri().bucket(), staging).toString();
  }

  /** The image's bucket, through the link ({@code --link-mbps}) the run's workers share. */
  private Store store() {
    return ThrottledStore.over(Stores.bucketOf(uri(), s3),
        LinkThrottle.shared(UploadGate.runOf(staging), linkMbps));
  }

  private String shardKey(int shard, long copy) {
    return staging + String.format(Locale.ROOT, "shard-%06d-%016x", shard, copy);
  }

  /** The prefix under which this run stages small shards, within the image's bucket. */
  String stagingPrefix() {
    return staging;
  }

  /** The bytes of staged copy {@code s}, for {@link Assembly}. */
  byte[] stagedBytes(Store store, WrittenShard s) {
    if (!(s.copy() instanceof Copy.Staged staged)) {
      throw new IllegalStateException(image + ": shard " + s.shard() + " is not staged");
    }
    return store.get(shardKey(s.shard(), staged.id()));
  }

  /** The image's multipart upload, begun by {@link #prepare}; null before. */
  String uploadId() {
    return uploadId;
  }

  /** This run's name in the upload's metadata ({@link #RUN_TAG}); null before prepare. */
  String runTag() {
    return runTag;
  }

  /** What the image's key held when the upload began, and must hold for it to complete. */
  String expect() {
    return expect;
  }

  /** How many parts finishing sends at once. */
  int parallelParts() {
    return parallelParts;
  }

  @Override
  public String location() {
    return image;
  }

  /**
   * Begins the image's multipart upload, and leaves its claim beside the key; returns the sink
   * that carries its id to the workers. Nothing to clear first: each run stages under a prefix
   * of its own, and each upload has a claim of its own.
   */
  @Override
  public ImageSink prepare() {
    String tag = Long.toHexString(new SecureRandom().nextLong());
    String there = store().stat(uri().key()).map(Store.Stat::etag).orElse(Store.ABSENT);
    String id = UploadClaim.begin(store(), uri().key(), "application/octet-stream",
        Map.of(RUN_TAG, tag), "image", tag).uploadId();
    return new StoreImageSink(image, staging, s3, linkMbps, parallelParts, id, tag, imageKey,
        there);
  }

  /**
   * Whether the image at the key is this run's, complete: a job run again from the start (Flink
   * after a lost TaskManager) or a finishing step retried after its upload completed finds no
   * upload any more, and must neither fail nor make the image again.
   */
  boolean completedByThisRun(Store store) {
    return runTag != null && store.stat(uri().key())
        .map(st -> runTag.equals(st.metadata().get(RUN_TAG))).orElse(false);
  }

  /**
   * One part each, and 1,000 left for the staged shards, the catalog and the trailer after the
   * last (S3 numbers parts 1 .. 10,000), so that gathering them never needs parts of more than
   * about 45 MiB.
   */
  @Override
  public int maxShards() {
    return MAX_PARTS - 1000;
  }

  @Override
  public void checkWritable() {
    if (uploadId != null) {
      UploadGate.check(uploadId);
    }
  }

  /** {@code e}, the run stopped for the store's timeout where it says the store is down. */
  private StoreException stop(StoreException e) {
    return uploadId == null ? e : UploadGate.stopIfStoreDown(uploadId, e, s3.timeout());
  }

  @Override
  public Copy writeShard(int shard, byte[] blocks, int len) {
    checkWritable();
    Store store = store();
    byte[] header = header();
    int head = shard == 0 ? header.length : 0;
    if (uploadId == null) {
      throw new IllegalStateException(image + ": written without prepare()");
    }
    if (len + head >= MIN_PART && shard < maxShards()) {
      byte[] data = blocks;
      int n = len;
      if (head > 0) {
        data = new byte[len + head];
        System.arraycopy(header, 0, data, 0, head);
        System.arraycopy(blocks, 0, data, head, len);
        n = len + head;
      }
      byte[] md5 = store.wantsPartMd5() ? Md5.of(data, 0, n) : null;
      byte[] body = data;
      int bodyLength = n;
      try {
        return new Copy.Part(S3Store.unquote(UploadGate.write(uploadId, () -> store.uploadPart(
            uri().key(), uploadId, shard + 1, body, bodyLength, md5))));
      } catch (StoreException e) {
        if (e.kind() == StoreException.Kind.NOT_FOUND && completedByThisRun(store)) {
          return new Copy.ImageComplete();
        }
        throw stop(e);
      }
    }
    long copy = new SecureRandom().nextLong() & Long.MAX_VALUE;
    try {
      UploadGate.write(uploadId, () -> {
        store.put(shardKey(shard, copy), blocks, len, "application/octet-stream");
        return null;
      });
    } catch (StoreException e) {
      throw stop(e);
    }
    return new Copy.Staged(copy);
  }

  /**
   * Whether shard {@code shard} of this image can be copied in the store from {@code source}'s
   * bytes {@code [offset, offset + length)} with {@link #copyShard}: {@code source} must be an
   * object in this image's bucket, and the copy a part of at least 5 MiB (S3's smallest but the
   * last; the catalog and trailer always follow it). Shard 0's part begins with the image's
   * header, which no range of another image holds, so shard 0 is never copied.
   */
  public boolean canCopy(int shard, String source, long length) {
    return shard > 0 && shard < maxShards() && length >= MIN_PART
        && length <= MAX_COPIED_PART && Location.inStore(source)
        && ObjectUri.parse(source, false).bucket().equals(uri().bucket());
  }

  /** S3's largest part. */
  static final long MAX_COPIED_PART = 5L << 30;

  /**
   * Makes bytes {@code [offset, offset + length)} of the object {@code source} (the blocks of a
   * shard of another image) shard {@code shard} of this image, copied in the store as part
   * {@code shard + 1} of the upload: the bytes never leave the store. Like {@link #writeShard},
   * a task that runs twice copies its part again, replacing the first. With a {@code
   * sourceEtag}, the copy fails (as replaced) unless the source still has it.
   */
  public Copy copyShard(int shard, String source, String sourceEtag, long offset, long length) {
    checkWritable();
    if (uploadId == null) {
      throw new IllegalStateException(image + ": written without prepare()");
    }
    if (!canCopy(shard, source, length)) {
      throw new IllegalArgumentException(image + ": shard " + shard + " cannot be copied from "
          + source + " (" + length + " bytes)");
    }
    Store store = store();
    try {
      return new Copy.Part(S3Store.unquote(UploadGate.write(uploadId, () -> store.copyPart(
          uri().key(), uploadId, shard + 1, ObjectUri.parse(source, false).key(), sourceEtag,
          offset, length))));
    } catch (StoreException e) {
      if (e.kind() == StoreException.Kind.NOT_FOUND && completedByThisRun(store)) {
        return new Copy.ImageComplete();
      }
      throw e.kind() == StoreException.Kind.CHANGED
          ? new StoreException(StoreException.Kind.CHANGED, source + ": it was replaced since"
              + " this command began reading it (another image is at its name now)")
          : stop(e);
    }
  }

  /**
   * Completes the upload from the copies {@code shards} name ({@link Assembly}), or, where this
   * run completed it already (a finishing step run again), leaves the image as it is.
   */
  @Override
  public long finish(
      List<WrittenShard> shards, Function<List<Kept>, Catalog> catalog, Codec codec,
      int blockSize) throws IOException {
    Store store = store();
    if (completedByThisRun(store)) {
      new UploadCleanup(this, store).afterCompleted();
      return store.stat(uri().key()).map(Store.Stat::size).orElseThrow();
    }
    if (uploadId == null) {
      throw new IllegalStateException(image + ": finished without prepare()");
    }
    long length;
    try (Assembly a = new Assembly(this, store)) {
      length = a.assemble(shards, catalog, codec, blockSize);
    }
    new UploadCleanup(this, store).afterCompleted();
    return length;
  }

  /** Stops the run's writers, then removes what it left ({@link UploadCleanup}). */
  @Override
  public List<String> discard() {
    if (uploadId != null) {
      // Workers still sending parts then fail, and no part outlives the run.
      UploadGate.stopForGood(uploadId, image + ": the run was stopped",
          s3.timeout().plus(Duration.ofSeconds(5)));
    }
    return new UploadCleanup(this, store()).discard();
  }

  @Override
  public String toString() {
    return image;
  }
}

package io.beamsave.transforms.sink;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.CatalogCodec;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.ShardInfo;
import io.beamsave.transforms.store.LinkThrottle;
import io.beamsave.transforms.store.Md5;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.StoreException;
import io.beamsave.transforms.store.Stores;
import io.beamsave.transforms.store.ThrottledStore;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
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
 * <p>A task that runs twice sends its part again, replacing the first; finishing lists the
 * upload's parts and keeps, of the copies the job's results name, the one whose ETag the part
 * has, so the catalog always describes the bytes the image holds. The image appears at its key
 * only when complete and its length checked. A failed or interrupted run aborts the upload, and
 * its staged shards are removed either way.
 */
public final class StoreImageSink implements ImageSink {
  private static final long serialVersionUID = 3L;

  /** S3's smallest part but the last. */
  public static final long MIN_PART = 5L << 20;
  /** S3's part numbers are 1 .. 10,000. */
  static final int MAX_PARTS = 10_000;
  /** {@link Copy#where} of a shard sent as a part of the image's upload. */
  public static final long PART = -1;
  /** {@link Copy#where} of a shard of a run whose image is already complete (a rerun's). */
  static final long DONE = -2;
  /** The image's metadata naming the run that made it. */
  static final String RUN_TAG = "beamsave-run";

  private final String image;
  private final String staging;
  private final S3Settings settings;
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
      ObjectUri image, ObjectUri staging, S3Settings settings, double linkMbps,
      int parallelParts) {
    this(image.toString(), staging.key().endsWith("/") ? staging.key() : staging.key() + "/",
        settings, linkMbps, parallelParts, null, null, null, null);
    if (!image.bucket().equals(staging.bucket())) {
      throw new BeamsaveException("staging " + staging + " must be in the bucket of the image "
          + image + " (staged shards are kept beside the image they become part of)");
    }
  }

  private StoreImageSink(
      String image, String staging, S3Settings settings, double linkMbps, int parallelParts,
      String uploadId, String runTag, ImageKey key, String expect) {
    if (parallelParts < 1) {
      throw new IllegalArgumentException("parallel parts must be at least 1");
    }
    this.image = image;
    this.staging = staging;
    this.settings = settings;
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
    return new StoreImageSink(image, staging, settings, linkMbps, parallelParts, uploadId, runTag,
        newKey, expect);
  }

  public ObjectUri uri() {
    return ObjectUri.parse(image, false);
  }

  /** Where this run stages small shards: an {@code s3://} prefix beside the image. */
  public String stagingLocation() {
    return new ObjectUri(uri().bucket(), staging).toString();
  }

  /** The image's bucket, its writes sent through the link this JVM's workers share. */
  private Store store() {
    return ThrottledStore.over(Stores.bucketOf(uri(), settings), LinkThrottle.shared(linkMbps));
  }

  private String shardKey(int shard, long copy) {
    return staging + String.format(Locale.ROOT, "shard-%06d-%016x", shard, copy);
  }

  @Override
  public String location() {
    return image;
  }

  /**
   * Why a run of this JVM can no longer make its image, and until when ({@code until}, in
   * {@link System#nanoTime} terms): discarded by its driver (failed or interrupted: for good),
   * or its store unreachable (for the store's timeout: a job a cluster restarts in the same
   * worker JVM, once the store is back, must not fail for it).
   */
  private record Stopped(String why, boolean forever, long until) {}

  /** Runs of this JVM stopped, by upload id: no worker writes for them meanwhile. */
  private static final Map<String, Stopped> STOPPED =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * Requests of this JVM's workers in flight, by upload id: a part that lands after its upload
   * was aborted brings the upload back on some stores (S3Proxy's filesystem), so a stopped run
   * aborts once they are done.
   */
  private static final Map<String, java.util.concurrent.atomic.AtomicInteger> IN_FLIGHT =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** Runs {@code write} counted as in flight for this run's upload. */
  private <T> T inFlight(java.util.function.Supplier<T> write) {
    java.util.concurrent.atomic.AtomicInteger n =
        IN_FLIGHT.computeIfAbsent(uploadId, k -> new java.util.concurrent.atomic.AtomicInteger());
    n.incrementAndGet();
    try {
      checkWritable();
      return write.get();
    } finally {
      synchronized (n) {
        n.decrementAndGet();
        n.notifyAll();
      }
    }
  }

  /** Waits until no write of this run is in flight in this JVM, for at most the store's timeout. */
  private void awaitWrites() {
    java.util.concurrent.atomic.AtomicInteger n = IN_FLIGHT.get(uploadId);
    if (n == null) {
      return;
    }
    long end = System.nanoTime() + settings.timeout().toNanos() + 5_000_000_000L;
    synchronized (n) {
      while (n.get() > 0 && System.nanoTime() < end) {
        try {
          n.wait(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /**
   * Begins the image's multipart upload; returns the sink that carries its id to the workers.
   * Nothing to clear first: each run stages under a prefix of its own.
   */
  @Override
  public ImageSink prepare() {
    String tag = Long.toHexString(new java.security.SecureRandom().nextLong());
    String there = store().stat(uri().key()).map(Store.Stat::etag).orElse(Store.ABSENT);
    String id = store().createMultipart(uri().key(), "application/octet-stream",
        Map.of(RUN_TAG, tag));
    return new StoreImageSink(image, staging, settings, linkMbps, parallelParts, id, tag,
        imageKey, there);
  }

  /**
   * Whether the image at the key is this run's, complete: a job run again from the start (Flink
   * after a lost TaskManager) or a finishing step retried after its upload completed finds no
   * upload any more, and must neither fail nor make the image again.
   */
  private boolean completedByThisRun(Store store) {
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
    Stopped s = uploadId == null ? null : STOPPED.get(uploadId);
    if (s != null && (s.forever() || System.nanoTime() - s.until() < 0)) {
      throw new BeamsaveException(s.why());
    }
  }

  /**
   * {@code e}; where it says the store cannot be reached, or kept failing until the retries
   * were spent, no worker of this JVM sends a shard of this run for the store's timeout: the
   * DirectRunner lets every running bundle go on after a failure, and each would compress its
   * shard for nothing. Other failures (a part refused, a worker interrupted by its cluster) stop
   * only their own shard.
   */
  private StoreException stop(StoreException e) {
    boolean storeDown = e.kind() == StoreException.Kind.UNREACHABLE || e.attempts() > 1;
    if (uploadId != null && storeDown) {
      Stopped now = new Stopped(e.getMessage(), false,
          System.nanoTime() + settings.timeout().toNanos());
      STOPPED.merge(uploadId, now, (was, next) -> was.forever() ? was : next);
    }
    return e;
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
        return new Copy(PART, S3Store.unquote(inFlight(() -> store.uploadPart(uri().key(),
            uploadId, shard + 1, body, bodyLength, md5))));
      } catch (StoreException e) {
        if (e.kind() == StoreException.Kind.NOT_FOUND && completedByThisRun(store)) {
          return new Copy(DONE, "");
        }
        throw stop(e);
      }
    }
    long copy = new java.security.SecureRandom().nextLong() & Long.MAX_VALUE;
    try {
      inFlight(() -> {
        store.put(shardKey(shard, copy), blocks, len, "application/octet-stream");
        return null;
      });
    } catch (StoreException e) {
      throw stop(e);
    }
    return new Copy(copy, "");
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
        && length <= MAX_COPIED_PART && ObjectUri.isObject(source)
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
      return new Copy(PART, S3Store.unquote(inFlight(() -> store.copyPart(uri().key(),
          uploadId, shard + 1, ObjectUri.parse(source, false).key(), sourceEtag, offset,
          length))));
    } catch (StoreException e) {
      if (e.kind() == StoreException.Kind.NOT_FOUND && completedByThisRun(store)) {
        return new Copy(DONE, "");
      }
      throw e.kind() == StoreException.Kind.CHANGED
          ? new StoreException(StoreException.Kind.CHANGED, source + ": it was replaced since"
              + " this command began reading it (another image is at its name now)")
          : stop(e);
    }
  }

  @Override
  public long finish(
      List<WrittenShard> shards, Function<List<Kept>, Catalog> catalog, Codec codec,
      int blockSize) throws IOException {
    Store store = store();
    String key = uri().key();
    if (completedByThisRun(store)) {
      warnUnremoved(store);
      return store.stat(key).map(Store.Stat::size).orElseThrow();
    }
    if (uploadId == null) {
      throw new IllegalStateException(image + ": finished without prepare()");
    }
    Map<Integer, Store.Part> sent = new HashMap<>();
    if (shards.stream().anyMatch(s -> s.copy().where() == PART)) {
      for (Store.Part p : store.parts(key, uploadId)) {
        sent.put(p.number(), p);
      }
    }
    List<WrittenShard> chosen = keep(shards, sent);
    List<WrittenShard> direct = new ArrayList<>();
    List<WrittenShard> staged = new ArrayList<>();
    for (WrittenShard s : chosen) {
      (s.copy().where() == PART ? direct : staged).add(s);
    }

    // Where each shard lies: part 1 (shard 0's, or the header with staged shards), the other
    // shards' parts in shard order, then the remaining staged shards, the catalog and trailer.
    Map<Integer, ShardInfo> at = new TreeMap<>();
    boolean headIsShard0 = !direct.isEmpty() && direct.get(0).shard() == 0;
    byte[] header = header();
    long pos = header.length;
    int inHead = 0;
    long headLength = 0;
    if (!headIsShard0 && !direct.isEmpty()) {
      while (inHead < staged.size() && pos < MIN_PART) {
        pos = place(at, staged.get(inHead++), pos);
      }
      long padded = Math.max(pos, MIN_PART);
      if (imageKey != null && padded > pos && padded - pos < BlockSealer.FRAME_HEADER) {
        // An encrypted image's gap is a padding frame, which needs room for its header.
        padded = pos + BlockSealer.FRAME_HEADER;
      }
      headLength = pos = padded;
    }
    for (WrittenShard s : direct) {
      pos = place(at, s, pos);
    }
    long tailStart = direct.isEmpty() ? 0 : pos;
    for (WrittenShard s : staged.subList(inHead, staged.size())) {
      pos = place(at, s, pos);
    }
    List<Kept> kept = chosen.stream().map(s -> new Kept(s, at.get(s.shard()))).toList();
    byte[] tail = ImageWriter.tail(CatalogCodec.encode(catalog.apply(kept).withKey(imageKey)),
        codec, blockSize, pos, imageKey);
    long length = pos + tail.length;

    int next = direct.isEmpty() ? 1 : direct.get(direct.size() - 1).shard() + 2;
    // maxShards() leaves at least 1,000 numbers for these parts.
    long chunk = Math.max(MIN_PART, -Math.floorDiv(-(length - tailStart), MAX_PARTS - next + 1L));
    try (Assembly a = new Assembly(store, key, uploadId)) {
      if (headLength > 0) {
        a.write(header);
        for (WrittenShard s : staged.subList(0, inHead)) {
          a.write(store.get(shardKey(s.shard(), s.copy().where())));
        }
        a.pad(headLength);
        a.send(1);
      }
      for (WrittenShard s : direct) {
        a.sent(sent.get(s.shard() + 1));
      }
      if (direct.isEmpty()) {
        a.write(header);
      }
      for (WrittenShard s : staged.subList(inHead, staged.size())) {
        a.write(store.get(shardKey(s.shard(), s.copy().where())));
        if (a.gathered() >= chunk) {
          a.send(next++);
        }
      }
      a.write(tail);
      a.send(next);
      String problem = a.complete(length);
      if (problem != null) {
        store.delete(key);
        throw new BeamsaveException(image + ": " + problem);
      }
    }
    warnUnremoved(store);
    return length;
  }

  /** Records that {@code s} lies at {@code pos}; returns where the next one begins. */
  private static long place(Map<Integer, ShardInfo> at, WrittenShard s, long pos) {
    at.put(s.shard(), s.at(pos));
    return pos + s.storedLength();
  }

  /**
   * Of each shard's copies, the one the image will hold: the copy whose ETag its part has, if
   * it went into the upload, else one staged (each is whole).
   */
  private List<WrittenShard> keep(List<WrittenShard> shards, Map<Integer, Store.Part> sent) {
    Map<Integer, List<WrittenShard>> copies = new TreeMap<>();
    for (WrittenShard s : shards) {
      copies.computeIfAbsent(s.shard(), k -> new ArrayList<>()).add(s);
    }
    List<WrittenShard> kept = new ArrayList<>(copies.size());
    for (Map.Entry<Integer, List<WrittenShard>> e : copies.entrySet()) {
      Store.Part part = sent.get(e.getKey() + 1);
      WrittenShard pick = null;
      for (WrittenShard s : e.getValue()) {
        if (s.copy().where() == PART && part != null && holds(part, s)) {
          pick = s;
        }
      }
      for (WrittenShard s : e.getValue()) {
        if (pick == null && s.copy().where() >= 0) {
          pick = s;
        }
      }
      if (pick == null) {
        throw new BeamsaveException(image + ": shard " + e.getKey() + ": part " + (e.getKey() + 1)
            + " of the upload is not the copy the job kept (an attempt the job dropped sent it"
            + " last, or the store lost it); run the save again");
      }
      kept.add(pick);
    }
    return kept;
  }

  /** Whether the part in the upload holds copy {@code s}: its length and its ETag. */
  private boolean holds(Store.Part part, WrittenShard s) {
    long length = s.storedLength() + (s.shard() == 0 ? header().length : 0);
    String etag = S3Store.unquote(part.etag());
    return part.size() == length
        && (etag.isEmpty() || s.copy().tag().isEmpty() || etag.equalsIgnoreCase(s.copy().tag()));
  }

  /** The parts finishing sends or names, and the completion of the upload. */
  private final class Assembly implements AutoCloseable {
    private final Store store;
    private final String key;
    private final String uploadId;
    private final ExecutorService pool;
    /** Bounds the gathered parts held in memory while they are sent. */
    private final Semaphore inFlight = new Semaphore(parallelParts + 1);
    private final List<Future<Store.Part>> parts = new ArrayList<>();
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

    Assembly(Store store, String key, String uploadId) {
      this.store = store;
      this.key = key;
      this.uploadId = uploadId;
      this.pool = Executors.newFixedThreadPool(parallelParts, r -> {
        Thread t = new Thread(r, "beamsave-assemble");
        t.setDaemon(true);
        return t;
      });
    }

    void write(byte[] bytes) {
      pending.write(bytes, 0, bytes.length);
    }

    long gathered() {
      return pending.size();
    }

    /**
     * Fills the gathered bytes up to {@code length}: zeros, or in an encrypted image a padding
     * frame, so that its frames can be walked from header to trailer without its key.
     */
    void pad(long length) {
      int gap = (int) (length - pending.size());
      if (gap > 0) {
        byte[] fill = imageKey != null ? BlockSealer.padding(gap) : new byte[gap];
        pending.write(fill, 0, gap);
      }
    }

    /** A part already in the upload. */
    void sent(Store.Part part) {
      parts.add(java.util.concurrent.CompletableFuture.completedFuture(part));
    }

    /** Sends the gathered bytes as part {@code number}. */
    void send(int number) {
      byte[] data = pending.toByteArray();
      pending.reset();
      acquire();
      parts.add(pool.submit(() -> {
        try {
          byte[] md5 = store.wantsPartMd5() ? Md5.of(data, 0, data.length) : null;
          return new Store.Part(number, store.uploadPart(key, uploadId, number, data,
              data.length, md5), data.length);
        } finally {
          inFlight.release();
        }
      }));
    }

    /**
     * Completes the upload from the parts; returns what is wrong with the object made (null if
     * nothing): its length, its run, and where the store gives multipart ETags, its parts.
     */
    String complete(long length) {
      List<Store.Part> done = new ArrayList<>(parts.size());
      for (Future<Store.Part> f : parts) {
        done.add(get(f));
      }
      done.sort(java.util.Comparator.comparingInt(Store.Part::number));
      String etag = "";
      try {
        // Also where the store ignores the condition (S3Proxy): only a race this narrow is
        // left open there.
        store.checkHolds(key, expect);
        etag = store.complete(key, uploadId, done, expect);
      } catch (StoreException e) {
        // A completion whose answer was lost is retried and then finds no such upload, or (with
        // its condition) the object it made: the object, this run's or not, says whether the
        // first attempt took effect.
        if (e.kind() != StoreException.Kind.NOT_FOUND && e.kind() != StoreException.Kind.CHANGED
            || !completedByThisRun(store)) {
          throw e;
        }
      }
      Store.Stat made = store.stat(key).orElse(null);
      if (made == null || !runTag.equals(made.metadata().get(RUN_TAG))) {
        return "the completed upload is not at its key";
      }
      if (made.size() != length) {
        return "assembled " + made.size() + " bytes, expected " + length;
      }
      String expected = Md5.multipartEtagOf(done.stream().map(Store.Part::etag).toList());
      for (String tag : new String[] {etag, made.etag()}) {
        if (expected != null && tag.contains("-") && !tag.equalsIgnoreCase(expected)) {
          return "the completed object's ETag " + tag + " is not that of the parts kept ("
              + expected + "): a part was replaced meanwhile";
        }
      }
      return null;
    }

    @Override
    public void close() {
      pool.shutdownNow();
      // A part still being sent could otherwise land after the upload is aborted.
      try {
        pool.awaitTermination(60, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private void acquire() {
      try {
        inFlight.acquire();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new BeamsaveException("interrupted while assembling " + image);
      }
    }

    private Store.Part get(Future<Store.Part> f) {
      try {
        return f.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new BeamsaveException("interrupted while assembling " + image);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof RuntimeException r) {
          throw r;
        }
        throw new BeamsaveException(image + ": " + e.getCause(), e.getCause());
      }
    }
  }

  /** Removes the run's staged shards; returns whether it could. */
  private boolean removeStaged(Store store) {
    try {
      for (Store.Item staged : store.list(staging)) {
        store.delete(staged.key());
      }
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private void warnUnremoved(Store store) {
    if (!removeStaged(store)) {
      System.err.println("beamsave: warning: cannot remove the staged shards under "
          + store.where(staging) + "; 'beamsave cleanup' removes them");
    }
  }

  @Override
  public List<String> discard() {
    if (uploadId != null) {
      // Workers still sending parts then fail, and no part outlives the run.
      STOPPED.put(uploadId, new Stopped(image + ": the run was stopped", true, 0));
      awaitWrites();
    }
    List<String> left = new ArrayList<>();
    Store store = store();
    if (!abortUpload(store)) {
      left.add("the multipart upload of " + image);
    }
    if (!removeStaged(store)) {
      left.add("any staged shards under " + store.where(staging));
    }
    return left;
  }

  /**
   * Aborts the run's upload; one already completed (an image made whole) is not affected.
   * Returns whether no upload is left.
   */
  private boolean abortUpload(Store store) {
    if (uploadId == null) {
      return true;
    }
    try {
      store.abort(uri().key(), uploadId);
      return true;
    } catch (StoreException e) {
      return e.kind() == StoreException.Kind.NOT_FOUND;
    }
  }

  @Override
  public String toString() {
    return image;
  }
}

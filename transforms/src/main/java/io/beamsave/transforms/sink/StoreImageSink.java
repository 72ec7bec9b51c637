package io.beamsave.transforms.sink;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.CatalogCodec;
import io.beamsave.transforms.image.ImageFormat;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.ShardInfo;
import io.beamsave.transforms.store.LinkThrottle;
import io.beamsave.transforms.store.Md5;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.StoreException;
import io.beamsave.transforms.store.Stores;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.function.Function;

/**
 * An image in object storage. Each worker uploads its shard, the moment it is compressed, as an
 * object of its own under the run's staging prefix in the image's bucket ({@code
 * .../shard-000042-ID}), so the link is busy while later shards still compress and no worker
 * needs a disk it shares with another. Each copy of a shard written twice has an object of its
 * own, and the image is made from the copy whose result the job kept.
 *
 * <p>Finishing is one multipart upload to the image's key whose parts are, in shard order, the
 * header, the shards and the catalog with the trailer. A staged shard of at least 5 MiB becomes
 * a part by a copy inside the store (UploadPartCopy, several at once), so its bytes do not
 * travel again; smaller ones, and the header and the tail, are gathered into parts of at least
 * 5 MiB. A store without UploadPartCopy gets every part through the finishing worker. The image
 * appears at its key only when complete and its length checked; on failure the upload is
 * aborted. The staged shards are removed either way.
 */
public final class StoreImageSink implements ImageSink {
  private static final long serialVersionUID = 1L;

  /** S3's smallest part but the last. */
  public static final long MIN_PART = 5L << 20;

  private final String image;
  private final String staging;
  private final S3Settings settings;
  private final double linkMbps;
  private final int parallelParts;

  /**
   * The image {@code image} ({@code s3://B/K}), its shards staged under {@code staging} (an
   * {@code s3://} prefix in the same bucket), sent at {@code linkMbps} (0: no limit), with up to
   * {@code parallelParts} requests at once when finishing.
   */
  public StoreImageSink(
      ObjectUri image, ObjectUri staging, S3Settings settings, double linkMbps,
      int parallelParts) {
    if (!image.bucket().equals(staging.bucket())) {
      throw new BeamsaveException("staging " + staging + " must be in the bucket of the image "
          + image + " (shards become parts of the image by copies inside the bucket)");
    }
    if (parallelParts < 1) {
      throw new IllegalArgumentException("parallel parts must be at least 1");
    }
    this.image = image.toString();
    this.staging = staging.key().endsWith("/") ? staging.key() : staging.key() + "/";
    this.settings = settings;
    this.linkMbps = linkMbps;
    this.parallelParts = parallelParts;
  }

  public ObjectUri uri() {
    return ObjectUri.parse(image, false);
  }

  private Store store() {
    return Stores.bucketOf(uri(), settings);
  }

  private String shardKey(int shard, long copy) {
    return staging + String.format(Locale.ROOT, "shard-%06d-%016x", shard, copy);
  }

  @Override
  public String location() {
    return image;
  }

  /** Staging of runs that were interrupted, in this JVM: no worker stages there again. */
  private static final java.util.Set<String> ABANDONED =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** Nothing to clear: each run stages under a prefix of its own. */
  @Override
  public void prepare() {}

  @Override
  public long writeShard(int shard, byte[] blocks, int len) {
    if (ABANDONED.contains(image + " " + staging)) {
      throw new BeamsaveException("the save was interrupted");
    }
    long copy = new java.security.SecureRandom().nextLong() & Long.MAX_VALUE;
    store().put(shardKey(shard, copy), blocks, len, "application/octet-stream",
        LinkThrottle.shared(linkMbps));
    return copy;
  }

  @Override
  public long finish(
      List<WrittenShard> shards, Function<List<ShardInfo>, Catalog> catalog, Codec codec,
      int blockSize) throws IOException {
    List<ShardInfo> infos = new ArrayList<>(shards.size());
    long pos = ImageFormat.HEADER_SIZE;
    for (WrittenShard s : shards) {
      infos.add(new ShardInfo(pos, s.storedLength(), s.rawLength(), s.blocks()));
      pos += s.storedLength();
    }
    byte[] tail = ImageWriter.tail(CatalogCodec.encode(catalog.apply(infos)), codec, blockSize,
        pos);
    long length = pos + tail.length;
    Store store = store();
    String key = uri().key();
    String uploadId = store.createMultipart(key, "application/octet-stream", Map.of());
    try {
      new Assembly(store, key, uploadId).run(shards, tail, length);
    } catch (IOException | RuntimeException e) {
      try {
        store.abort(key, uploadId);
      } catch (RuntimeException ignored) {
        // The original failure is the one to report.
      }
      // The staged shards stay for a retry of this step; discard() removes them if none comes.
      throw e;
    }
    removeStaged(store);
    long stored = store.stat(key).map(Store.Stat::size).orElse(-1L);
    if (stored != length) {
      store.delete(key);
      throw new BeamsaveException(image + ": assembled " + stored + " bytes, expected " + length);
    }
    return length;
  }

  /** One multipart upload being assembled from the staged shards. */
  private final class Assembly {
    private final Store store;
    private final String key;
    private final String uploadId;
    private final ExecutorService pool;
    /** Bounds the gathered parts held in memory while they are sent. */
    private final Semaphore inFlight = new Semaphore(parallelParts + 1);
    private final List<Future<Store.Part>> parts = new ArrayList<>();
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
    /** Whether the store makes parts by copies: unknown (null) until the first is tried. */
    private Boolean copies;

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

    void run(List<WrittenShard> shards, byte[] tail, long length) throws IOException {
      try {
        pending.write(ImageFormat.header());
        for (WrittenShard s : shards) {
          if (!(pending.size() == 0 && s.storedLength() >= MIN_PART && copy(s))) {
            pending.write(store.get(shardKey(s.shard(), s.where())));
            if (pending.size() >= MIN_PART) {
              send();
            }
          }
        }
        pending.write(tail);
        send();
        List<Store.Part> done = new ArrayList<>(parts.size());
        for (Future<Store.Part> f : parts) {
          done.add(get(f));
        }
        try {
          store.complete(key, uploadId, done);
        } catch (StoreException e) {
          // A completion whose answer was lost is retried and then finds no such upload: the
          // object, whole or not there, says whether the first attempt took effect.
          if (e.kind() != StoreException.Kind.NOT_FOUND
              || store.stat(key).map(Store.Stat::size).orElse(-1L) != length) {
            throw e;
          }
        }
      } finally {
        pool.shutdownNow();
        // A part still being sent could otherwise land after the upload is aborted.
        try {
          pool.awaitTermination(60, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    /** Makes {@code s} the next part by a copy in the store; false if the store cannot. */
    private boolean copy(WrittenShard s) {
      if (Boolean.FALSE.equals(copies)) {
        return false;
      }
      int number = parts.size() + 1;
      String from = shardKey(s.shard(), s.where());
      if (copies == null) {
        try {
          String etag = store.copyPart(key, uploadId, number, from);
          copies = true;
          parts.add(java.util.concurrent.CompletableFuture.completedFuture(
              new Store.Part(number, etag, s.storedLength())));
          return true;
        } catch (StoreException e) {
          if (e.kind() != StoreException.Kind.NOT_SUPPORTED) {
            throw e;
          }
          copies = false;
          return false;
        }
      }
      parts.add(pool.submit(
          () -> new Store.Part(number, store.copyPart(key, uploadId, number, from),
              s.storedLength())));
      return true;
    }

    /** Sends the gathered bytes as the next part. */
    private void send() {
      byte[] data = pending.toByteArray();
      pending.reset();
      int number = parts.size() + 1;
      acquire();
      parts.add(pool.submit(() -> {
        try {
          byte[] md5 = store.wantsPartMd5() ? Md5.of(data, 0, data.length) : null;
          return new Store.Part(number, store.uploadPart(key, uploadId, number, data,
              data.length, md5, LinkThrottle.shared(linkMbps)), data.length);
        } finally {
          inFlight.release();
        }
      }));
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

  private void removeStaged(Store store) {
    try {
      for (Store.Item staged : store.list(staging)) {
        store.delete(staged.key());
      }
    } catch (RuntimeException e) {
      System.err.println("beamsave: warning: cannot remove the staged shards under "
          + store.where(staging) + ": " + e.getMessage());
    }
  }

  @Override
  public void discard() {
    removeStaged(store());
  }

  @Override
  public void abandon() {
    ABANDONED.add(image + " " + staging);
    removeStaged(store());
  }

  @Override
  public String toString() {
    return image;
  }
}

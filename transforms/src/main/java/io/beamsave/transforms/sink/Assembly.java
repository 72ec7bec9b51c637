package io.beamsave.transforms.sink;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.image.ImageTail;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.ShardInfo;
import io.beamsave.transforms.sink.ImageSink.Copy;
import io.beamsave.transforms.sink.ImageSink.Kept;
import io.beamsave.transforms.sink.ImageSink.WrittenShard;
import io.beamsave.transforms.store.Md5;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.StoreException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The finishing of a {@link StoreImageSink}'s image: which copy of each shard the image holds,
 * where each shard lies, and the upload completed from them. Part 1 is shard 0's part, or, when
 * shard 0 was staged, the header with the staged shards that fit, padded to S3's smallest part;
 * the other shards' parts follow in shard order, then the remaining staged shards, the catalog
 * and the trailer, gathered into parts sent several at once. The upload completes only if the
 * image's key holds what it held when the run began, and the object made is checked: its length,
 * its run, and where the store gives multipart ETags, its parts. One per finishing, used by one
 * thread and closed when done, which ends its threads.
 */
final class Assembly implements AutoCloseable {
  private final StoreImageSink sink;
  private final Store store;
  private final String key;
  private final ExecutorService pool;
  /** Bounds the gathered parts held in memory while they are sent. */
  private final Semaphore inFlight;
  private final List<Future<Store.Part>> parts = new ArrayList<>();
  private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

  /** The finishing of {@code sink}'s image (prepared), through {@code store}. */
  Assembly(StoreImageSink sink, Store store) {
    this.sink = sink;
    this.store = store;
    this.key = sink.uri().key();
    this.inFlight = new Semaphore(sink.parallelParts() + 1);
    this.pool = Executors.newFixedThreadPool(sink.parallelParts(), r -> {
      Thread t = new Thread(r, "beamsave-assemble");
      t.setDaemon(true);
      return t;
    });
  }

  /** Makes the image as {@link StoreImageSink#finish} says; returns its length. */
  long assemble(List<WrittenShard> shards, Function<List<Kept>, Catalog> catalog, Codec codec,
      int blockSize) throws IOException {
    Map<Integer, Store.Part> sent = new HashMap<>();
    if (shards.stream().anyMatch(s -> s.copy() instanceof Copy.Part)) {
      for (Store.Part p : store.parts(key, sink.uploadId())) {
        sent.put(p.number(), p);
      }
    }
    List<WrittenShard> chosen = keep(shards, sent);
    List<WrittenShard> direct = new ArrayList<>();
    List<WrittenShard> staged = new ArrayList<>();
    for (WrittenShard s : chosen) {
      (s.copy() instanceof Copy.Part ? direct : staged).add(s);
    }

    // Where each shard lies: part 1 (shard 0's, or the header with staged shards), the other
    // shards' parts in shard order, then the remaining staged shards, the catalog and trailer.
    Map<Integer, ShardInfo> at = new TreeMap<>();
    boolean headIsShard0 = !direct.isEmpty() && direct.get(0).shard() == 0;
    byte[] header = sink.header();
    long pos = header.length;
    int inHead = 0;
    long headLength = 0;
    if (!headIsShard0 && !direct.isEmpty()) {
      while (inHead < staged.size() && pos < StoreImageSink.MIN_PART) {
        pos = place(at, staged.get(inHead++), pos);
      }
      long padded = Math.max(pos, StoreImageSink.MIN_PART);
      if (sink.key() != null && padded > pos && padded - pos < BlockSealer.FRAME_HEADER) {
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
    byte[] tail = ImageTail.encode(catalog.apply(kept).withKey(sink.key()), codec, pos);
    long length = pos + tail.length;

    int next = direct.isEmpty() ? 1 : direct.get(direct.size() - 1).shard() + 2;
    // maxShards() leaves at least 1,000 numbers for these parts.
    long chunk = Math.max(StoreImageSink.MIN_PART,
        -Math.floorDiv(-(length - tailStart), StoreImageSink.MAX_PARTS - next + 1L));
    if (headLength > 0) {
      write(header);
      for (WrittenShard s : staged.subList(0, inHead)) {
        write(sink.stagedBytes(store, s));
      }
      pad(headLength);
      send(1);
    }
    for (WrittenShard s : direct) {
      parts.add(CompletableFuture.completedFuture(sent.get(s.shard() + 1)));
    }
    if (direct.isEmpty()) {
      write(header);
    }
    for (WrittenShard s : staged.subList(inHead, staged.size())) {
      write(sink.stagedBytes(store, s));
      if (pending.size() >= chunk) {
        send(next++);
      }
    }
    write(tail);
    send(next);
    String problem = complete(length);
    if (problem != null) {
      store.delete(key);
      throw new BeamsaveException(sink.location() + ": " + problem);
    }
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
        if (s.copy() instanceof Copy.Part copy && part != null && holds(part, s, copy)) {
          pick = s;
        }
      }
      for (WrittenShard s : e.getValue()) {
        if (pick == null && s.copy() instanceof Copy.Staged) {
          pick = s;
        }
      }
      if (pick == null) {
        throw new BeamsaveException(sink.location() + ": shard " + e.getKey() + ": part "
            + (e.getKey() + 1) + " of the upload is not the copy the job kept (an attempt the"
            + " job dropped sent it last, or the store lost it); run the save again");
      }
      kept.add(pick);
    }
    return kept;
  }

  /** Whether {@code part} in the upload holds copy {@code s}: its length and its ETag. */
  private boolean holds(Store.Part part, WrittenShard s, Copy.Part copy) {
    long length = s.storedLength() + (s.shard() == 0 ? sink.header().length : 0);
    String etag = S3Store.unquote(part.etag());
    return part.size() == length
        && (etag.isEmpty() || copy.etag().isEmpty() || etag.equalsIgnoreCase(copy.etag()));
  }

  private void write(byte[] bytes) {
    pending.write(bytes, 0, bytes.length);
  }

  /**
   * Fills the gathered bytes up to {@code length}: zeros, or in an encrypted image a padding
   * frame, so that its frames can be walked from header to trailer without its key.
   */
  private void pad(long length) {
    int gap = (int) (length - pending.size());
    if (gap > 0) {
      byte[] fill = sink.key() != null ? BlockSealer.padding(gap) : new byte[gap];
      pending.write(fill, 0, gap);
    }
  }

  /** Sends the gathered bytes as part {@code number}. */
  private void send(int number) {
    byte[] data = pending.toByteArray();
    pending.reset();
    acquire();
    parts.add(pool.submit(() -> {
      try {
        byte[] md5 = store.wantsPartMd5() ? Md5.of(data, 0, data.length) : null;
        return new Store.Part(number, store.uploadPart(key, sink.uploadId(), number, data,
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
  private String complete(long length) {
    List<Store.Part> done = new ArrayList<>(parts.size());
    for (Future<Store.Part> f : parts) {
      done.add(get(f));
    }
    done.sort(Comparator.comparingInt(Store.Part::number));
    String etag = "";
    try {
      // Also where the store ignores the condition (S3Proxy): only a race this narrow is left
      // open there.
      store.checkHolds(key, sink.expect());
      etag = store.complete(key, sink.uploadId(), done, sink.expect());
    } catch (StoreException e) {
      // A completion whose answer was lost is retried and then finds no such upload, or (with
      // its condition) the object it made: the object, this run's or not, says whether the
      // first attempt took effect.
      if (e.kind() != StoreException.Kind.NOT_FOUND && e.kind() != StoreException.Kind.CHANGED
          || !sink.completedByThisRun(store)) {
        throw e;
      }
    }
    Store.Stat made = store.stat(key).orElse(null);
    if (made == null || !sink.runTag().equals(made.metadata().get(StoreImageSink.RUN_TAG))) {
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
      pool.awaitTermination(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void acquire() {
    try {
      inFlight.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("interrupted while assembling " + sink.location());
    }
  }

  private Store.Part get(Future<Store.Part> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("interrupted while assembling " + sink.location());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new BeamsaveException(sink.location() + ": " + e.getCause(), e.getCause());
    }
  }
}

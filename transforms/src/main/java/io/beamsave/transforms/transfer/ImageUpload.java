package io.beamsave.transforms.transfer;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.store.LinkThrottle;
import io.beamsave.transforms.store.Md5;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.StoreException;
import io.beamsave.transforms.store.Stores;
import io.beamsave.transforms.store.ThrottledStore;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
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
 *       KEY.beamsave-upload}); {@code resume} continues it, re-sending only parts whose MD5
 *       does not match what the store holds.
 * </ul>
 */
public final class ImageUpload {
  public static final long MIN_PART = 5L << 20;
  public static final long MAX_PART = 5L << 30;
  public static final long DEFAULT_PART = 16L << 20;
  static final int MAX_PARTS = 10_000;
  static final String META_CODEC = "beamsave-transfer-codec";
  static final String META_RAW_LENGTH = "beamsave-raw-length";
  public static final String STATE_SUFFIX = ".beamsave-upload";

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

  /**
   * The bytes to send. {@code read} returns fewer than asked only at the end.
   */
  private interface Input extends AutoCloseable {
    long size();

    int read(byte[] b, long pos, int n) throws IOException;

    @Override
    void close() throws IOException;
  }

  private final Store store;
  private final String name;
  private final ObjectUri to;
  private final Options o;
  private final LongConsumer rawProgress;

  private ImageUpload(Store store, String name, ObjectUri to, Options o, LongConsumer progress) {
    this.store = store;
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
  public static Result upload(
      Store store, Path image, ObjectUri to, Options options, LongConsumer progress) {
    ImageUpload u = new ImageUpload(store, image.getFileName().toString(), to, options, progress);
    Input in;
    try {
      in = fileInput(image);
    } catch (NoSuchFileException e) {
      throw new BeamsaveException(image + ": no such image");
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read", image, e);
    }
    return u.run(in, image.toString());
  }

  /** Where the state of an upload in progress to {@code to} is kept. */
  public static ObjectUri stateObject(ObjectUri to) {
    return new ObjectUri(to.bucket(), to.key() + STATE_SUFFIX);
  }

  private static Input fileInput(Path image) throws IOException {
    FileChannel ch = FileChannel.open(image, StandardOpenOption.READ);
    long size = ch.size();
    return new Input() {
      @Override
      public long size() {
        return size;
      }

      @Override
      public int read(byte[] b, long pos, int n) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(b, 0, n);
        while (buf.hasRemaining()) {
          if (ch.read(buf, pos + buf.position()) < 0) {
            throw new IOException("image shrank while it was being uploaded");
          }
        }
        return n;
      }

      @Override
      public void close() throws IOException {
        ch.close();
      }
    };
  }

  private Result run(Input in, String where) {
    long start = System.nanoTime();
    try (in) {
      long size = in.size();
      store.check(to.key());
      // S3 allows 10,000 parts: a huge image gets larger parts rather than failing.
      long chunk = Math.max(o.partSize(), (size + MAX_PARTS - 1) / MAX_PARTS);
      Map<Integer, Store.Part> existing = new HashMap<>();
      Begun begun = begin(size, chunk, existing);
      String uploadId = begun.uploadId();
      boolean resumed = begun.resumed();
      expect = begun.expect();
      try {
        Sent sent = send(in, chunk, uploadId, existing);
        finish(uploadId, sent);
        store.delete(stateObject(to).key());
        return new Result(
            to, o.codec(), sent.raw, sent.stored, sent.parts.size(), sent.reused, resumed,
            (System.nanoTime() - start) / 1e9);
      } catch (RuntimeException | Error e) {
        abortQuietly(uploadId);
        throw e;
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read", Path.of(where), e);
    }
  }

  /**
   * The upload to send parts to, whether it is an interrupted one being continued, and what the
   * key held when it began ({@link Store#ABSENT}, or
   * the ETag of the object it replaces; null from a state an earlier version wrote).
   */
  private record Begun(String uploadId, boolean resumed, String expect) {}

  /** What the key must still hold for the upload to complete: see {@link Begun#expect}. */
  private String expect;

  private Begun begin(long size, long chunk, Map<Integer, Store.Part> existing) {
    ObjectUri stateUri = stateObject(to);
    Properties state = readState(stateUri);
    if (state != null && o.resume()) {
      String id = state.getProperty("uploadId");
      String codec = state.getProperty("codec");
      long stateChunk = Long.parseLong(state.getProperty("partSize", "0"));
      long stateSize = Long.parseLong(state.getProperty("imageSize", "-1"));
      if (!o.codec().spec().equals(codec) || stateChunk != chunk) {
        throw new BeamsaveException(
            to + ": the interrupted upload used --transfer-codec " + codec + " and --part-size "
                + stateChunk + "; resume with the same options, or upload again without --resume");
      }
      if (stateSize < 0) {
        // Left by an earlier version, which uploaded images while they were being written.
        throw new BeamsaveException(
            to + ": the interrupted upload was sent while its image was being written and cannot"
                + " be resumed; upload again without --resume");
      }
      if (stateSize != size) {
        throw new BeamsaveException(
            to + ": the interrupted upload was of another image (" + stateSize + " bytes, this one "
                + "has " + size + "); upload again without --resume");
      }
      // The state names the upload; its parts, not a listing of all uploads, say whether it is
      // still there (listings of uploads are not reliable on every S3-compatible server).
      List<Store.Part> parts = partsIfInProgress(id);
      if (parts != null) {
        for (Store.Part p : parts) {
          existing.put(p.number(), p);
        }
        return new Begun(id, true, state.getProperty("expect"));
      }
    }
    if (state != null && !o.resume()) {
      // A fresh upload replaces an interrupted one: drop its parts rather than orphan them.
      abortQuietly(state.getProperty("uploadId"));
    }
    Map<String, String> meta = new HashMap<>();
    meta.put(META_CODEC, o.codec().spec());
    meta.put(META_RAW_LENGTH, Long.toString(size));
    String there = store.stat(to.key()).map(Store.Stat::etag).orElse(Store.ABSENT);
    String id = store.createMultipart(to.key(), o.codec().contentType(), meta);
    Properties p = new Properties();
    p.setProperty("uploadId", id);
    p.setProperty("expect", there);
    p.setProperty("codec", o.codec().spec());
    p.setProperty("partSize", Long.toString(chunk));
    p.setProperty("imageSize", Long.toString(size));
    p.setProperty("image", name);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      p.store(out, "beamsave upload in progress; removed when it completes");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    try {
      byte[] text = out.toByteArray();
      store.put(stateUri.key(), text, text.length, "text/plain");
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

  private Properties readState(ObjectUri stateUri) {
    if (store.stat(stateUri.key()).isEmpty()) {
      return null;
    }
    Properties p = new Properties();
    try {
      p.load(new ByteArrayInputStream(store.get(stateUri.key())));
    } catch (IOException e) {
      return null;
    }
    return p.getProperty("uploadId") == null ? null : p;
  }

  /** What was sent: parts in order, their MD5s (filled in by the part threads), the length. */
  private static final class Sent {
    final List<Store.Part> parts = new ArrayList<>();
    final List<byte[]> md5s = new ArrayList<>();
    long stored;
    long raw;
    int reused;
  }

  /**
   * Reads the image in chunks, encodes chunks in parallel, gathers encoded chunks (in order)
   * into parts of at least 5 MiB, and uploads parts in parallel; at most a few parts' worth of
   * bytes are in memory at once.
   */
  private Sent send(Input in, long chunk, String uploadId, Map<Integer, Store.Part> existing)
      throws IOException {
    int parallel = o.parallelParts();
    Store link = ThrottledStore.over(store, LinkThrottle.of(o.linkMbps()));
    ExecutorService encoders = Executors.newFixedThreadPool(parallel, daemon("beamsave-encode"));
    ExecutorService uploaders = Executors.newFixedThreadPool(parallel, daemon("beamsave-upload"));
    // Bounds memory: raw chunks being read or encoded, and parts being uploaded.
    Semaphore chunks = new Semaphore(2 * parallel);
    Semaphore inFlight = new Semaphore(parallel + 1);
    Sent sent = new Sent();
    Deque<Future<byte[]>> encoding = new ArrayDeque<>();
    Deque<Long> encodingRaw = new ArrayDeque<>();
    List<Future<Store.Part>> uploads = new ArrayList<>();
    PartBuffer part = new PartBuffer();
    try {
      long pos = 0;
      boolean ended = false;
      long size = in.size();
      while (!ended || !encoding.isEmpty()) {
        // Encoded chunks go to the uploaders before the next read.
        boolean encodedReady = !encoding.isEmpty() && encoding.peek().isDone();
        if (!ended && encoding.size() < parallel && !encodedReady) {
          long want = Math.min(chunk, size - pos);
          if (want == 0) {
            ended = true;
            continue;
          }
          acquire(chunks);
          byte[] bytes = new byte[(int) want];
          int n = in.read(bytes, pos, bytes.length);
          pos += n;
          ended = pos == size;
          encoding.add(o.codec().isNone() ? done(bytes) : encoders.submit(() -> o.codec().encode(bytes, n)));
          encodingRaw.add((long) n);
          continue;
        }
        byte[] encoded = get(encoding.poll());
        chunks.release();
        part.add(encoded, encodingRaw.poll());
        if (part.size() >= MIN_PART) {
          acquire(inFlight);
          uploads.add(submitPart(uploaders, uploadId, part, sent, existing, link, inFlight));
          part = new PartBuffer();
        }
        for (Future<Store.Part> f : uploads) {
          if (f.isDone()) {
            get(f);
          }
        }
      }
      if (part.size() > 0 || uploads.isEmpty()) {
        acquire(inFlight);
        uploads.add(submitPart(uploaders, uploadId, part, sent, existing, link, inFlight));
      }
      for (Future<Store.Part> f : uploads) {
        sent.parts.add(get(f));
      }
      sent.raw = pos;
      return sent;
    } finally {
      encoders.shutdownNow();
      uploaders.shutdownNow();
      // A part still in flight could otherwise land after the abort and linger.
      awaitQuietly(uploaders);
    }
  }

  static void awaitQuietly(ExecutorService pool) {
    try {
      pool.awaitTermination(60, java.util.concurrent.TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Encoded chunks gathered into one part. */
  private static final class PartBuffer {
    final List<byte[]> pieces = new ArrayList<>();
    long raw;
    int size;

    void add(byte[] encoded, long rawLength) {
      pieces.add(encoded);
      size += encoded.length;
      raw += rawLength;
    }

    int size() {
      return size;
    }

    byte[] bytes() {
      if (pieces.size() == 1) {
        return pieces.get(0);
      }
      ByteBuffer b = ByteBuffer.allocate(size);
      pieces.forEach(b::put);
      return b.array();
    }
  }

  private Future<Store.Part> submitPart(
      ExecutorService uploaders, String uploadId, PartBuffer part, Sent sent,
      Map<Integer, Store.Part> existing, Store link, Semaphore inFlight) {
    int number = sent.md5s.size() + 1;
    byte[] data = part.bytes();
    int len = part.size();
    long raw = part.raw;
    sent.md5s.add(null);
    sent.stored += len;
    Store.Part stored = existing.get(number);
    boolean signed = !store.wantsPartMd5();
    // Hashing happens on the part threads, in parallel: the reading thread only reads.
    return uploaders.submit(
        () -> {
          try {
            boolean maybeStored = stored != null && stored.size() == len;
            byte[] md5 = signed && !maybeStored ? null : Md5.of(data, 0, len);
            synchronized (sent) {
              sent.md5s.set(number - 1, md5);
            }
            String etag;
            if (maybeStored && S3Store.unquote(stored.etag()).equalsIgnoreCase(Md5.hex(md5))) {
              synchronized (sent) {
                sent.reused++;
              }
              etag = stored.etag();
            } else {
              etag = link.uploadPart(to.key(), uploadId, number, data, len, signed ? null : md5);
            }
            rawProgress.accept(raw);
            return new Store.Part(number, etag, len);
          } finally {
            inFlight.release();
          }
        });
  }

  /**
   * Completes the upload and checks the object is what was sent: its length and, in the
   * multipart form of its ETag, the number of parts and (where the parts' MD5s are known) the
   * MD5 of their MD5s. Each part's bytes were checked by the store on arrival, against its signed
   * SHA-256 or its Content-MD5.
   */
  private void finish(String uploadId, Sent sent) {
    boolean allMd5 = sent.md5s.stream().allMatch(java.util.Objects::nonNull);
    String expectedMultipart = allMd5 ? Md5.multipartEtag(sent.md5s) : null;
    String partCount = "-" + sent.md5s.size();
    String etag;
    try {
      // Where the server ignores the condition, this look leaves only a narrow race.
      store.checkHolds(to.key(), expect);
      etag = store.complete(to.key(), uploadId, sent.parts, expect);
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
    if (head.size() != sent.stored) {
      problem = "stored " + head.size() + " bytes, sent " + sent.stored;
    } else {
      for (String tag : new String[] {etag, head.etag()}) {
        if (!tag.contains("-")) {
          continue;
        }
        if (!tag.endsWith(partCount)) {
          problem = "ETag " + tag + " counts other parts than the " + sent.md5s.size() + " sent";
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

  private static void acquire(Semaphore s) {
    try {
      s.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("upload interrupted");
    }
  }

  static <T> T get(Future<T> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("transfer interrupted");
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof RuntimeException r) {
        throw r;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new BeamsaveException(c.toString(), c);
    }
  }

  static <T> Future<T> done(T value) {
    return java.util.concurrent.CompletableFuture.completedFuture(value);
  }

  static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }
}

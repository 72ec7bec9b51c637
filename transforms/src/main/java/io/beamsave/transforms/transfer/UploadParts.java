package io.beamsave.transforms.transfer;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.store.Md5;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.function.LongConsumer;

/**
 * Sends the parts of one upload: reads the image in chunks, encodes them in parallel with the
 * transfer codec, gathers the encoded chunks (in order) into parts of at least 5 MiB, and sends
 * the parts in parallel, each checked by the store against its MD5 or its signed hash, keeping a
 * part a resumed upload already holds intact instead of sending it again. At most a few parts'
 * worth of bytes are in memory at once. One per upload, driven by one thread; its part threads
 * record what they sent under its lock.
 */
final class UploadParts {
  /**
   * What was sent: the parts in order, each one's MD5 (null where the store checked a signed
   * part by its hash and none was computed), the bytes stored and read, and how many parts were
   * kept from the interrupted upload.
   */
  record Sent(List<Store.Part> parts, List<byte[]> md5s, long stored, long raw, int reused) {}

  private final Store store;
  private final String key;
  private final String uploadId;
  private final ImageUpload.Options options;
  /** The parts the store already holds, by number: those of an upload being resumed. */
  private final Map<Integer, Store.Part> existing;
  private final LongConsumer progress;
  private final List<byte[]> md5s = new ArrayList<>();
  private long stored;
  private int reused;

  /**
   * Parts of upload {@code uploadId} to {@code key} in {@code store} (which carries them at the
   * link's speed, if any), sent as {@code options} say; {@code progress} is told the raw bytes
   * of each part once it is stored, from the part threads.
   */
  UploadParts(Store store, String key, String uploadId, ImageUpload.Options options,
      Map<Integer, Store.Part> existing, LongConsumer progress) {
    this.store = store;
    this.key = key;
    this.uploadId = uploadId;
    this.options = options;
    this.existing = existing;
    this.progress = progress;
  }

  /** Sends the {@code size} bytes of {@code in} in chunks of {@code chunk}. */
  Sent send(FileChannel in, long size, long chunk) throws IOException {
    int parallel = options.parallelParts();
    TransferCodec codec = options.codec();
    ExecutorService encoders =
        Executors.newFixedThreadPool(parallel, TransferThreads.daemon("beamsave-encode"));
    ExecutorService uploaders =
        Executors.newFixedThreadPool(parallel, TransferThreads.daemon("beamsave-upload"));
    // Bounds memory: raw chunks being read or encoded, and parts being uploaded.
    Semaphore chunks = new Semaphore(2 * parallel);
    Semaphore inFlight = new Semaphore(parallel + 1);
    Deque<Future<byte[]>> encoding = new ArrayDeque<>();
    Deque<Long> encodingRaw = new ArrayDeque<>();
    List<Future<Store.Part>> uploads = new ArrayList<>();
    PartBuffer part = new PartBuffer();
    try {
      long pos = 0;
      boolean ended = false;
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
          int n = read(in, bytes, pos);
          pos += n;
          ended = pos == size;
          encoding.add(codec.isNone() ? TransferThreads.done(bytes)
              : encoders.submit(() -> codec.encode(bytes, n)));
          encodingRaw.add((long) n);
          continue;
        }
        byte[] encoded = TransferThreads.get(encoding.poll());
        chunks.release();
        part.add(encoded, encodingRaw.poll());
        if (part.size() >= ImageUpload.MIN_PART) {
          acquire(inFlight);
          uploads.add(submit(uploaders, part, inFlight));
          part = new PartBuffer();
        }
        for (Future<Store.Part> f : uploads) {
          if (f.isDone()) {
            TransferThreads.get(f);
          }
        }
      }
      if (part.size() > 0 || uploads.isEmpty()) {
        acquire(inFlight);
        uploads.add(submit(uploaders, part, inFlight));
      }
      List<Store.Part> parts = new ArrayList<>(uploads.size());
      for (Future<Store.Part> f : uploads) {
        parts.add(TransferThreads.get(f));
      }
      synchronized (this) {
        return new Sent(parts, new ArrayList<>(md5s), stored, pos, reused);
      }
    } finally {
      encoders.shutdownNow();
      uploaders.shutdownNow();
      // A part still in flight could otherwise land after the abort and linger.
      TransferThreads.awaitQuietly(uploaders);
    }
  }

  /** Reads {@code b.length} bytes of {@code in} from {@code pos}: all of them, or fails. */
  private static int read(FileChannel in, byte[] b, long pos) throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(b);
    while (buf.hasRemaining()) {
      if (in.read(buf, pos + buf.position()) < 0) {
        throw new IOException("image shrank while it was being uploaded");
      }
    }
    return b.length;
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

  /** Sends {@code part} as the next part, on a part thread; frees a place in {@code inFlight}. */
  private Future<Store.Part> submit(ExecutorService uploaders, PartBuffer part,
      Semaphore inFlight) {
    byte[] data = part.bytes();
    int len = part.size();
    long raw = part.raw;
    int number;
    synchronized (this) {
      md5s.add(null);
      number = md5s.size();
      stored += len;
    }
    Store.Part held = existing.get(number);
    boolean signed = !store.wantsPartMd5();
    // Hashing happens on the part threads, in parallel: the reading thread only reads.
    return uploaders.submit(
        () -> {
          try {
            boolean maybeHeld = held != null && held.size() == len;
            byte[] md5 = signed && !maybeHeld ? null : Md5.of(data, 0, len);
            synchronized (this) {
              md5s.set(number - 1, md5);
            }
            String etag;
            if (maybeHeld && S3Store.unquote(held.etag()).equalsIgnoreCase(Md5.hex(md5))) {
              synchronized (this) {
                reused++;
              }
              etag = held.etag();
            } else {
              etag = store.uploadPart(key, uploadId, number, data, len, signed ? null : md5);
            }
            progress.accept(raw);
            return new Store.Part(number, etag, len);
          } finally {
            inFlight.release();
          }
        });
  }

  private static void acquire(Semaphore s) {
    try {
      s.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("upload interrupted");
    }
  }
}

package io.beamsave.transforms.transfer;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.fs.Rename;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.Md5;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.Stores;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongConsumer;

/**
 * Downloads an object to an image file with parallel ranged GETs, undoing transfer compression.
 * The file appears at its name only once complete and checked: its length, its MD5 where the
 * object's ETag is one, and the checksums of every gzip member or zstd frame.
 */
public final class ImageDownload {
  static final int RANGE = 16 << 20;

  /** What a download did. */
  public record Result(Path image, TransferCodec codec, long storedBytes, long rawBytes, double seconds) {}

  private ImageDownload() {}

  /** The transfer codec recorded in an object's metadata ({@code none} when absent). */
  public static TransferCodec transferCodec(Store.Stat head) {
    String spec = head.metadata().get(ImageUpload.META_CODEC);
    if (spec == null) {
      return TransferCodec.NONE;
    }
    try {
      return TransferCodec.parse(spec);
    } catch (IllegalArgumentException e) {
      throw new BeamsaveException("object stored with an unknown transfer codec '" + spec + "'");
    }
  }

  /**
   * Downloads {@code from}, in {@code store} (its bucket's, see {@link Stores#bucketOf}), to
   * {@code image} (which must not exist).
   *
   * @param progress told the stored bytes of each range once written (from worker threads)
   */
  /** Downloads the object {@code from} (with {@code s3}'s settings) as {@link #download} does. */
  public static Result download(Location from, S3Settings s3, Path image, int parallel,
      LongConsumer progress) {
    if (!(from instanceof Location.InStore object)) {
      throw new BeamsaveException(from + ": a download comes from object storage, s3://BUCKET/KEY");
    }
    return download(from.placed(s3).store(), object.uri(), image, parallel, progress);
  }

  public static Result download(
      Store store, ObjectUri from, Path image, int parallel, LongConsumer progress) {
    long start = System.nanoTime();
    LongConsumer tell = progress == null ? n -> {} : progress;
    Store.Stat head =
        store.stat(from.key()).orElseThrow(() -> new BeamsaveException(from + ": no such object"));
    TransferCodec codec = transferCodec(head);
    long stored = head.size();
    Path partial = image.resolveSibling(image.getFileName() + ".partial");
    Path fetched = codec.isNone() ? partial : image.resolveSibling(image.getFileName() + ".download");
    try {
      fetch(store, from, fetched, stored, parallel, tell);
      String etag = head.etag();
      if (Md5.isPlainMd5(etag)) {
        String md5 = md5(fetched);
        if (!md5.equalsIgnoreCase(etag)) {
          throw new BeamsaveException(
              from + ": downloaded bytes have MD5 " + md5 + ", the store says " + etag);
        }
      }
      long raw = stored;
      if (!codec.isNone()) {
        raw = decode(codec, fetched, partial, from);
        Removal.file(fetched);
        String expected = head.metadata().get(ImageUpload.META_RAW_LENGTH);
        if (expected != null && Long.parseLong(expected) != raw) {
          throw new BeamsaveException(
              from + ": decoded " + raw + " bytes, the object was uploaded from " + expected);
        }
      }
      try (FileChannel ch = FileChannel.open(partial, StandardOpenOption.WRITE,
          java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        ch.force(true);
      }
      Rename.replacing(partial, image);
      return new Result(image, codec, stored, raw, (System.nanoTime() - start) / 1e9);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot write", image, e);
    } finally {
      deleteQuietly(partial);
      deleteQuietly(fetched);
    }
  }

  private static void fetch(
      Store store, ObjectUri from, Path file, long size, int parallel, LongConsumer tell)
      throws IOException {
    ExecutorService pool =
        Executors.newFixedThreadPool(parallel, TransferThreads.daemon("beamsave-download"));
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      List<Future<Void>> ranges = new ArrayList<>();
      for (long pos = 0; pos < size; pos += RANGE) {
        long at = pos;
        int len = (int) Math.min(RANGE, size - pos);
        ranges.add(
            pool.submit(
                () -> {
                  byte[] b = new byte[len];
                  store.read(from.key(), at, b, 0, len);
                  ByteBuffer buf = ByteBuffer.wrap(b);
                  while (buf.hasRemaining()) {
                    ch.write(buf, at + buf.position());
                  }
                  tell.accept(len);
                  return null;
                }));
      }
      for (Future<Void> f : ranges) {
        TransferThreads.get(f);
      }
    } finally {
      pool.shutdownNow();
      TransferThreads.awaitQuietly(pool);
    }
  }

  private static long decode(TransferCodec codec, Path stored, Path out, ObjectUri from)
      throws IOException {
    try (InputStream in = codec.decode(Files.newInputStream(stored));
        OutputStream o = Channels.newOutputStream(
            FileChannel.open(out, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE))) {
      return in.transferTo(o);
    } catch (java.util.zip.ZipException | com.github.luben.zstd.ZstdIOException e) {
      throw new BeamsaveException(from + ": stored object is damaged (" + codec + ": " + e.getMessage() + ")");
    } catch (java.io.EOFException e) {
      throw new BeamsaveException(from + ": stored object is truncated (" + codec + ")");
    }
  }

  private static String md5(Path file) throws IOException {
    MessageDigest d = Md5.digest();
    byte[] buf = new byte[1 << 20];
    try (InputStream in = Files.newInputStream(file)) {
      for (int n; (n = in.read(buf)) > 0; ) {
        d.update(buf, 0, n);
      }
    }
    return Md5.hex(d.digest());
  }

  private static void deleteQuietly(Path p) {
    try {
      Removal.file(p);
    } catch (IOException ignored) {
      // Best effort; the error that matters is already on its way.
    }
  }
}

package io.beamsave.transforms.image;

import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.fs.Rename;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogWriter;
import io.beamsave.transforms.image.catalog.ShardInfo;
import io.beamsave.transforms.run.RunState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Writes an image in two steps. Workers {@link #appendShard append} their compressed shards to
 * {@code <image>.partial} as they finish, in any order, so each byte is written once and the
 * copying overlaps with other workers' compression; then one {@link #open writer} adds the
 * catalog and the trailer, forces the file to disk and renames it to its final name. A
 * complete-looking image is therefore always complete.
 */
public final class ImageWriter implements AutoCloseable {
  /**
   * Flushes appended shards to disk in the background while workers go on compressing, so the
   * final force in {@link #finish} has little left to write (it took ~0.7 s for a 900 MB image
   * when everything waited for it). Best effort: {@link #finish} still forces the whole file.
   */
  private static final ExecutorService FLUSHER =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "beamsave-image-flush");
            t.setDaemon(true);
            return t;
          });

  /**
   * What a run's writers of one partial image share in this JVM: one monitor (a FileLock guards
   * other processes, not other threads), whether the run was stopped (no worker of it may create
   * or extend the partial image again, while a later run of the same image may), and whether a
   * flush is pending.
   */
  private static RunState state(Path partial, String run) {
    return RunState.of(run + "\n" + partial);
  }

  private static Object appending(Path partial, String run) {
    return state(partial, run).monitor("append");
  }

  private static boolean stopped(Path partial, String run) {
    return state(partial, run).stopped() != null;
  }

  private final Path target;
  private final Path partial;
  private final String run;
  private final FileChannel channel;
  private final int headerLength;
  private boolean done;

  private ImageWriter(Path target, byte[] header, String run) throws IOException {
    this.target = target;
    this.partial = partialPath(target);
    this.run = run;
    this.headerLength = header.length;
    Path key = partial.toAbsolutePath().normalize();
    synchronized (appending(key, run)) {
      if (stopped(key, run)) {
        throw new IOException("the save was stopped");
      }
      this.channel = openPartial(partial, true);
    }
    if (channel.size() == 0) {
      writeFully(channel, ByteBuffer.wrap(header), 0);
    }
    channel.position(channel.size());
  }

  /**
   * Opens the partial image of {@code target} to finish it, creating it (header only) when no
   * shard was appended.
   */
  public static ImageWriter open(Path target) throws IOException {
    return open(target, ImageFormat.header());
  }

  /** Like {@link #open(Path)}, for an image that begins with {@code header}. */
  public static ImageWriter open(Path target, byte[] header) throws IOException {
    return open(target, header, "");
  }

  /** Like {@link #open(Path, byte[])}, for run {@code run} (see {@link #abandon}). */
  public static ImageWriter open(Path target, byte[] header, String run) throws IOException {
    return new ImageWriter(target, header, run);
  }

  /**
   * Opens a partial image to write, creating it if {@code create}: never through a symbolic
   * link, and never a file of several names. Whoever may write beside the images could
   * otherwise put a link by the partial's name and have a save write into the file it leads to.
   */
  static FileChannel openPartial(Path partial, boolean create) throws IOException {
    FileChannel ch = create
        ? FileChannel.open(partial, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            java.nio.file.LinkOption.NOFOLLOW_LINKS)
        : FileChannel.open(partial, StandardOpenOption.WRITE,
            java.nio.file.LinkOption.NOFOLLOW_LINKS);
    Object links = Files.getAttribute(partial, "unix:nlink",
        java.nio.file.LinkOption.NOFOLLOW_LINKS);
    if (!Integer.valueOf(1).equals(links)) {
      ch.close();
      throw new IOException(partial + ": has " + links + " names; not a partial image this"
          + " save made");
    }
    return ch;
  }

  public static Path partialPath(Path target) {
    return target.resolveSibling(target.getFileName() + ImageFormat.PARTIAL_SUFFIX);
  }

  /**
   * Appends one shard's blocks ({@code blocks[0, len)}) to the partial image of {@code target},
   * creating it with its header first if needed. Safe to call from several threads and
   * processes on one host at once.
   *
   * @return the offset of the shard in the image
   */
  public static long appendShard(Path target, byte[] blocks, int len) throws IOException {
    return appendShard(target, ImageFormat.header(), blocks, len);
  }

  /** Like {@link #appendShard(Path, byte[], int)}, for an image that begins with {@code header}. */
  @SuppressWarnings("try") // the lock is held for the try block's extent, never read
  public static long appendShard(Path target, byte[] header, byte[] blocks, int len)
      throws IOException {
    return appendShard(target, "", header, blocks, len);
  }

  /** Like {@link #appendShard(Path, byte[], byte[], int)}, for run {@code run}. */
  public static long appendShard(Path target, String run, byte[] header, byte[] blocks, int len)
      throws IOException {
    Path partial = partialPath(target).toAbsolutePath().normalize();
    synchronized (appending(partial, run)) {
      if (stopped(partial, run)) {
        throw new IOException("the save was interrupted");
      }
      try (FileChannel ch = openPartial(partial, true);
          FileLock lock = ch.lock()) {
        long end = ch.size();
        if (end == 0) {
          writeFully(ch, ByteBuffer.wrap(header), 0);
          end = header.length;
        }
        // In 1 MiB slices: the JDK copies heap buffers through a temporary direct buffer of the
        // write's size, and a 64 MiB one per shard costs more than the write.
        for (int off = 0; off < len; off += 1 << 20) {
          writeFully(ch, ByteBuffer.wrap(blocks, off, Math.min(1 << 20, len - off)), end + off);
        }
        flushSoon(partial, run);
        return end;
      }
    }
  }

  /**
   * Removes the partial image of {@code target} for good, for run {@code run}, which failed or
   * was interrupted: its workers still running cannot append to it again, which would create
   * it anew.
   */
  public static void abandon(Path target, String run) throws IOException {
    Path partial = partialPath(target).toAbsolutePath().normalize();
    synchronized (appending(partial, run)) {
      state(partial, run).stop("the save was stopped", true, 0);
      Removal.file(partial);
    }
  }

  /** Whether run {@code run} of {@code target} was abandoned in this process. */
  public static boolean abandoned(Path target, String run) {
    return stopped(partialPath(target).toAbsolutePath().normalize(), run);
  }

  private static void flushSoon(Path partial, String run) {
    java.util.concurrent.atomic.AtomicInteger pending = state(partial, run).inFlight("flush");
    if (!pending.compareAndSet(0, 1)) {
      return;
    }
    FLUSHER.execute(
        () -> {
          pending.set(0);
          FileChannel ch = null;
          try {
            ch = openPartial(partial, false);
            ch.force(false);
          } catch (IOException gone) {
            // The run failed and removed the file, or finish() renamed it: nothing to flush.
          } finally {
            closeBetweenAppends(partial, run, ch);
          }
        });
  }

  /**
   * Closes a channel to a partial image only while no thread of this process appends to it.
   * Closing any channel to a file drops every lock the process holds on that file (POSIX record
   * locks), and a dropped lock let another process's worker append over a shard still being
   * written: two TaskManagers on one host produced an image with overlapping shards.
   */
  private static void closeBetweenAppends(Path partial, String run, FileChannel ch) {
    if (ch == null) {
      return;
    }
    synchronized (appending(partial, run)) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // Nothing was written through it that force() has not already handled.
      }
    }
  }

  /**
   * Writes the catalog and the trailer after the appended shards, forces the file to disk and
   * renames it to its final name. The catalog's shard table must describe
   * the appended shards.
   *
   * @return the image's length
   */
  public long finish(Catalog catalog, Codec codec) throws IOException {
    checkShardsTile(catalog.shards(), end());
    return finish(ImageTail.encode(catalog, codec, end()));
  }

  private long end() throws IOException {
    return channel.position();
  }

  /**
   * Checks that the shards, in offset order, lie between the header and {@code end} without
   * overlapping: any other layout means appends went wrong, and the image would not read back.
   * Gaps are allowed: a task that ran twice (a worker retried, a job restarted after a lost
   * TaskManager) appended its shard twice, and the catalog names the copy whose result the
   * job kept; the other is dead space, never read.
   */
  private void checkShardsTile(List<ShardInfo> shards, long end) throws IOException {
    List<ShardInfo> byOffset = new ArrayList<>(shards);
    byOffset.sort(Comparator.comparingLong(ShardInfo::imageOffset));
    long expected = headerLength;
    for (ShardInfo s : byOffset) {
      if (s.imageOffset() < expected) {
        throw new IOException(where() + ": a shard at " + s.imageOffset()
            + " overlaps the one before it (which ends at " + expected + "); the shards were"
            + " not appended one after another");
      }
      expected = s.imageOffset() + s.storedLength();
    }
    if (expected > end) {
      throw new IOException(where() + ": holds " + end + " bytes, its shards end at "
          + expected);
    }
  }

  /**
   * Writes a version 3 image whose catalog is {@code raw}, one piece, as {@link
   * CatalogWriter#encode} lays it out: tests use it to write images whose catalog a correct
   * writer would never produce, and images as older versions wrote them.
   */
  public long finish(byte[] raw, Codec codec, int blockSize) throws IOException {
    if (headerLength != ImageFormat.HEADER_SIZE) {
      throw new IllegalStateException("a version 3 image is not encrypted");
    }
    byte[] header = ImageFormat.header();
    header[9] = (byte) ImageFormat.WHOLE_CATALOG_VERSION;
    writeFully(channel, ByteBuffer.wrap(header), 0);
    return finish(ImageTail.encodeWhole(raw, codec, blockSize, end(), null,
        ImageFormat.WHOLE_CATALOG_VERSION));
  }

  /** Writes {@code tail} (catalog and trailer) at the end, then renames the image into place. */
  private long finish(byte[] tail) throws IOException {
    long catalogOffset = end();
    writeFully(channel, ByteBuffer.wrap(tail), catalogOffset);
    channel.force(true);
    Path monitor = partial.toAbsolutePath().normalize();
    // Under the monitor abandon() takes: a save stopped meanwhile leaves no image, and one
    // renamed into place is whole.
    synchronized (appending(monitor, run)) {
      if (stopped(monitor, run)) {
        throw new IOException("the save was stopped");
      }
      closeBetweenAppends(monitor, run, channel);
      Rename.replacing(partial, target);
    }
    done = true;
    return catalogOffset + tail.length;
  }

  private String where() {
    return partial.getFileName().toString();
  }

  private static void writeFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
    while (b.hasRemaining()) {
      pos += ch.write(b, pos);
    }
  }

  /** Closes and, unless {@link #finish} succeeded, deletes the partial file. */
  @Override
  public void close() throws IOException {
    if (done) {
      return;
    }
    channel.close();
    Removal.file(partial);
  }
}

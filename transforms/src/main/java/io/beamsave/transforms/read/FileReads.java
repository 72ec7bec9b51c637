package io.beamsave.transforms.read;

import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.ExtentDigest;
import io.beamsave.transforms.image.catalog.ShardInfo;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the bytes of single files of an image chain: whole and in order ({@link #copy}, what
 * {@code cat} writes), or at any offset ({@link #read}, what a mount serves), fetching only
 * the blocks that hold them. Decoded blocks are kept in a cache of at most {@code cacheBytes},
 * shared by every thread; each thread that reads borrows a reader of its own (a source per
 * image, a decoder), so reads from object storage run side by side.
 *
 * <p>Every block is checked as it is decoded (checksum or seal, raw length). An extent's digest
 * is checked by {@link #copy}, and by {@link #read} for the reads of a {@link Cursor} that go
 * through an extent from its first byte to its last in order, as {@code cat} or {@code cp} of a
 * mounted file do: a file read through whole is read verified.
 */
public final class FileReads implements AutoCloseable {
  private final ImageChain chain;
  private final S3Settings s3;
  private final long cacheBytes;
  private final ArrayDeque<Reader> idle = new ArrayDeque<>();
  private final List<Reader> all = new ArrayList<>();
  private final LinkedHashMap<BlockKey, byte[]> cache = new LinkedHashMap<>(64, 0.75f, true);
  private long cached;

  /** A block of a shard of a member of the chain. */
  private record BlockKey(int image, int shard, int block) {}

  /** What one thread reads with: the chain's sources, a shard reader per block size. */
  private final class Reader {
    final ChainReaders readers = new ChainReaders(s3, chain.tags(), src -> src);
  }

  public FileReads(ImageChain chain, S3Settings s3, long cacheBytes) {
    this.chain = chain;
    this.s3 = s3;
    this.cacheBytes = cacheBytes;
  }

  /**
   * Opens the chain's top image for a first reader now, so that the first file read asks the
   * store for its blocks alone.
   */
  public void prepare() throws IOException {
    Reader r = borrow();
    try {
      r.readers.source(chain.top().location());
    } finally {
      giveBack(r);
    }
  }

  /**
   * Writes the bytes of the file {@code e} (a {@link Entry#isFile() file}) to {@code out}, in
   * order, each extent's digest checked as its last byte is read: bytes already written when a
   * digest does not match are followed by the error.
   */
  public void copy(Entry e, OutputStream out) throws IOException {
    Reader r = borrow();
    try {
      long fileOffset = 0;
      for (Extent x : e.extents()) {
        ImageChain.Member m = member(e, x);
        ShardInfo shard = shardOf(e, m, x);
        ShardReader.FileExtent piece = new ShardReader.FileExtent(e.path(), fileOffset, x, 0);
        r.readers.reader(m.catalog().blockSize()).read(r.readers.source(m.location()),
            m.location(), m.catalog().key(), x.shard(), shard, List.of(piece),
            (p, off, buf, o, len, zero) -> out.write(buf, o, len));
        fileOffset += x.length();
      }
    } finally {
      giveBack(r);
    }
  }

  /**
   * Where a run of reads of one open file stands: the extent it verifies as it goes, if the
   * reads so far went through it in order from its first byte. Used by one thread at a time.
   */
  public static final class Cursor {
    private long next = -1;
    private int extent = -1;
    private long inExtent;
    private final ExtentDigest digest = new ExtentDigest();

    /** Frees the digest's native state. */
    public void close() {
      digest.close();
    }
  }

  /**
   * Reads up to {@code len} bytes of the file {@code e} at {@code offset} into {@code buf} and
   * returns how many (0 at or past its end).
   */
  public int read(Entry e, long offset, byte[] buf, int off, int len, Cursor cursor)
      throws IOException {
    if (offset < 0 || offset >= e.size() || len <= 0) {
      return 0;
    }
    int want = (int) Math.min(len, e.size() - offset);
    boolean inOrder = cursor != null && cursor.next == offset;
    int done = 0;
    long extentStart = 0;
    List<Extent> extents = e.extents();
    for (int i = 0; i < extents.size() && done < want; i++) {
      Extent x = extents.get(i);
      long extentEnd = extentStart + x.length();
      long pos = offset + done;
      if (pos >= extentEnd) {
        extentStart = extentEnd;
        continue;
      }
      ImageChain.Member m = member(e, x);
      ShardInfo shard = shardOf(e, m, x);
      int blockSize = m.catalog().blockSize();
      while (done < want && pos < extentEnd) {
        long raw = x.offset() + (pos - extentStart);
        int k = (int) (raw / blockSize);
        byte[] block = block(m, x.image(), x.shard(), shard, k);
        int in = (int) (raw - (long) k * blockSize);
        int n = (int) Math.min(Math.min(block.length - in, want - done), extentEnd - pos);
        if (n <= 0) {
          throw new ImageException(m.location() + ": shard " + x.shard() + " block " + k
              + ": file " + e.path() + " reads outside the block");
        }
        System.arraycopy(block, in, buf, off + done, n);
        if (cursor != null) {
          track(cursor, e, i, pos - extentStart, block, in, n, inOrder);
          inOrder = true;
        }
        done += n;
        pos += n;
      }
      extentStart = extentEnd;
    }
    if (cursor != null) {
      cursor.next = offset + done;
    }
    return done;
  }

  /** Feeds the cursor's digest; checks it where an extent read in order from its start ends. */
  private static void track(Cursor c, Entry e, int extent, long at, byte[] b, int off, int n,
      boolean inOrder) throws ImageException {
    if (at == 0) {
      c.extent = extent;
      c.inExtent = 0;
      c.digest.reset();
    } else if (!inOrder || c.extent != extent || c.inExtent != at) {
      c.extent = -1;
      return;
    }
    c.digest.update(b, off, n);
    c.inExtent += n;
    Extent x = e.extents().get(extent);
    if (c.inExtent == x.length()) {
      c.extent = -1;
      if (!MessageDigest.isEqual(c.digest.digest(), x.digest())) {
        throw new ImageException("file " + e.path() + ": digest mismatch at offset "
            + (at + n - x.length()));
      }
    }
  }

  private ImageChain.Member member(Entry e, Extent x) throws ImageException {
    ImageChain.Member m = x.image() >= 0 ? chain.member(x.image()) : null;
    if (m == null) {
      throw new ImageException(chain.top().location() + ": file " + e.path()
          + " references base " + x.image() + ", which the image does not list");
    }
    return m;
  }

  /** The extent's shard, which must hold it: the catalog is untrusted input. */
  private static ShardInfo shardOf(Entry e, ImageChain.Member m, Extent x) throws ImageException {
    List<ShardInfo> shards = m.catalog().shards();
    if (x.shard() < 0 || x.shard() >= shards.size() || x.offset() < 0 || x.length() <= 0
        || x.offset() > shards.get(x.shard()).rawLength() - x.length()) {
      throw new ImageException(m.location() + ": file " + e.path() + ": extent at "
          + x.offset() + " lies outside shard " + x.shard());
    }
    return shards.get(x.shard());
  }

  /** Block {@code k}'s raw bytes, from the cache or decoded (outside the cache's lock). */
  private byte[] block(ImageChain.Member m, int image, int shardIndex, ShardInfo shard, int k)
      throws IOException {
    BlockKey key = new BlockKey(image, shardIndex, k);
    synchronized (this) {
      byte[] b = cache.get(key);
      if (b != null) {
        return b;
      }
    }
    Reader r = borrow();
    byte[] raw;
    try {
      byte[] out = new byte[m.catalog().blockSize()];
      int n = r.readers.reader(m.catalog().blockSize()).readBlock(
          r.readers.source(m.location()), m.location(), m.catalog().key(), shardIndex, shard, k,
          out);
      raw = n == out.length ? out : java.util.Arrays.copyOf(out, n);
    } finally {
      giveBack(r);
    }
    synchronized (this) {
      if (cache.put(key, raw) == null) {
        cached += raw.length;
      }
      var it = cache.entrySet().iterator();
      while (cached > cacheBytes && it.hasNext()) {
        Map.Entry<BlockKey, byte[]> eldest = it.next();
        if (eldest.getKey().equals(key)) {
          continue;
        }
        cached -= eldest.getValue().length;
        it.remove();
      }
    }
    return raw;
  }

  private synchronized Reader borrow() {
    Reader r = idle.poll();
    if (r == null) {
      r = new Reader();
      all.add(r);
    }
    return r;
  }

  private synchronized void giveBack(Reader r) {
    idle.push(r);
  }

  @Override
  public synchronized void close() throws IOException {
    for (Reader r : all) {
      r.readers.close();
    }
    all.clear();
    idle.clear();
    cache.clear();
  }
}

package io.beamsave.transforms.image;

import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.block.BlockDecoder;
import io.beamsave.transforms.image.block.DamagedDataException;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.ExtentDigest;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.ShardInfo;
import java.io.IOException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.crypto.spec.SecretKeySpec;

/**
 * Reads the blocks of one shard that hold the wanted extents, checks every block and every
 * extent digest, and hands the raw bytes to a {@link Sink}. Blocks no wanted extent touches are
 * not read. A damaged block fails naming the wanted files with bytes in it ({@link
 * DamagedDataException}), unless the sink goes on past the pieces it holds. Owns a block-sized
 * buffer and decoders: one per worker thread.
 */
public final class ShardReader implements AutoCloseable {

  /**
   * An extent to read, with the file it belongs to: {@code extent} of the file at {@code path},
   * which starts at {@code fileOffset}; {@code fileId} identifies the file a restore created to write it into (its
   * inode), 0 when nothing is written or the piece is {@code whole}. {@code whole} is set when
   * the piece is all of its file and a restore's worker makes the file: creates it, writes it,
   * gives it this metadata and moves it into place.
   */
  public record FileExtent(
      PathBytes path, long fileOffset, Extent extent, long fileId, Whole whole)
      implements java.io.Serializable {
    public FileExtent(PathBytes path, long fileOffset, Extent extent, long fileId) {
      this(path, fileOffset, extent, fileId, null);
    }
  }

  /** The size and metadata a restore gives a file that one piece holds whole. */
  public record Whole(long size, int mode, int uid, int gid, long mtimeSeconds, int mtimeNanos)
      implements java.io.Serializable {
    public static Whole of(Entry e) {
      return new Whole(e.size(), e.mode(), e.uid(), e.gid(), e.mtimeSeconds(), e.mtimeNanos());
    }
  }

  /** Receives raw bytes of pieces in shard order. */
  public interface Sink {
    /**
     * {@code len} bytes of {@code piece} that belong at {@code fileOffset} of its file; {@code
     * zero} when they came from a zero block (a restore may leave a hole).
     */
    void write(FileExtent piece, long fileOffset, byte[] buf, int off, int len, boolean zero)
        throws IOException;

    /** {@code piece} was read whole and its digest matched. */
    default void pieceDone(FileExtent piece) throws IOException {}

    /**
     * {@code piece} cannot be read as saved ({@code damage} says why); some of its bytes may
     * have been written. True to go on with the pieces after it ({@code restore
     * --skip-damaged}), false to fail with {@code damage}.
     */
    default boolean damaged(FileExtent piece, DamagedDataException damage) throws IOException {
      return false;
    }
  }

  private final BlockDecoder decoder = new BlockDecoder();
  private final ExtentDigest digest = new ExtentDigest();
  private final int blockSize;
  private final byte[] block;
  private final byte[] raw;
  /** The key the current shard's frames are sealed under; null for a plain image. */
  private SecretKeySpec shardKey;

  public ShardReader(int blockSize) {
    this.blockSize = blockSize;
    this.block = new byte[ImageFormat.BLOCK_HEADER_SIZE + blockSize + BlockSealer.OVERHEAD];
    this.raw = new byte[blockSize];
  }

  /**
   * The key shard {@code shardIndex} of an encrypted image is sealed under, unwrapped with the
   * image's {@code key}; null for a shard of a plain image.
   */
  public static SecretKeySpec shardKey(ImageKey key, String image, int shardIndex,
      ShardInfo shard) throws ImageException {
    if (shard.sealedKey() == null) {
      return null;
    }
    if (key == null) {
      throw new ImageException(image + " is encrypted, and no key to it was given");
    }
    byte[] k = key.unwrap(shard.sealedKey(), ImageKey.SHARD);
    if (k == null || k.length != 32) {
      throw new ImageException(image + ": shard " + shardIndex + ": its key does not"
          + " authenticate (the shard table was changed: tampered)");
    }
    return BlockSealer.key(k);
  }

  /**
   * Reads {@code pieces} (sorted by extent offset, all in shard {@code shardIndex}, not
   * overlapping: what the catalog's validation guarantees, checked again here because the
   * digest and the codecs are native code that trusts its offsets).
   *
   * @param image names the image in errors
   */
  public void read(
      ImageSource ch, String image, int shardIndex, ShardInfo shard, List<FileExtent> pieces,
      Sink sink)
      throws IOException {
    read(ch, image, null, shardIndex, shard, pieces, sink);
  }

  /**
   * Like {@link #read(ImageSource, String, int, ShardInfo, List, Sink)}, the image opened with
   * {@code key} if it is encrypted (null otherwise).
   */
  public void read(ImageSource ch, String image, ImageKey key, int shardIndex, ShardInfo shard,
      List<FileExtent> pieces, Sink sink) throws IOException {
    read(ch, image, key, shardIndex, shard, pieces, List.of(), sink);
  }

  /**
   * Like {@link #read(ImageSource, String, ImageKey, int, ShardInfo, List, Sink)}; {@code
   * beside} are pieces others read from the blocks these share, named too when one is damaged.
   */
  public void read(ImageSource ch, String image, ImageKey key, int shardIndex, ShardInfo shard,
      List<FileExtent> pieces, List<FileExtent> beside, Sink sink) throws IOException {
    shardKey = shardKey(key, image, shardIndex, shard);
    blockPos = shard.imageOffset();
    loadedBlock = -1;
    announce(ch, shard, pieces);
    k = 0;
    long previousEnd = 0;
    for (FileExtent p : pieces) {
      Extent x = p.extent();
      if (x.shard() != shardIndex || x.length() <= 0 || x.offset() < previousEnd
          || x.offset() > shard.rawLength() - x.length()) {
        throw new ImageException(image + ": shard " + shardIndex + ": file " + p.path()
            + ": extent at " + x.offset() + " overlaps another or lies outside the shard");
      }
      previousEnd = x.offset() + x.length();
      try {
        readPiece(ch, image, shardIndex, shard, pieces, beside, p, sink);
      } catch (DamagedDataException damage) {
        // The block may stay damaged for the next piece too, which then says so itself.
        loadedBlock = -1;
        if (!sink.damaged(p, damage)) {
          throw damage;
        }
        continue;
      }
      sink.pieceDone(p);
    }
  }

  /** Where {@link #readPiece} is in the shard's blocks: the next block and its offset. */
  private int k;

  private long blockPos;

  private void readPiece(ImageSource ch, String image, int shardIndex, ShardInfo shard,
      List<FileExtent> pieces, List<FileExtent> beside, FileExtent p, Sink sink)
      throws IOException {
    Extent x = p.extent();
    int[] lengths = shard.blockLengths();
    digest.reset();
    long done = 0;
    while (done < x.length()) {
      long rawPos = x.offset() + done;
      int want = (int) (rawPos / blockSize);
      while (k < want && k < lengths.length) {
        blockPos += lengths[k++];
      }
      if (k != want) {
        throw new ImageException(image + ": shard " + shardIndex + ": file " + p.path()
            + ": extent beyond the shard's blocks");
      }
      // Decode block k unless it is already in the buffer from the previous piece.
      if (loadedBlock != k) {
        try {
          load(ch, image, shardIndex, shard, k, blockPos);
        } catch (ImageException e) {
          throw new DamagedDataException(
              e.getMessage() + damagedFiles(pieces, beside, shard, k), e);
        }
      }
      int inBlock = (int) (rawPos - (long) k * blockSize);
      int n = (int) Math.min(loadedRaw - inBlock, x.length() - done);
      if (inBlock < 0 || n <= 0) {
        throw new ImageException(image + ": shard " + shardIndex + " block " + k + ": file "
            + p.path() + " reads outside the block");
      }
      digest.update(raw, inBlock, n);
      sink.write(p, p.fileOffset() + done, raw, inBlock, n, loadedZero);
      done += n;
    }
    if (!MessageDigest.isEqual(digest.digest(), x.digest())) {
      throw new DamagedDataException(
          image + ": shard " + shardIndex + ": file " + p.path() + ": digest mismatch at offset "
              + p.fileOffset());
    }
  }

  /**
   * Decodes block {@code k} of shard {@code shardIndex} into {@code out} (at least a block
   * size long) and returns its raw length: a random read, checked as every block is (its
   * checksum, or its seal in an encrypted image, and its raw length); the digests of the
   * extents it holds are not, which takes reading them whole ({@link #read}).
   */
  public int readBlock(ImageSource ch, String image, ImageKey key, int shardIndex,
      ShardInfo shard, int k, byte[] out) throws IOException {
    if (k < 0 || k >= shard.blockLengths().length) {
      throw new ImageException(image + ": shard " + shardIndex + " has no block " + k);
    }
    shardKey = shardKey(key, image, shardIndex, shard);
    loadedBlock = -1;
    load(ch, image, shardIndex, shard, k, shard.blockOffset(k));
    System.arraycopy(raw, 0, out, 0, loadedRaw);
    return loadedRaw;
  }

  /** The block of the current shard whose raw bytes are in {@link #raw}, or -1. */
  private int loadedBlock = -1;
  private int loadedRaw;
  private boolean loadedZero;

  /** Tells the source which blocks, from the first wanted to the last, are about to be read. */
  private void announce(ImageSource ch, ShardInfo shard, List<FileExtent> pieces) {
    if (pieces.isEmpty()) {
      return;
    }
    long firstRaw = pieces.get(0).extent().offset();
    Extent last = pieces.get(pieces.size() - 1).extent();
    int first = (int) Math.min(shard.blockLengths().length, firstRaw / blockSize);
    int end = (int) Math.min(shard.blockLengths().length,
        (last.offset() + Math.max(last.length(), 1) + blockSize - 1) / blockSize);
    long start = shard.imageOffset();
    int[] lengths = shard.blockLengths();
    for (int i = 0; i < first; i++) {
      start += lengths[i];
    }
    long len = 0;
    for (int i = first; i < end; i++) {
      len += lengths[i];
    }
    ch.willRead(start, len);
  }

  private void load(ImageSource ch, String image, int shardIndex, ShardInfo shard, int k, long pos)
      throws IOException {
    String where =
        image + ": shard " + shardIndex + " block " + k + " (image offset " + pos + ")";
    int len = shard.blockLengths()[k];
    long rawLeft = shard.rawLength() - (long) k * blockSize;
    if (rawLeft <= 0 || len > block.length) {
      throw new ImageException(where + ": lies outside the shard");
    }
    try {
      ch.read(pos, block, 0, len);
    } catch (ImageException e) {
      throw new ImageException(where + ": image truncated");
    }
    int expectedRaw = (int) Math.min(blockSize, rawLeft);
    loadedBlock = -1;
    if (shardKey != null) {
      loadedZero = decoder.decodeSealed(shardKey, k, block, len, raw, 0, expectedRaw, where);
    } else {
      decoder.decode(block, len, raw, expectedRaw, where);
      loadedZero = BlockDecoder.isZeroBlock(block);
    }
    loadedBlock = k;
    loadedRaw = expectedRaw;
  }

  /** Files listed by name when a block is damaged; the rest are counted. */
  private static final int DAMAGED_FILES_NAMED = 5;

  /**
   * "{@code ; damaged files: a, b and 3 more}": the files among {@code pieces} with bytes in
   * block {@code k}, which cannot be read back as saved, so the operator knows what the damage
   * costs. Only the pieces being read are known here (with those {@code beside} them): all
   * files of the shard for a verify, the selected ones for a restore.
   */
  private String damagedFiles(List<FileExtent> pieces, List<FileExtent> beside, ShardInfo shard,
      int k) {
    long start = (long) k * blockSize;
    long end = Math.min(start + blockSize, shard.rawLength());
    List<FileExtent> in = new ArrayList<>();
    for (List<FileExtent> list : List.of(pieces, beside)) {
      for (FileExtent p : list) {
        Extent x = p.extent();
        if (x.offset() < end && x.offset() + x.length() > start) {
          in.add(p);
        }
      }
    }
    in.sort(Comparator.comparingLong(p -> p.extent().offset()));
    Set<PathBytes> files = new LinkedHashSet<>();
    for (FileExtent p : in) {
      files.add(p.path());
    }
    if (files.isEmpty()) {
      return "";
    }
    StringBuilder b =
        new StringBuilder("; damaged ").append(files.size() == 1 ? "file: " : "files: ");
    int named = 0;
    for (PathBytes f : files) {
      if (named == DAMAGED_FILES_NAMED) {
        break;
      }
      b.append(named++ == 0 ? "" : ", ").append(f);
    }
    if (files.size() > named) {
      b.append(" and ").append(files.size() - named).append(" more");
    }
    return b.toString();
  }

  @Override
  public void close() {
    decoder.close();
    digest.close();
  }
}

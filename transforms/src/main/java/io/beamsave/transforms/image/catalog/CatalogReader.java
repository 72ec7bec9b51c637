package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.format.ImageId;
import java.io.DataInput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Reads the catalog back from its raw bytes (docs/image-format.md, "Catalog"), versions 1 to 4,
 * as {@link CatalogWriter} and its predecessors wrote them. Decoding is the one validator every
 * image goes through before anything uses it: every count and length is checked against the
 * bytes that are left, and the result for consistency ({@link CatalogValidator}: paths, parents,
 * extents inside their shard and not overlapping, shard layout) before it is returned, so that
 * nothing downstream, native code least of all, ever meets an offset no check has seen.
 */
public final class CatalogReader {
  private static final int EXTENT_BYTES = 4 + 8 + 8 + ImageFormat.DIGEST_SIZE;
  private static final int EXTENT_BYTES_V3 = 2 + EXTENT_BYTES;
  private static final int BASE_BYTES = ImageId.SIZE + 32 + 8 + 2;
  static final int MIN_SHARD_BYTES = 8 + 8 + 8 + 4;
  static final int MIN_SHARD_BYTES_V4 = MIN_SHARD_BYTES + ImageKey.WRAPPED_KEY_SIZE;
  /** The smallest frame of an encrypted image: an empty block's header, sealed. */
  private static final int MIN_FRAME = ImageFormat.BLOCK_HEADER_SIZE + BlockSealer.OVERHEAD;

  private CatalogReader() {}

  /** Smallest encoding of an entry in {@code version}, to bound counts by the bytes left. */
  static int minEntryBytes(int version) {
    if (ImageFormat.packed(version)) {
      return PackedEntries.MIN_ENTRY;
    }
    return version == 1 ? 2 + 1 + 1 + 4 + 4 + 4 + 8 + 4 + 8 : 2 + 1 + 1 + 4 + 4 + 4 + 12 + 12 + 8 + 8;
  }

  /**
   * Reads what {@link CatalogWriter#writeEntryMetadata} wrote, from a trusted source (the
   * pipeline's own listing, not an image: images go through {@link #decode} and its checks).
   */
  public static Entry readEntryMetadata(DataInput in) throws IOException {
    PathBytes path = readBytes(in);
    EntryType type = EntryType.fromCode(in.readUnsignedByte());
    int flags = in.readUnsignedByte();
    int mode = in.readInt();
    int uid = in.readInt();
    int gid = in.readInt();
    long mtime = in.readLong();
    int nanos = in.readInt();
    long ctime = in.readLong();
    int cnanos = in.readInt();
    long inode = in.readLong();
    long size = in.readLong();
    PathBytes target = type == EntryType.SYMLINK ? readBytes(in) : null;
    return new Entry(path, type, flags, mode, uid, gid, mtime, nanos, ctime, cnanos, inode, size,
        target, List.of());
  }

  private static PathBytes readBytes(DataInput in) throws IOException {
    byte[] b = new byte[in.readUnsignedShort()];
    in.readFully(b);
    return PathBytes.wrap(b);
  }

  /** What an image holds, in two words: its library and codec. */
  public record Label(String library, String codec) {}

  /** Decodes the leading fields of a catalog, given at least its first block. */
  public static Label decodeLabel(String image, byte[] rawPrefix) throws ImageException {
    CatalogInput in = new CatalogInput(image, ByteBuffer.wrap(rawPrefix));
    byte[] magic = in.bytes(ImageFormat.CATALOG_MAGIC.length, "catalog magic");
    if (!Arrays.equals(magic, ImageFormat.CATALOG_MAGIC)) {
      throw new ImageException(image + ": catalog: bad magic");
    }
    return new Label(in.text("library name"), in.text("codec"));
  }

  /**
   * Decodes and validates a catalog.
   *
   * @param image names the image in error messages
   * @param raw the catalog's raw bytes
   * @param catalogOffset where the catalog starts in the image: the shards must end there
   * @param version the image's format version (1 to 3)
   */
  public static Catalog decode(String image, byte[] raw, long catalogOffset, int version)
      throws ImageException {
    return decode(image, raw, ImageFormat.HEADER_SIZE, catalogOffset, version);
  }

  /**
   * Decodes and validates the catalog of an image whose shards lie between {@code dataStart}
   * (the end of its header) and {@code catalogOffset}; version 4 is an encrypted image's.
   */
  public static Catalog decode(String image, byte[] raw, long dataStart, long catalogOffset,
      int version) throws ImageException {
    Catalog c = decodeUnchecked(image, raw, dataStart, catalogOffset, version);
    byte[] digest = ImageId.catalogDigest(raw);
    return version >= 3 ? c.withDigest(digest)
        : c.withIdentity(ImageId.ofCatalogDigest(digest), null, 0, List.of()).withDigest(digest);
  }

  private static Catalog decodeUnchecked(String image, byte[] raw, long dataStart,
      long catalogOffset, int version) throws ImageException {
    CatalogInput in = new CatalogInput(image, ByteBuffer.wrap(raw));
    Catalog p = readPreamble(in, version);
    long entryCount = in.count(minEntryBytes(version), "entry count");
    List<Entry> entries = new ArrayList<>((int) entryCount);
    for (int i = 0; i < entryCount; i++) {
      entries.add(readEntry(in, i, version, p.bases().size()));
    }
    List<ShardInfo> shards = readShards(in, p.blockSize(), ImageFormat.encrypted(version));
    CatalogValidator.checkLayout(image, shards, dataStart, catalogOffset);
    if (in.b.hasRemaining()) {
      throw new ImageException(image + ": catalog: " + in.b.remaining() + " trailing bytes");
    }
    CatalogValidator.checkTree(image, entries);
    CatalogValidator.checkExtents(image, entries, shards);
    return new Catalog(p.library(), p.codecSpec(), p.createdMillis(), p.blockSize(),
        p.shardSize(), p.root(), entries, shards, p.id(), p.origin(), p.depth(), p.bases(),
        p.notes(), null, null);
  }

  /**
   * What a catalog holds before its entries (library, codec, sizes, root, id and lineage), as
   * a catalog without entries or shards.
   */
  static Catalog readPreamble(CatalogInput in, int version) throws ImageException {
    String image = in.image;
    byte[] magic = in.bytes(ImageFormat.CATALOG_MAGIC.length, "catalog magic");
    if (!Arrays.equals(magic, ImageFormat.CATALOG_MAGIC)) {
      throw new ImageException(image + ": catalog: bad magic");
    }
    String library = in.text("library name");
    String codec = in.text("codec");
    long created = in.int64Signed("created");
    int blockSize = in.int32("block size");
    long shardSize = in.int64("shard size");
    if (blockSize < ImageFormat.MIN_BLOCK_SIZE || blockSize > ImageFormat.MAX_BLOCK_SIZE) {
      throw new ImageException(image + ": catalog: block size " + blockSize + " out of range");
    }
    if (shardSize < blockSize) {
      throw new ImageException(image + ": catalog: shard size smaller than block size");
    }
    Entry root = version >= 2 ? readRoot(in) : null;
    if (ImageFormat.metadata(version)) {
      root = root.withMeta(
          new PackedEntries.Reader(in, 0, true, false).readMeta(0, "library root metadata"));
    }
    ImageId id = null;
    ImageId origin = null;
    int depth = 0;
    List<Catalog.Base> bases = List.of();
    if (version >= 3) {
      id = new ImageId(in.bytes(ImageId.SIZE, "image id"));
      origin = new ImageId(in.bytes(ImageId.SIZE, "origin"));
      origin = origin.isZero() ? null : origin;
      depth = in.int32("depth");
      bases = readBases(in, id);
      if (depth < 0 || (depth == 0) != bases.isEmpty()) {
        throw in.fail("depth " + Integer.toUnsignedString(depth) + " with " + bases.size()
            + " bases");
      }
    }
    Map<String, String> notes = ImageFormat.notes(version) ? readNotes(in) : Map.of();
    return new Catalog(library, codec, created, blockSize, shardSize, root, List.of(),
        List.of(), id, origin, depth, bases, notes, null, null);
  }

  static Map<String, String> readNotes(CatalogInput in) throws ImageException {
    int n = in.int16("note count");
    if (n > Notes.MAX_NOTES) {
      throw in.fail(n + " notes; at most " + Notes.MAX_NOTES);
    }
    Map<String, String> notes = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      String key = in.text("note " + (i + 1) + " key");
      String value = in.text("note " + (i + 1) + " value");
      String problem = Notes.problem(key, value);
      if (problem != null) {
        throw in.fail(problem);
      }
      if (notes.put(key, value) != null) {
        throw in.fail("note " + key + " given twice");
      }
    }
    return Collections.unmodifiableMap(notes);
  }

  /** The shard table; {@code sealed}: of an encrypted image, each shard with its key. */
  static List<ShardInfo> readShards(CatalogInput in, int blockSize, boolean sealed)
      throws ImageException {
    long shardCount = in.count(sealed ? MIN_SHARD_BYTES_V4 : MIN_SHARD_BYTES, "shard count");
    List<ShardInfo> shards = new ArrayList<>((int) shardCount);
    for (int i = 0; i < shardCount; i++) {
      shards.add(readShard(in, i, blockSize, sealed));
    }
    return shards;
  }

  /** The base list: distinct ids, none the image's own or zero; locations as text. */
  static List<Catalog.Base> readBases(CatalogInput in, ImageId self) throws ImageException {
    if (self.isZero()) {
      throw in.fail("image id is zero");
    }
    in.need(2, "base count");
    int n = Short.toUnsignedInt(in.b.getShort());
    if (n > in.b.remaining() / BASE_BYTES) {
      throw in.fail("base count " + n + " exceeds what the catalog can hold");
    }
    List<Catalog.Base> bases = new ArrayList<>(n);
    Set<ImageId> seen = new HashSet<>();
    seen.add(self);
    for (int i = 0; i < n; i++) {
      String what = "base " + (i + 1);
      ImageId id = new ImageId(in.bytes(ImageId.SIZE, what + " id"));
      byte[] digest = in.bytes(32, what + " catalog digest");
      long created = in.int64Signed(what + " created");
      String location = in.text(what + " location");
      if (id.isZero() || !seen.add(id)) {
        throw in.fail(what + ": its id is zero, the image's own or another base's");
      }
      if (location.isEmpty() || location.indexOf('\0') >= 0) {
        throw in.fail(what + ": invalid location");
      }
      bases.add(new Catalog.Base(id, digest, created, location));
    }
    return List.copyOf(bases);
  }

  static Entry readRoot(CatalogInput in) throws ImageException {
    int mode = in.int32("root mode");
    int uid = in.int32("root uid");
    int gid = in.int32("root gid");
    long mtime = in.int64Signed("root mtime");
    int nanos = in.int32("root mtime");
    long ctime = in.int64Signed("root ctime");
    int cnanos = in.int32("root ctime");
    long inode = in.int64Signed("root inode");
    if ((mode & ~07777) != 0 || !validNanos(nanos) || !validNanos(cnanos) || uid == -1
        || gid == -1) {
      throw in.fail("library root: invalid mode, owner or time");
    }
    return new Entry(PathBytes.wrap(new byte[0]), EntryType.DIRECTORY, 0, mode, uid, gid, mtime,
        nanos, ctime, cnanos, inode, 0, null, List.of());
  }

  private static boolean validNanos(int nanos) {
    return nanos >= 0 && nanos < 1_000_000_000;
  }

  /**
   * Reads entry {@code index}. Its fields are named by {@link #ENTRY} while they are read (a
   * catalog holds millions of entries, and rendering each path for messages that are never
   * shown cost a second per million); a failure then names the entry and its path.
   */
  static Entry readEntry(CatalogInput in, long index, int version, int baseCount)
      throws ImageException {
    PathBytes path = in.name("entry " + index + " path");
    try {
      return readEntry(in, path, version, baseCount);
    } catch (ImageException e) {
      throw named(e, index, path);
    }
  }

  /** Where an entry's fields are read, until a failure names the entry ({@link #named}). */
  static final String ENTRY = "@entry@";

  /**
   * {@code e}, a failure reading a field of entry {@code index}, naming the entry and its path
   * (null: not yet read).
   */
  static ImageException named(ImageException e, long index, PathBytes path) {
    String m = e.getMessage();
    int at = m.indexOf(ENTRY, Math.max(0, m.indexOf(": catalog: ")));
    if (at < 0) {
      return e;
    }
    return new ImageException(m.substring(0, at) + "entry " + index
        + (path == null ? "" : " (" + path + ")") + m.substring(at + ENTRY.length()));
  }

  private static Entry readEntry(CatalogInput in, PathBytes path, int version, int baseCount)
      throws ImageException {
    final String where = ENTRY;
    EntryType type = EntryType.fromCode(in.uint8(where + " type"));
    if (type == null || !type.before9()) {
      throw in.fail(where + ": unknown type");
    }
    int flags = in.uint8(where + " flags");
    int mode = in.int32(where + " mode");
    int uid = in.int32(where + " uid");
    int gid = in.int32(where + " gid");
    long mtime = in.int64Signed(where + " mtime");
    int nanos = in.int32(where + " mtime");
    long ctime = 0;
    int cnanos = 0;
    long inode = 0;
    if (version >= 2) {
      ctime = in.int64Signed(where + " ctime");
      cnanos = in.int32(where + " ctime");
      inode = in.int64Signed(where + " inode");
    }
    long size = in.int64(where + " size");
    checkFields(in, type, flags, mode, uid, gid, nanos, cnanos, size);
    PathBytes target = null;
    List<Extent> extents = List.of();
    if (type == EntryType.SYMLINK) {
      target = checkTarget(in, in.name(where + " symlink target"));
    }
    if (type == EntryType.FILE) {
      long n = in.count(version >= 3 ? EXTENT_BYTES_V3 : EXTENT_BYTES, where + " extent count");
      extents = new ArrayList<>((int) n);
      for (int k = 0; k < n; k++) {
        int source = 0;
        if (version >= 3) {
          in.need(2, where + " extent");
          source = Short.toUnsignedInt(in.b.getShort());
          if (source > baseCount) {
            throw in.fail(where + ": extent names base " + source + " of " + baseCount);
          }
        }
        int shard = in.int32(where + " extent");
        long offset = in.int64(where + " extent");
        long length = in.int64(where + " extent");
        byte[] digest = in.bytes(ImageFormat.DIGEST_SIZE, where + " digest");
        extents.add(new Extent(source, shard, offset, length, digest));
      }
    }
    return new Entry(path, type, flags, mode, uid, gid, mtime, nanos, ctime, cnanos, inode, size,
        target, extents);
  }

  /** Checks an entry's fields that every format version bounds alike. */
  static void checkFields(CatalogInput in, EntryType type, int flags, int mode, int uid, int gid,
      int nanos, int cnanos, long size) throws ImageException {
    if ((flags & ~Entry.FLAGS) != 0 || (mode & ~07777) != 0 || !validNanos(nanos)
        || !validNanos(cnanos) || (type != EntryType.FILE && size != 0)) {
      throw in.fail(ENTRY + ": invalid flags, mode, time or size");
    }
    if (uid == -1 || gid == -1) {
      // chown(2) reads (uid_t) -1 as "leave unchanged": such an owner cannot be restored.
      throw in.fail(ENTRY + ": owner " + Integer.toUnsignedString(uid) + ":"
          + Integer.toUnsignedString(gid) + " cannot be restored");
    }
  }

  static PathBytes checkTarget(CatalogInput in, PathBytes target) throws ImageException {
    if (target.isEmpty() || CatalogPaths.containsNul(target.bytes())) {
      throw in.fail(ENTRY + ": invalid symlink target");
    }
    return target;
  }

  /**
   * A shard table entry; {@code sealed}: of an encrypted image, whose blocks are frames ({@link
   * BlockSealer}) and whose entry ends with the shard's wrapped key.
   */
  static ShardInfo readShard(CatalogInput in, int index, int blockSize, boolean sealed)
      throws ImageException {
    String where = "shard " + index;
    int min = sealed ? MIN_FRAME : ImageFormat.BLOCK_HEADER_SIZE;
    long offset = in.int64(where + " offset");
    long stored = in.int64(where + " stored length");
    long rawLen = in.int64(where + " raw length");
    long blocks = in.count(4, where + " block count");
    int[] lengths = new int[(int) blocks];
    long sum = 0;
    for (int k = 0; k < blocks; k++) {
      long len = in.int32unsigned(where + " block length");
      if (len < min || len > min + (long) blockSize) {
        throw in.fail(where + " block " + k + ": invalid stored length " + len);
      }
      lengths[k] = (int) len;
      sum += len;
    }
    if (sum != stored) {
      throw in.fail(where + ": block lengths add up to " + sum + ", not " + stored);
    }
    if (blocks == 0 || rawLen > blocks * blockSize || rawLen <= (blocks - 1) * blockSize) {
      throw in.fail(where + ": raw length " + rawLen + " does not match " + blocks + " blocks");
    }
    byte[] key = sealed ? in.bytes(ImageKey.WRAPPED_KEY_SIZE, where + " key") : null;
    return new ShardInfo(offset, stored, rawLen, lengths, key);
  }
}

package io.beamsave.transforms.image;

import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.format.ImageId;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Serializes the catalog to its raw bytes and back (docs/image-format.md, "Catalog"). Writes
 * format version 3, or 4 for an encrypted image; reads versions 1 to 4. Decoding is the one validator every image goes
 * through before anything uses it: every count and length is checked against the bytes that
 * are left, and the result for consistency (paths, parents, extents inside their shard and not
 * overlapping, shard layout) before it is returned, so that nothing downstream, native code
 * least of all, ever meets an offset no check has seen.
 */
public final class CatalogCodec {
  /** Paths and link targets are prefixed by a u16 length. */
  public static final int MAX_NAME_BYTES = 65_535;

  private static final int EXTENT_BYTES = 4 + 8 + 8 + ImageFormat.DIGEST_SIZE;
  private static final int EXTENT_BYTES_V3 = 2 + EXTENT_BYTES;
  private static final int BASE_BYTES = ImageId.SIZE + 32 + 8 + 2;
  /** The most bases a catalog may list: extents name them by a u16. */
  public static final int MAX_BASES = 65_535;
  private static final int MIN_SHARD_BYTES = 8 + 8 + 8 + 4;
  private static final int MIN_SHARD_BYTES_V4 = MIN_SHARD_BYTES + ImageKey.WRAPPED_KEY_SIZE;
  /** The smallest frame of an encrypted image: an empty block's header, sealed. */
  private static final int MIN_FRAME = ImageFormat.BLOCK_HEADER_SIZE + BlockSealer.OVERHEAD;

  private CatalogCodec() {}

  /** Smallest encoding of an entry in {@code version}, to bound counts by the bytes left. */
  private static int minEntryBytes(int version) {
    return version == 1 ? 2 + 1 + 1 + 4 + 4 + 4 + 8 + 4 + 8 : 2 + 1 + 1 + 4 + 4 + 4 + 12 + 12 + 8 + 8;
  }

  /**
   * The catalog's raw bytes in the current format version: 3, or 4 for an encrypted image,
   * whose shard table holds each shard's wrapped key.
   */
  public static byte[] encode(Catalog c) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + c.entries().size() * 96);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.write(ImageFormat.CATALOG_MAGIC);
      writeText(out, c.library());
      writeText(out, c.codecSpec());
      out.writeLong(c.createdMillis());
      out.writeInt(c.blockSize());
      out.writeLong(c.shardSize());
      writeRoot(out, c.root());
      out.write(c.id().bytes());
      out.write(c.origin() == null ? new byte[ImageId.SIZE] : c.origin().bytes());
      out.writeInt(c.depth());
      if (c.bases().size() > MAX_BASES) {
        throw new IllegalArgumentException("more than " + MAX_BASES + " base images");
      }
      out.writeShort(c.bases().size());
      for (Catalog.Base b : c.bases()) {
        out.write(b.id().bytes());
        out.write(b.catalogDigest());
        out.writeLong(b.createdMillis());
        writeBytes(out, PathBytes.of(b.location()), "base location");
      }
      out.writeInt(c.entries().size());
      for (Entry e : c.entries()) {
        writeEntryMetadata(out, e);
        if (e.isFile()) {
          out.writeInt(e.extents().size());
          for (Extent x : e.extents()) {
            out.writeShort(x.image());
            out.writeInt(x.shard());
            out.writeLong(x.offset());
            out.writeLong(x.length());
            out.write(x.digest());
          }
        }
      }
      out.writeInt(c.shards().size());
      for (ShardInfo s : c.shards()) {
        out.writeLong(s.imageOffset());
        out.writeLong(s.storedLength());
        out.writeLong(s.rawLength());
        out.writeInt(s.blockLengths().length);
        for (int len : s.blockLengths()) {
          out.writeInt(len);
        }
        if (c.encrypted()) {
          if (s.sealedKey() == null || s.sealedKey().length != ImageKey.WRAPPED_KEY_SIZE) {
            throw new IllegalArgumentException("a shard of an encrypted image without its key");
          }
          out.write(s.sealedKey());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static void writeRoot(DataOutputStream out, Entry root) throws IOException {
    if (root == null) {
      throw new IllegalArgumentException("a catalog records its library root");
    }
    out.writeInt(root.mode());
    out.writeInt(root.uid());
    out.writeInt(root.gid());
    out.writeLong(root.mtimeSeconds());
    out.writeInt(root.mtimeNanos());
    out.writeLong(root.ctimeSeconds());
    out.writeInt(root.ctimeNanos());
    out.writeLong(root.inode());
  }

  /**
   * Writes an entry's metadata (everything but its extents) as the current catalog lays it
   * out; the pipeline's listing uses the same encoding.
   */
  public static void writeEntryMetadata(DataOutputStream out, Entry e) throws IOException {
    writeBytes(out, e.path(), "path");
    out.writeByte(e.type().code());
    out.writeByte(e.flags());
    out.writeInt(e.mode());
    out.writeInt(e.uid());
    out.writeInt(e.gid());
    out.writeLong(e.mtimeSeconds());
    out.writeInt(e.mtimeNanos());
    out.writeLong(e.ctimeSeconds());
    out.writeInt(e.ctimeNanos());
    out.writeLong(e.inode());
    out.writeLong(e.size());
    if (e.type() == EntryType.SYMLINK) {
      writeBytes(out, e.linkTarget(), "symlink target");
    }
  }

  /**
   * Reads what {@link #writeEntryMetadata} wrote, from a trusted source (the pipeline's own
   * listing, not an image: images go through {@link #decode} and its checks).
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
    Reader in = new Reader(image, ByteBuffer.wrap(rawPrefix));
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
    Reader in = new Reader(image, ByteBuffer.wrap(raw));
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
    long entryCount = in.count(minEntryBytes(version), "entry count");
    List<Entry> entries = new ArrayList<>((int) entryCount);
    for (int i = 0; i < entryCount; i++) {
      entries.add(readEntry(in, i, version, bases.size()));
    }
    boolean sealed = version == ImageFormat.ENCRYPTED_VERSION;
    long shardCount = in.count(sealed ? MIN_SHARD_BYTES_V4 : MIN_SHARD_BYTES, "shard count");
    List<ShardInfo> shards = new ArrayList<>((int) shardCount);
    for (int i = 0; i < shardCount; i++) {
      shards.add(readShard(in, i, blockSize, sealed));
    }
    checkLayout(image, shards, dataStart, catalogOffset);
    if (in.b.hasRemaining()) {
      throw new ImageException(image + ": catalog: " + in.b.remaining() + " trailing bytes");
    }
    checkTree(image, entries);
    checkExtents(image, entries, shards);
    return new Catalog(library, codec, created, blockSize, shardSize, root, entries, shards, id,
        origin, depth, bases, null, null);
  }

  /** The base list: distinct ids, none the image's own or zero; locations as text. */
  private static List<Catalog.Base> readBases(Reader in, ImageId self) throws ImageException {
    if (self.isZero()) {
      throw in.fail("image id is zero");
    }
    in.need(2, "base count");
    int n = Short.toUnsignedInt(in.b.getShort());
    if (n > in.b.remaining() / BASE_BYTES) {
      throw in.fail("base count " + n + " exceeds what the catalog can hold");
    }
    List<Catalog.Base> bases = new ArrayList<>(n);
    java.util.Set<ImageId> seen = new java.util.HashSet<>();
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

  private static Entry readRoot(Reader in) throws ImageException {
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
  private static Entry readEntry(Reader in, int index, int version, int baseCount)
      throws ImageException {
    PathBytes path = in.name("entry " + index + " path");
    try {
      return readEntry(in, path, version, baseCount);
    } catch (ImageException e) {
      String m = e.getMessage();
      int at = m.indexOf(ENTRY, Math.max(0, m.indexOf(": catalog: ")));
      throw new ImageException(m.substring(0, at) + "entry " + index + " (" + path + ")"
          + m.substring(at + ENTRY.length()));
    }
  }

  private static final String ENTRY = "@entry@";

  private static Entry readEntry(Reader in, PathBytes path, int version, int baseCount)
      throws ImageException {
    final String where = ENTRY;
    EntryType type = EntryType.fromCode(in.uint8(where + " type"));
    if (type == null) {
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
    if ((flags & ~Entry.FLAGS) != 0 || (mode & ~07777) != 0 || !validNanos(nanos)
        || !validNanos(cnanos) || (type != EntryType.FILE && size != 0)) {
      throw in.fail(where + ": invalid flags, mode, time or size");
    }
    if (uid == -1 || gid == -1) {
      // chown(2) reads (uid_t) -1 as "leave unchanged": such an owner cannot be restored.
      throw in.fail(where + ": owner " + Integer.toUnsignedString(uid) + ":"
          + Integer.toUnsignedString(gid) + " cannot be restored");
    }
    PathBytes target = null;
    List<Extent> extents = List.of();
    if (type == EntryType.SYMLINK) {
      target = in.name(where + " symlink target");
      if (target.isEmpty() || indexOf(target.bytes(), (byte) 0) >= 0) {
        throw in.fail(where + ": invalid symlink target");
      }
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

  /**
   * A shard table entry; {@code sealed}: of an encrypted image, whose blocks are frames ({@link
   * BlockSealer}) and whose entry ends with the shard's wrapped key.
   */
  private static ShardInfo readShard(Reader in, int index, int blockSize, boolean sealed)
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

  /** Shards lie, in any order, between the header and the catalog, and never overlap. */
  private static void checkLayout(String image, List<ShardInfo> shards, long dataStart,
      long catalogOffset) throws ImageException {
    Integer[] order = new Integer[shards.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, Comparator.comparingLong(i -> shards.get(i).imageOffset()));
    long end = dataStart;
    for (int i : order) {
      ShardInfo s = shards.get(i);
      if (s.imageOffset() < end || s.storedLength() > catalogOffset - s.imageOffset()) {
        throw new ImageException(
            image + ": catalog: shard " + i + " at " + s.imageOffset() + " overlaps another"
                + " shard, the header or the catalog");
      }
      end = s.imageOffset() + s.storedLength();
    }
  }

  /** Paths are clean, unique, and each lies inside a directory entry. */
  private static void checkTree(String image, List<Entry> entries) throws ImageException {
    Map<PathBytes, EntryType> types = new HashMap<>(entries.size() * 2);
    for (Entry e : entries) {
      String problem = pathProblem(e.path());
      if (problem != null) {
        throw new ImageException(image + ": catalog: unsafe path '" + e.path() + "': " + problem);
      }
      if (types.put(e.path(), e.type()) != null) {
        throw new ImageException(image + ": catalog: duplicate path '" + e.path() + "'");
      }
      if (depth(e.path()) > ImageFormat.MAX_DEPTH) {
        throw new ImageException(image + ": catalog: '" + e.path() + "' nests deeper than "
            + ImageFormat.MAX_DEPTH + " directories");
      }
    }
    for (Entry e : entries) {
      PathBytes parent = e.path().parent();
      if (parent != null && types.get(parent) != EntryType.DIRECTORY) {
        throw new ImageException(
            image + ": catalog: '" + e.path() + "' is not inside a directory entry");
      }
    }
  }

  /**
   * Each file's extents name existing shards, lie inside them and cover the file exactly; no
   * two extents share a byte of a shard. Overlapping extents would have two files decode the
   * same bytes (a crafted image's way to make readers seek backwards); none a writer makes.
   */
  private static void checkExtents(String image, List<Entry> entries, List<ShardInfo> shards)
      throws ImageException {
    int[] counts = new int[shards.size()];
    for (Entry e : entries) {
      if (!e.isFile()) {
        continue;
      }
      long covered = 0;
      for (Extent x : e.extents()) {
        if (x.isReference()) {
          // Checked against the base's shard table when the base is opened (ImageChain).
          if (x.shard() < 0 || x.length() <= 0 || x.offset() > Long.MAX_VALUE - x.length()
              || covered > e.size() - x.length()) {
            throw new ImageException(image + ": catalog: file " + e.path()
                + " has an invalid extent in base " + x.image());
          }
          covered += x.length();
          continue;
        }
        if (x.shard() < 0 || x.shard() >= shards.size()) {
          throw new ImageException(
              image + ": catalog: file " + e.path() + " names missing shard " + x.shard());
        }
        ShardInfo s = shards.get(x.shard());
        if (x.length() <= 0 || x.offset() > s.rawLength() - x.length()) {
          throw new ImageException(
              image + ": catalog: file " + e.path() + " has an extent outside shard "
                  + x.shard());
        }
        if (covered > e.size() - x.length()) {
          throw new ImageException(
              image + ": catalog: file " + e.path() + " extents exceed its size " + e.size());
        }
        covered += x.length();
        counts[x.shard()]++;
      }
      if (covered != e.size()) {
        throw new ImageException(
            image + ": catalog: file " + e.path() + " extents cover " + covered + " of "
                + e.size() + " bytes");
      }
    }
    // Per shard, the extents' offsets, lengths and files; a writer's come sorted by offset.
    long[][] offsets = new long[shards.size()][];
    long[][] lengths = new long[shards.size()][];
    int[][] owners = new int[shards.size()][];
    int[] fill = new int[shards.size()];
    boolean[] unsorted = new boolean[shards.size()];
    for (int s = 0; s < counts.length; s++) {
      offsets[s] = new long[counts[s]];
      lengths[s] = new long[counts[s]];
      owners[s] = new int[counts[s]];
    }
    for (int i = 0; i < entries.size(); i++) {
      for (Extent x : entries.get(i).extents()) {
        if (x.isReference()) {
          continue;
        }
        int s = x.shard();
        int k = fill[s]++;
        unsorted[s] |= k > 0 && offsets[s][k - 1] > x.offset();
        offsets[s][k] = x.offset();
        lengths[s][k] = x.length();
        owners[s][k] = i;
      }
    }
    for (int s = 0; s < shards.size(); s++) {
      Integer[] order = new Integer[offsets[s].length];
      for (int k = 0; k < order.length; k++) {
        order[k] = k;
      }
      if (unsorted[s]) {
        long[] off = offsets[s];
        Arrays.sort(order, Comparator.comparingLong(k -> off[k]));
      }
      long end = 0;
      int last = -1;
      for (int k : order) {
        if (offsets[s][k] < end) {
          throw new ImageException(image + ": catalog: file " + entries.get(owners[s][k]).path()
              + " overlaps file " + entries.get(last).path() + " in shard " + s);
        }
        end = offsets[s][k] + lengths[s][k];
        last = owners[s][k];
      }
    }
    checkReferences(image, entries);
  }

  /**
   * No two references share a byte of a base's shard: an incremental image that had two files
   * point at the same bytes would pass every check of its own and fail in its (intact) base,
   * after a restore had written files. Refused here, naming the image that is wrong.
   */
  private static void checkReferences(String image, List<Entry> entries) throws ImageException {
    java.util.Map<Long, long[]> last = new java.util.HashMap<>();
    boolean sorted = true;
    int refs = 0;
    for (int i = 0; i < entries.size() && sorted; i++) {
      for (Extent x : entries.get(i).extents()) {
        if (!x.isReference()) {
          continue;
        }
        refs++;
        long key = ((long) x.image() << 32) | (x.shard() & 0xffffffffL);
        long[] prev = last.get(key);
        if (prev != null && x.offset() < prev[0]) {
          sorted = false;
          break;
        }
        if (prev != null && x.offset() < prev[1]) {
          throw new ImageException(image + ": catalog: file " + entries.get(i).path()
              + " references bytes of base " + x.image() + " (shard " + x.shard()
              + ") that file " + entries.get((int) prev[2]).path() + " references too;"
              + " no image is saved so");
        }
        last.put(key, new long[] {x.offset(), x.offset() + x.length(), i});
      }
    }
    if (sorted || refs == 0) {
      return;
    }
    // Not in a writer's order: sort every reference by base, shard and offset, then look again.
    long[][] all = new long[refs][];
    int n = 0;
    for (int i = 0; i < entries.size(); i++) {
      for (Extent x : entries.get(i).extents()) {
        if (x.isReference()) {
          all[n++] = new long[] {((long) x.image() << 32) | (x.shard() & 0xffffffffL),
              x.offset(), x.offset() + x.length(), i};
        }
      }
    }
    Arrays.sort(all, Comparator.<long[]>comparingLong(r -> r[0]).thenComparingLong(r -> r[1]));
    for (int k = 1; k < n; k++) {
      if (all[k][0] == all[k - 1][0] && all[k][1] < all[k - 1][2]) {
        throw new ImageException(image + ": catalog: file " + entries.get((int) all[k][3]).path()
            + " references bytes of base " + (all[k][0] >>> 32) + " (shard "
            + (int) all[k][0] + ") that file " + entries.get((int) all[k - 1][3]).path()
            + " references too; no image is saved so");
      }
    }
  }

  /** Why a catalog path is unsafe to restore, or {@code null} if it is a clean relative path. */
  public static String pathProblem(PathBytes path) {
    byte[] p = path.bytes();
    if (p.length == 0) {
      return "empty";
    }
    if (p[0] == '/') {
      return "absolute";
    }
    if (indexOf(p, (byte) 0) >= 0) {
      return "contains NUL";
    }
    int start = 0;
    while (start <= p.length) {
      int end = start;
      while (end < p.length && p[end] != '/') {
        end++;
      }
      int len = end - start;
      if (len == 0
          || (len == 1 && p[start] == '.')
          || (len == 2 && p[start] == '.' && p[start + 1] == '.')) {
        return "has an empty, '.' or '..' component";
      }
      start = end + 1;
    }
    return null;
  }

  /** How many components {@code path} has. */
  public static int depth(PathBytes path) {
    int n = path.isEmpty() ? 0 : 1;
    for (byte b : path.bytes()) {
      n += b == '/' ? 1 : 0;
    }
    return n;
  }

  private static int indexOf(byte[] b, byte v) {
    for (int i = 0; i < b.length; i++) {
      if (b[i] == v) {
        return i;
      }
    }
    return -1;
  }

  private static void writeText(DataOutputStream out, String s) throws IOException {
    writeBytes(out, PathBytes.of(s), "text");
  }

  private static void writeBytes(DataOutputStream out, PathBytes b, String what)
      throws IOException {
    if (b.length() > MAX_NAME_BYTES) {
      throw new IOException(what + " longer than " + MAX_NAME_BYTES + " bytes: " + b);
    }
    out.writeShort(b.length());
    out.write(b.bytes());
  }

  /** Bounds-checked reads that name what they were reading when the bytes run out. */
  private static final class Reader {
    final String image;
    final ByteBuffer b;

    Reader(String image, ByteBuffer b) {
      this.image = image;
      this.b = b;
    }

    ImageException fail(String msg) {
      return new ImageException(image + ": catalog: " + msg);
    }

    void need(int n, String what) throws ImageException {
      if (b.remaining() < n) {
        throw fail("truncated in " + what);
      }
    }

    int uint8(String what) throws ImageException {
      need(1, what);
      return Byte.toUnsignedInt(b.get());
    }

    int int32(String what) throws ImageException {
      need(4, what);
      return b.getInt();
    }

    long int32unsigned(String what) throws ImageException {
      need(4, what);
      return Integer.toUnsignedLong(b.getInt());
    }

    long int64Signed(String what) throws ImageException {
      need(8, what);
      return b.getLong();
    }

    long int64(String what) throws ImageException {
      long v = int64Signed(what);
      if (v < 0) {
        throw fail(what + " is out of range");
      }
      return v;
    }

    /** A u32 count of items of at least {@code minBytes} each, bounded by the bytes left. */
    long count(int minBytes, String what) throws ImageException {
      long n = int32unsigned(what);
      if (n > b.remaining() / minBytes) {
        throw fail(what + " " + n + " exceeds what the catalog can hold");
      }
      return n;
    }

    byte[] bytes(int n, String what) throws ImageException {
      need(n, what);
      byte[] out = new byte[n];
      b.get(out);
      return out;
    }

    /** A u16-prefixed byte string: a path or symlink target, any bytes. */
    PathBytes name(String what) throws ImageException {
      need(2, what);
      return PathBytes.wrap(bytes(Short.toUnsignedInt(b.getShort()), what));
    }

    /** A u16-prefixed UTF-8 string: the library name, the codec. */
    String text(String what) throws ImageException {
      byte[] raw = name(what).bytes();
      try {
        return StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(raw))
            .toString();
      } catch (CharacterCodingException e) {
        throw fail(what + " is not valid UTF-8");
      }
    }
  }
}

package io.beamsave.transforms.image;

import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Serializes the catalog to its raw bytes and back (docs/image-format.md, "Catalog"). Decoding
 * trusts nothing: every count and length is checked against the bytes that are left, and the
 * result is checked for consistency (paths, parents, extents, shard layout) before it is
 * returned.
 */
public final class CatalogCodec {
  private static final int MAX_PATH_BYTES = 65_535;
  /** Smallest encodings, used to bound counts by the bytes left. */
  private static final int MIN_ENTRY_BYTES = 2 + 1 + 1 + 4 + 4 + 4 + 8 + 4 + 8;

  private static final int EXTENT_BYTES = 4 + 8 + 8 + ImageFormat.DIGEST_SIZE;
  private static final int MIN_SHARD_BYTES = 8 + 8 + 8 + 4;

  private CatalogCodec() {}

  public static byte[] encode(Catalog c) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + c.entries().size() * 96);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.write(ImageFormat.CATALOG_MAGIC);
      writeString(out, c.library());
      writeString(out, c.codecSpec());
      out.writeLong(c.createdMillis());
      out.writeInt(c.blockSize());
      out.writeLong(c.shardSize());
      out.writeInt(c.entries().size());
      for (Entry e : c.entries()) {
        writeEntryMetadata(out, e);
        if (e.isFile()) {
          out.writeInt(e.extents().size());
          for (Extent x : e.extents()) {
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
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /**
   * Writes an entry's metadata (everything but its extents) as the catalog lays it out; the
   * pipeline's listing uses the same encoding.
   */
  public static void writeEntryMetadata(DataOutputStream out, Entry e) throws IOException {
    writeString(out, e.path());
    out.writeByte(e.type().code());
    out.writeByte(e.flags());
    out.writeInt(e.mode());
    out.writeInt(e.uid());
    out.writeInt(e.gid());
    out.writeLong(e.mtimeSeconds());
    out.writeInt(e.mtimeNanos());
    out.writeLong(e.size());
    if (e.type() == EntryType.SYMLINK) {
      writeString(out, e.linkTarget());
    }
  }

  /**
   * Reads what {@link #writeEntryMetadata} wrote, from a trusted source (the pipeline's own
   * listing, not an image: images go through {@link #decode} and its checks).
   */
  public static Entry readEntryMetadata(DataInput in) throws IOException {
    String path = readString(in);
    EntryType type = EntryType.fromCode(in.readUnsignedByte());
    int flags = in.readUnsignedByte();
    int mode = in.readInt();
    int uid = in.readInt();
    int gid = in.readInt();
    long mtime = in.readLong();
    int nanos = in.readInt();
    long size = in.readLong();
    String target = type == EntryType.SYMLINK ? readString(in) : null;
    return new Entry(path, type, flags, mode, uid, gid, mtime, nanos, size, target, List.of());
  }

  private static String readString(DataInput in) throws IOException {
    byte[] b = new byte[in.readUnsignedShort()];
    in.readFully(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  /**
   * Decodes and validates a catalog.
   *
   * @param image names the image in error messages
   * @param catalogOffset where the catalog starts in the image: the shards must end there
   */
  /** What an image holds, in two words: its library and codec. */
  public record Label(String library, String codec) {}

  /** Decodes the leading fields of a catalog, given at least its first block. */
  public static Label decodeLabel(String image, byte[] rawPrefix) throws ImageException {
    Reader in = new Reader(image, ByteBuffer.wrap(rawPrefix));
    byte[] magic = in.bytes(ImageFormat.CATALOG_MAGIC.length, "catalog magic");
    if (!Arrays.equals(magic, ImageFormat.CATALOG_MAGIC)) {
      throw new ImageException(image + ": catalog: bad magic");
    }
    return new Label(in.string("library name"), in.string("codec"));
  }

  public static Catalog decode(String image, byte[] raw, long catalogOffset)
      throws ImageException {
    Reader in = new Reader(image, ByteBuffer.wrap(raw));
    byte[] magic = in.bytes(ImageFormat.CATALOG_MAGIC.length, "catalog magic");
    if (!Arrays.equals(magic, ImageFormat.CATALOG_MAGIC)) {
      throw new ImageException(image + ": catalog: bad magic");
    }
    String library = in.string("library name");
    String codec = in.string("codec");
    long created = in.int64Signed("created");
    int blockSize = in.int32("block size");
    long shardSize = in.int64("shard size");
    if (blockSize < ImageFormat.MIN_BLOCK_SIZE || blockSize > ImageFormat.MAX_BLOCK_SIZE) {
      throw new ImageException(image + ": catalog: block size " + blockSize + " out of range");
    }
    if (shardSize < blockSize) {
      throw new ImageException(image + ": catalog: shard size smaller than block size");
    }
    long entryCount = in.count(MIN_ENTRY_BYTES, "entry count");
    List<Entry> entries = new ArrayList<>((int) entryCount);
    for (int i = 0; i < entryCount; i++) {
      entries.add(readEntry(in, i));
    }
    long shardCount = in.count(MIN_SHARD_BYTES, "shard count");
    List<ShardInfo> shards = new ArrayList<>((int) shardCount);
    for (int i = 0; i < shardCount; i++) {
      shards.add(readShard(in, i, blockSize));
    }
    checkLayout(image, shards, catalogOffset);
    if (in.b.hasRemaining()) {
      throw new ImageException(image + ": catalog: " + in.b.remaining() + " trailing bytes");
    }
    checkTree(image, entries, shards);
    return new Catalog(library, codec, created, blockSize, shardSize, entries, shards);
  }

  private static Entry readEntry(Reader in, int index) throws ImageException {
    String what = "entry " + index;
    String path = in.string(what + " path");
    String where = what + " (" + path + ")";
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
    long size = in.int64(where + " size");
    if ((flags & ~Entry.FLAG_CHANGED) != 0 || (mode & ~07777) != 0 || nanos < 0
        || nanos >= 1_000_000_000 || (type != EntryType.FILE && size != 0)) {
      throw in.fail(where + ": invalid flags, mode, mtime or size");
    }
    String target = null;
    List<Extent> extents = List.of();
    if (type == EntryType.SYMLINK) {
      target = in.string(where + " symlink target");
      if (target.isEmpty() || target.indexOf('\0') >= 0) {
        throw in.fail(where + ": invalid symlink target");
      }
    }
    if (type == EntryType.FILE) {
      long n = in.count(EXTENT_BYTES, where + " extent count");
      extents = new ArrayList<>((int) n);
      for (int k = 0; k < n; k++) {
        int shard = in.int32(where + " extent");
        long offset = in.int64(where + " extent");
        long length = in.int64(where + " extent");
        byte[] digest = in.bytes(ImageFormat.DIGEST_SIZE, where + " digest");
        extents.add(new Extent(shard, offset, length, digest));
      }
    }
    return new Entry(path, type, flags, mode, uid, gid, mtime, nanos, size, target, extents);
  }

  private static ShardInfo readShard(Reader in, int index, int blockSize)
      throws ImageException {
    String where = "shard " + index;
    long offset = in.int64(where + " offset");
    long stored = in.int64(where + " stored length");
    long rawLen = in.int64(where + " raw length");
    long blocks = in.count(4, where + " block count");
    int[] lengths = new int[(int) blocks];
    long sum = 0;
    for (int k = 0; k < blocks; k++) {
      long len = in.int32unsigned(where + " block length");
      if (len < ImageFormat.BLOCK_HEADER_SIZE
          || len > ImageFormat.BLOCK_HEADER_SIZE + (long) blockSize) {
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
    return new ShardInfo(offset, stored, rawLen, lengths);
  }

  /** Shards lie, in any order, between the header and the catalog, and never overlap. */
  private static void checkLayout(String image, List<ShardInfo> shards, long catalogOffset)
      throws ImageException {
    Integer[] order = new Integer[shards.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    java.util.Arrays.sort(order, java.util.Comparator.comparingLong(i -> shards.get(i).imageOffset()));
    long end = ImageFormat.HEADER_SIZE;
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

  private static void checkTree(String image, List<Entry> entries, List<ShardInfo> shards)
      throws ImageException {
    Map<String, EntryType> types = new HashMap<>(entries.size() * 2);
    for (Entry e : entries) {
      String problem = pathProblem(e.path());
      if (problem != null) {
        throw new ImageException(image + ": catalog: unsafe path '" + e.path() + "': " + problem);
      }
      if (types.put(e.path(), e.type()) != null) {
        throw new ImageException(image + ": catalog: duplicate path '" + e.path() + "'");
      }
    }
    for (Entry e : entries) {
      int slash = e.path().lastIndexOf('/');
      if (slash > 0 && types.get(e.path().substring(0, slash)) != EntryType.DIRECTORY) {
        throw new ImageException(
            image + ": catalog: '" + e.path() + "' is not inside a directory entry");
      }
      if (!e.isFile()) {
        continue;
      }
      long covered = 0;
      for (Extent x : e.extents()) {
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
        covered += x.length();
      }
      if (covered != e.size()) {
        throw new ImageException(
            image + ": catalog: file " + e.path() + " extents cover " + covered + " of "
                + e.size() + " bytes");
      }
    }
  }

  /** Why a catalog path is unsafe to restore, or {@code null} if it is a clean relative path. */
  public static String pathProblem(String path) {
    if (path.isEmpty()) {
      return "empty";
    }
    if (path.startsWith("/")) {
      return "absolute";
    }
    if (path.indexOf('\0') >= 0) {
      return "contains NUL";
    }
    int start = 0;
    while (start <= path.length()) {
      int end = path.indexOf('/', start);
      if (end < 0) {
        end = path.length();
      }
      int len = end - start;
      if (len == 0
          || (len == 1 && path.charAt(start) == '.')
          || (len == 2 && path.charAt(start) == '.' && path.charAt(start + 1) == '.')) {
        return "has an empty, '.' or '..' component";
      }
      start = end + 1;
    }
    return null;
  }

  private static void writeString(DataOutputStream out, String s) throws IOException {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > MAX_PATH_BYTES) {
      throw new IOException("name longer than " + MAX_PATH_BYTES + " bytes: " + s);
    }
    out.writeShort(b.length);
    out.write(b);
  }

  /** Bounds-checked reads that name what they were reading when the bytes run out. */
  private static final class Reader {
    final String image;
    final ByteBuffer b;
    final CharsetDecoder utf8 =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);

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

    String string(String what) throws ImageException {
      need(2, what);
      int len = Short.toUnsignedInt(b.getShort());
      byte[] raw = bytes(len, what);
      try {
        return utf8.decode(ByteBuffer.wrap(raw)).toString();
      } catch (CharacterCodingException e) {
        throw fail(what + " is not valid UTF-8");
      }
    }
  }
}

package io.beamsave.transforms.image;

import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.crypt.Envelope;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.block.BlockDecoder;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.CatalogReader;
import io.beamsave.transforms.image.catalog.Entry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.zip.CRC32C;
import javax.crypto.spec.SecretKeySpec;

/**
 * Opens an image from its end: checks header and trailer, then reads and validates the catalog;
 * an encrypted image's with the key that one of the operator's {@link Keys} unwraps. Shard data
 * is read separately, by {@link ShardReader}, with its own channel per worker.
 */
public final class ImageReader {
  private ImageReader() {}

  /** What an encrypted image's trailer binds its catalog key to, beside the image. */
  private static final byte[] CATALOG = "catalog".getBytes(StandardCharsets.US_ASCII);

  /** Reads and validates the catalog of the image at {@code path}. */
  public static Catalog readCatalog(Path path) throws IOException {
    try (ImageSource src = FileImageSource.open(path)) {
      return readCatalog(src);
    }
  }

  /**
   * Where the catalog lies, as the trailer says, the image's format version, and where its
   * header ends and the shards may begin. An encrypted image also has its header ({@code
   * envelope}) and its catalog's key, wrapped ({@code sealedCatalog}); its {@code catalogRaw}
   * is sealed with that key and -1 here.
   */
  public record Trailer(long catalogOffset, long catalogStored, long catalogRaw, int version,
      long dataStart, Envelope envelope, byte[] sealedCatalog) {
    public boolean encrypted() {
      return envelope != null;
    }

    /** The length of the trailer at the image's end. */
    public int size() {
      return encrypted() ? ImageFormat.ENCRYPTED_TRAILER_SIZE : ImageFormat.TRAILER_SIZE;
    }
  }

  /** Reads and validates the catalog of an image that is not encrypted. */
  public static Catalog readCatalog(ImageSource ch) throws IOException {
    return readCatalog(ch, Keys.NONE);
  }

  /**
   * Reads and validates the catalog of an image: header, trailer and catalog blocks only. An
   * encrypted image is opened with {@code keys}; its catalog carries the image's key. Given any
   * key, an image that is not encrypted is refused: whoever can write where the images are
   * could otherwise put a plain image of their own making in the place of an encrypted one,
   * and a reader expecting what its keys protect would take it.
   */
  public static Catalog readCatalog(ImageSource ch, Keys keys) throws IOException {
    return readCatalog(ch, keys, false);
  }

  /**
   * Like {@link #readCatalog(ImageSource, Keys)}; with {@code plainToo}, an image that is not
   * encrypted is read whatever keys are given (to list what a directory holds, say).
   */
  public static Catalog readCatalog(ImageSource ch, Keys keys, boolean plainToo)
      throws IOException {
    String name = ch.name();
    Opened o = open(ch, keys, plainToo);
    Trailer t = o.trailer();
    try {
      Catalog c;
      if (ImageFormat.paged(t.version())) {
        CatalogHead h = readHead(ch, o);
        List<Entry> entries =
            new ArrayList<>((int) Math.min(h.totals().entries(), 1 << 20));
        for (int i = 0, block = 0; i < h.pages().size(); block += h.pages().get(i).blocks(), i++) {
          entries.addAll(readPage(ch, h, i, block));
        }
        c = h.whole(name, entries);
      } else {
        ch.willRead(t.catalogOffset(), t.catalogStored());
        byte[] raw = readCatalogBlocks(name, ch, t.catalogOffset(), t.catalogStored(),
            o.rawLength(), false, o.sealKey(), 0);
        c = CatalogReader.decode(name, raw, t.dataStart(), t.catalogOffset(), t.version());
      }
      if (o.key() != null) {
        checkLineage(name, c, t.envelope());
        return c.withKey(o.key());
      }
      return c;
    } catch (OutOfMemoryError e) {
      throw new ImageException(name + ": not enough memory for its catalog of " + o.rawLength()
          + " bytes; give Java more (BEAMSAVE_JAVA_OPTS=-Xmx...)");
    }
  }

  /**
   * The head of an image's catalog: for a paged catalog (version 5 on), its head alone, whose
   * pages {@link #readPage} then reads one at a time; for an older image, whose catalog is one
   * piece, a head of one page that holds every entry, read whole.
   */
  public static CatalogHead readHead(ImageSource ch, Keys keys, boolean plainToo)
      throws IOException {
    Opened o = open(ch, keys, plainToo);
    if (!ImageFormat.paged(o.trailer().version())) {
      return CatalogHead.ofWhole(readCatalog(ch, keys, plainToo));
    }
    CatalogHead h = readHead(ch, o);
    if (o.key() != null) {
      checkLineage(ch.name(), h.catalog(), o.trailer().envelope());
      return h.withKey(o.key());
    }
    return h;
  }

  /** The entries of page {@code index} of {@code head}, read and checked. */
  public static List<Entry> readPage(ImageSource ch, CatalogHead head, int index)
      throws IOException {
    if (head.whole() != null) {
      return head.whole().entries();
    }
    return readPage(ch, head, index, head.firstBlock(index));
  }

  private static List<Entry> readPage(ImageSource ch, CatalogHead head, int index,
      int firstBlock) throws IOException {
    CatalogHead.Page p = head.pages().get(index);
    SecretKeySpec key = head.pageKey() == null ? null : BlockSealer.key(head.pageKey());
    byte[] raw = readCatalogBlocks(ch.name() + ": catalog page " + index, ch, p.offset(),
        p.storedLength(), p.rawLength(), false, key, firstBlock);
    return head.decodePage(ch.name(), index, raw);
  }

  private static CatalogHead readHead(ImageSource ch, Opened o) throws IOException {
    Trailer t = o.trailer();
    byte[] raw = readCatalogBlocks(ch.name(), ch, t.catalogOffset(), t.catalogStored(),
        o.rawLength(), false, o.sealKey(), 0);
    return CatalogHead.decode(ch.name(), raw, t.dataStart(), t.catalogOffset(), t.version());
  }

  /**
   * An image opened at its ends: the trailer, the image's key and its catalog's (null when not
   * encrypted), and the raw length of the catalog (or of a paged catalog's head).
   */
  private record Opened(Trailer trailer, ImageKey key, SecretKeySpec sealKey, long rawLength) {}

  private static Opened open(ImageSource ch, Keys keys, boolean plainToo) throws IOException {
    String name = ch.name();
    Trailer t = readEnds(ch);
    if (!t.encrypted() && !keys.isEmpty() && !plainToo) {
      throw new ImageException(name + " is not encrypted, yet keys were given to open it: it"
          + " is no image saved with them (one may have been put in its place); to read it"
          + " anyway, give no --identity, --key-file or --password-file, and unset"
          + " BEAMSAVE_PASSWORD");
    }
    ImageKey key = t.encrypted() ? ImageKey.open(name, t.envelope(), keys) : null;
    CatalogSeal seal = key == null ? null : openCatalogSeal(name, t, key);
    return new Opened(t, key, seal == null ? null : seal.key(),
        seal == null ? t.catalogRaw() : seal.rawLength());
  }

  /**
   * The header of an encrypted image records its id and lineage for readers without a key; the
   * catalog, authenticated, must agree, so what they see is what the image is.
   */
  private static void checkLineage(String name, Catalog c, Envelope e) throws ImageException {
    boolean basesKnown = new HashSet<>(e.bases()).containsAll(
        c.bases().stream().map(Catalog.Base::id).toList());
    if (!c.id().equals(e.id()) || c.createdMillis() != e.createdMillis()
        || c.depth() != e.depth() || !java.util.Objects.equals(c.origin(), e.origin())
        || !basesKnown) {
      throw new ImageException(name + ": the catalog's id or lineage differs from the header's"
          + " (the image was put together from two images)");
    }
  }

  /** The library and codec an image was saved with; see {@link #readLabel(ImageSource, Keys)}. */
  public static CatalogReader.Label readLabel(ImageSource ch) throws IOException {
    return readLabel(ch, Keys.NONE);
  }

  /**
   * The library and codec an image was saved with, from the start of its catalog only: far
   * cheaper than {@link #readCatalog} for a catalog of many entries, and it checks less.
   */
  public static CatalogReader.Label readLabel(ImageSource ch, Keys keys) throws IOException {
    Trailer t = readEnds(ch);
    CatalogSeal seal = t.encrypted()
        ? openCatalogSeal(ch.name(), t, ImageKey.open(ch.name(), t.envelope(), keys)) : null;
    byte[] first = readCatalogBlocks(ch.name(), ch, t.catalogOffset(), t.catalogStored(),
        seal == null ? t.catalogRaw() : seal.rawLength(), true,
        seal == null ? null : seal.key(), 0);
    return CatalogReader.decodeLabel(ch.name(), first);
  }

  /**
   * Checks the header and the trailer, the cheap proof that a file is a complete image, and
   * returns where the catalog is. Needs no key: an encrypted image's header and trailer are
   * checked as far as their checksums and structure go.
   */
  public static Trailer readEnds(ImageSource ch) throws IOException {
    String name = ch.name();
    long size = ch.size();
    if (size < ImageFormat.HEADER_SIZE + ImageFormat.TRAILER_SIZE) {
      throw new ImageException(name + ": too short to be an image (" + size + " bytes)");
    }
    ByteBuffer header = readAt(ch, 0, ImageFormat.HEADER_SIZE, name);
    int headerVersion = ImageFormat.checkHeader(name, header);
    if (ImageFormat.encrypted(headerVersion)) {
      return readEncryptedEnds(ch, header.array(), size);
    }
    ByteBuffer t = readAt(ch, size - ImageFormat.TRAILER_SIZE, ImageFormat.TRAILER_SIZE, name);
    byte[] magic = Arrays.copyOfRange(t.array(), 32, 40);
    if (!Arrays.equals(magic, ImageFormat.TRAILER_MAGIC)) {
      throw new ImageException(name + ": trailer missing (image truncated or incomplete)");
    }
    CRC32C crc = new CRC32C();
    crc.update(t.array(), 0, 28);
    long catalogOffset = t.getLong();
    long catalogStored = t.getLong();
    long catalogRaw = t.getLong();
    int version = Short.toUnsignedInt(t.getShort());
    int reserved = Short.toUnsignedInt(t.getShort());
    if (t.getInt() != (int) crc.getValue()) {
      throw new ImageException(name + ": trailer checksum mismatch");
    }
    if (version != headerVersion || reserved != 0) {
      throw new ImageException(name + ": trailer has version " + version + ", header "
          + headerVersion);
    }
    if (catalogOffset < ImageFormat.HEADER_SIZE
        || catalogStored < ImageFormat.BLOCK_HEADER_SIZE
        || catalogOffset > size - ImageFormat.TRAILER_SIZE - catalogStored
        || catalogOffset + catalogStored + ImageFormat.TRAILER_SIZE != size) {
      throw new ImageException(name + ": trailer points outside the image");
    }
    checkCatalogRaw(name, catalogRaw, catalogStored);
    return new Trailer(catalogOffset, catalogStored, catalogRaw, version,
        ImageFormat.HEADER_SIZE, null, null);
  }

  /** A catalog's raw length, bounded before anything is allocated for it. */
  private static void checkCatalogRaw(String name, long catalogRaw, long catalogStored)
      throws ImageException {
    if (catalogRaw <= 0
        || catalogRaw > ImageFormat.MAX_CATALOG_RAW
        || catalogRaw > catalogStored * ImageFormat.MAX_CATALOG_EXPANSION
            + ImageFormat.CATALOG_SLACK) {
      throw new ImageException(name + ": trailer claims a catalog of " + catalogRaw
          + " bytes from " + catalogStored + " stored: more than any catalog expands");
    }
  }

  private static Trailer readEncryptedEnds(ImageSource ch, byte[] first, long size)
      throws IOException {
    String name = ch.name();
    if (size < ImageFormat.HEADER_SIZE + ImageFormat.ENCRYPTED_TRAILER_SIZE) {
      throw new ImageException(name + ": too short to be an image (" + size + " bytes)");
    }
    int headerLength = Envelope.length(name, first, size);
    Envelope envelope = Envelope.decode(name, readAt(ch, 0, headerLength, name).array());
    int n = ImageFormat.ENCRYPTED_TRAILER_SIZE;
    byte[] t = readAt(ch, size - n, n, name).array();
    if (!Arrays.equals(Arrays.copyOfRange(t, n - 8, n), ImageFormat.TRAILER_MAGIC)) {
      throw new ImageException(name + ": trailer missing (image truncated or incomplete)");
    }
    CRC32C crc = new CRC32C();
    crc.update(t, 0, n - 12);
    ByteBuffer b = ByteBuffer.wrap(t);
    if (b.getInt(n - 12) != (int) crc.getValue()) {
      throw new ImageException(name + ": trailer checksum mismatch");
    }
    long catalogOffset = b.getLong(0);
    long catalogStored = b.getLong(8);
    int version = Short.toUnsignedInt(b.getShort(n - 16));
    int reserved = Short.toUnsignedInt(b.getShort(n - 14));
    if (version != envelope.version() || reserved != 0) {
      throw new ImageException(name + ": trailer has version " + version + ", header "
          + envelope.version());
    }
    long minFrame = ImageFormat.BLOCK_HEADER_SIZE + BlockSealer.OVERHEAD;
    if (catalogOffset < headerLength || catalogStored < minFrame
        || catalogOffset > size - n - catalogStored
        || catalogOffset + catalogStored + n != size) {
      throw new ImageException(name + ": trailer points outside the image");
    }
    return new Trailer(catalogOffset, catalogStored, -1, version, headerLength, envelope,
        Arrays.copyOfRange(t, 16, 16 + SEALED_CATALOG_SIZE));
  }

  /** The catalog key and raw length, sealed: 32 + 8 bytes with the wrap's nonce and tag. */
  public static final int SEALED_CATALOG_SIZE = 40 + ImageKey.WRAP_OVERHEAD;

  /** An encrypted image's catalog key and raw length, as its trailer seals them. */
  record CatalogSeal(SecretKeySpec key, long rawLength) {}

  private static CatalogSeal openCatalogSeal(String name, Trailer t, ImageKey key)
      throws ImageException {
    byte[] plain = key.unwrap(t.sealedCatalog(), catalogContext(t.catalogOffset(),
        t.catalogStored()));
    if (plain == null || plain.length != 40) {
      throw new ImageException(name + ": trailer does not authenticate: it was changed after"
          + " the image was saved (tampered)");
    }
    long raw = ByteBuffer.wrap(plain).getLong(32);
    checkCatalogRaw(name, raw, t.catalogStored());
    return new CatalogSeal(BlockSealer.key(Arrays.copyOf(plain, 32)), raw);
  }

  /** The trailer's first 16 bytes, to which its sealed catalog key is bound. */
  static byte[] catalogContext(long catalogOffset, long catalogStored) {
    return ByteBuffer.allocate(CATALOG.length + 16).put(CATALOG).putLong(catalogOffset)
        .putLong(catalogStored).array();
  }

  /**
   * The trailer of an encrypted image whose catalog, sealed under {@code catalogKey}, holds
   * {@code rawLength} raw bytes in {@code stored} bytes at {@code offset}.
   */
  static byte[] encryptedTrailer(ImageKey key, byte[] catalogKey, long rawLength, long offset,
      long stored) {
    byte[] sealed = key.wrap(ByteBuffer.allocate(40).put(catalogKey).putLong(rawLength).array(),
        catalogContext(offset, stored));
    ByteBuffer t = ByteBuffer.allocate(ImageFormat.ENCRYPTED_TRAILER_SIZE);
    t.putLong(offset).putLong(stored).put(sealed);
    t.putShort((short) key.envelope().version()).putShort((short) 0);
    CRC32C crc = new CRC32C();
    crc.update(t.array(), 0, t.position());
    t.putInt((int) crc.getValue());
    t.put(ImageFormat.TRAILER_MAGIC);
    return t.array();
  }

  /**
   * Reads and decodes the blocks at {@code offset} that hold {@code rawTotal} raw bytes: a
   * catalog, a head or a page; sealed under {@code key}, their frames are numbered from {@code
   * firstIndex}.
   */
  private static byte[] readCatalogBlocks(String name, ImageSource ch, long offset, long stored,
      long rawTotal, boolean firstOnly, SecretKeySpec key, int firstIndex) throws IOException {
    // rawTotal is bounded by readEnds; the blocks are decoded straight into their place.
    byte[] raw = firstOnly ? null : new byte[(int) rawTotal];
    int filled = 0;
    long pos = offset;
    long end = offset + stored;
    int index = firstIndex;
    int head = key == null ? ImageFormat.BLOCK_HEADER_SIZE : BlockSealer.FRAME_HEADER;
    try (BlockDecoder decoder = new BlockDecoder()) {
      while (pos < end) {
        String where = name + ": catalog block " + (index - firstIndex);
        if (end - pos < head) {
          throw new ImageException(where + ": truncated");
        }
        ByteBuffer h = readAt(ch, pos, head, name);
        int len;
        long blockRaw;
        byte[] block;
        int blockLen;
        if (key == null) {
          blockRaw = Integer.toUnsignedLong(h.getInt(4));
          long blockStored = Integer.toUnsignedLong(h.getInt(8));
          if (blockRaw == 0 || blockRaw > ImageFormat.MAX_BLOCK_SIZE || blockStored > blockRaw
              || blockStored > end - pos - head || blockRaw > rawTotal - filled) {
            throw new ImageException(where + ": invalid lengths");
          }
          len = (int) (head + blockStored);
          block = readAt(ch, pos, len, name).array();
          blockLen = len;
        } else {
          long sealed = Integer.toUnsignedLong(h.getInt(0));
          if (sealed < ImageFormat.BLOCK_HEADER_SIZE + BlockSealer.TAG
              || sealed > ImageFormat.BLOCK_HEADER_SIZE + ImageFormat.MAX_BLOCK_SIZE
                  + BlockSealer.TAG
              || sealed > end - pos - head) {
            throw new ImageException(where + ": invalid lengths");
          }
          len = (int) (head + sealed);
          blockLen = decoder.open(key, index, readAt(ch, pos, len, name).array(), len, where);
          block = decoder.opened();
          blockRaw = Integer.toUnsignedLong(ByteBuffer.wrap(block).getInt(4));
        }
        if (blockRaw == 0 || blockRaw > ImageFormat.MAX_BLOCK_SIZE
            || blockRaw > rawTotal - filled) {
          throw new ImageException(where + ": invalid lengths");
        }
        if (raw == null) {
          raw = new byte[(int) blockRaw];
        }
        decoder.decode(block, blockLen, raw, filled, (int) blockRaw, where);
        filled += (int) blockRaw;
        if (firstOnly) {
          return raw;
        }
        pos += len;
        index++;
      }
    }
    if (filled != rawTotal) {
      throw new ImageException(name + ": catalog holds " + filled + " of " + rawTotal + " bytes");
    }
    return raw;
  }

  static ByteBuffer readAt(ImageSource ch, long pos, int len, String name) throws IOException {
    byte[] b = new byte[len];
    ch.read(pos, b, 0, len);
    return ByteBuffer.wrap(b);
  }
}

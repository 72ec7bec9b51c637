package io.beamsave.transforms.image;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Opens an image from its end: checks header and trailer, then reads and validates the catalog.
 * Shard data is read separately, by {@link ShardReader}, with its own channel per worker.
 */
public final class ImageReader {
  private ImageReader() {}

  /** Reads and validates the catalog of the image at {@code path}. */
  public static Catalog readCatalog(Path path) throws IOException {
    try (ImageSource src = FileImageSource.open(path)) {
      return readCatalog(src);
    }
  }

  /** Where the catalog lies, as the trailer says, and the image's format version. */
  public record Trailer(long catalogOffset, long catalogStored, long catalogRaw, int version) {}

  /** Reads and validates the catalog of an image: header, trailer and catalog blocks only. */
  public static Catalog readCatalog(ImageSource ch) throws IOException {
    String name = ch.name();
    Trailer t = readEnds(ch);
    ch.willRead(t.catalogOffset(), t.catalogStored());
    try {
      byte[] raw =
          readCatalogBlocks(name, ch, t.catalogOffset(), t.catalogStored(), t.catalogRaw(), false);
      return CatalogCodec.decode(name, raw, t.catalogOffset(), t.version());
    } catch (OutOfMemoryError e) {
      throw new ImageException(name + ": not enough memory for its catalog of " + t.catalogRaw()
          + " bytes; give Java more (BEAMSAVE_JAVA_OPTS=-Xmx...)");
    }
  }

  /**
   * The library and codec an image was saved with, from the start of its catalog only: far
   * cheaper than {@link #readCatalog} for a catalog of many entries, and it checks less.
   */
  public static CatalogCodec.Label readLabel(ImageSource ch) throws IOException {
    Trailer t = readEnds(ch);
    byte[] first =
        readCatalogBlocks(ch.name(), ch, t.catalogOffset(), t.catalogStored(), t.catalogRaw(), true);
    return CatalogCodec.decodeLabel(ch.name(), first);
  }

  /**
   * Checks the header and the trailer, the cheap proof that a file is a complete image, and
   * returns where the catalog is.
   */
  public static Trailer readEnds(ImageSource ch) throws IOException {
    String name = ch.name();
    long size = ch.size();
    if (size < ImageFormat.HEADER_SIZE + ImageFormat.TRAILER_SIZE) {
      throw new ImageException(name + ": too short to be an image (" + size + " bytes)");
    }
    ByteBuffer header = readAt(ch, 0, ImageFormat.HEADER_SIZE, name);
    int headerVersion = ImageFormat.checkHeader(name, header);
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
    if (catalogRaw <= 0
        || catalogRaw > ImageFormat.MAX_CATALOG_RAW
        || catalogRaw > catalogStored * ImageFormat.MAX_CATALOG_EXPANSION
            + ImageFormat.CATALOG_SLACK) {
      throw new ImageException(name + ": trailer claims a catalog of " + catalogRaw
          + " bytes from " + catalogStored + " stored: more than any catalog expands");
    }
    return new Trailer(catalogOffset, catalogStored, catalogRaw, version);
  }

  private static byte[] readCatalogBlocks(
      String name, ImageSource ch, long offset, long stored, long rawTotal, boolean firstOnly)
      throws IOException {
    // rawTotal is bounded by readEnds; the blocks are decoded straight into their place.
    byte[] raw = firstOnly ? null : new byte[(int) rawTotal];
    int filled = 0;
    long pos = offset;
    long end = offset + stored;
    int index = 0;
    try (BlockDecoder decoder = new BlockDecoder()) {
      while (pos < end) {
        String where = name + ": catalog block " + index;
        if (end - pos < ImageFormat.BLOCK_HEADER_SIZE) {
          throw new ImageException(where + ": truncated");
        }
        ByteBuffer h = readAt(ch, pos, ImageFormat.BLOCK_HEADER_SIZE, name);
        long blockRaw = Integer.toUnsignedLong(h.getInt(4));
        long blockStored = Integer.toUnsignedLong(h.getInt(8));
        if (blockRaw == 0
            || blockRaw > ImageFormat.MAX_BLOCK_SIZE
            || blockStored > blockRaw
            || blockStored > end - pos - ImageFormat.BLOCK_HEADER_SIZE
            || blockRaw > rawTotal - filled) {
          throw new ImageException(where + ": invalid lengths");
        }
        int len = (int) (ImageFormat.BLOCK_HEADER_SIZE + blockStored);
        byte[] block = readAt(ch, pos, len, name).array();
        if (raw == null) {
          raw = new byte[(int) blockRaw];
        }
        decoder.decode(block, len, raw, filled, (int) blockRaw, where);
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

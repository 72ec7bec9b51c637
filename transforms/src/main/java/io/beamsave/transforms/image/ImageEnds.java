package io.beamsave.transforms.image;

import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.crypt.Envelope;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32C;
import javax.crypto.spec.SecretKeySpec;

/**
 * The ends of an image (docs/image-format.md, "Header", "Trailer", and the same of "Encrypted
 * images"): the header and the trailer read and checked, the cheap proof that a file is a
 * complete image and of where its catalog lies, and the trailer written after a catalog. An
 * encrypted image's trailer holds its catalog's key and raw length sealed under the image's key,
 * bound to where the catalog lies. Needs no key to check the ends; {@link ImageReader} opens the
 * seal with the image's key, and {@link ImageTail} writes the trailer.
 */
public final class ImageEnds {
  private ImageEnds() {}

  /** What an encrypted image's trailer binds its catalog key to, beside the image. */
  private static final byte[] CATALOG = "catalog".getBytes(StandardCharsets.US_ASCII);

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

  /**
   * Checks the header and the trailer, the cheap proof that a file is a complete image, and
   * returns where the catalog is. Needs no key: an encrypted image's header and trailer are
   * checked as far as their checksums and structure go.
   */
  public static Trailer read(ImageSource ch) throws IOException {
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

  static CatalogSeal openCatalogSeal(String name, Trailer t, ImageKey key)
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
   * The trailer of an image that is not encrypted, of format {@code version}, whose catalog (or
   * a paged catalog's head) holds {@code rawLength} raw bytes in {@code stored} bytes at {@code
   * offset}.
   */
  static byte[] plainTrailer(long offset, long stored, long rawLength, int version) {
    ByteBuffer t = ByteBuffer.allocate(ImageFormat.TRAILER_SIZE);
    t.putLong(offset).putLong(stored).putLong(rawLength);
    t.putShort((short) version).putShort((short) 0);
    CRC32C crc = new CRC32C();
    crc.update(t.array(), 0, 28);
    t.putInt((int) crc.getValue());
    t.put(ImageFormat.TRAILER_MAGIC);
    return t.array();
  }

  /** Reads {@code len} bytes at {@code pos} of {@code ch}. */
  static ByteBuffer readAt(ImageSource ch, long pos, int len, String name) throws IOException {
    byte[] b = new byte[len];
    ch.read(pos, b, 0, len);
    return ByteBuffer.wrap(b);
  }
}

package io.beamsave.transforms.format;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Constants of the image format; docs/image-format.md is the specification. Writers write
 * {@link #VERSION}; readers read every version from {@link #OLDEST_VERSION} on.
 */
public final class ImageFormat {
  /**
   * Version 3: an image id, base images and extents that reference them (incremental saves).
   * Version 2: names as bytes, nanosecond ctime and inode per entry, the library root.
   */
  public static final int VERSION = 3;

  /**
   * Version 4: an encrypted image (docs/image-format.md, "Encrypted images"), whatever else it
   * holds is as in version 3. Writers write it for encrypted images only, so that an image
   * without encryption stays readable by readers of version 3.
   */
  public static final int ENCRYPTED_VERSION = 4;

  public static final int OLDEST_VERSION = 1;
  /** The newest version readers read. */
  public static final int NEWEST_VERSION = ENCRYPTED_VERSION;
  public static final byte[] MAGIC = "BEAMSAVE".getBytes(StandardCharsets.US_ASCII);
  public static final byte[] TRAILER_MAGIC = "BSAVEEND".getBytes(StandardCharsets.US_ASCII);
  public static final byte[] CATALOG_MAGIC = "BSCATLOG".getBytes(StandardCharsets.US_ASCII);
  public static final int HEADER_SIZE = 16;
  public static final int TRAILER_SIZE = 40;
  /** An encrypted image's trailer also holds its catalog's key, wrapped. */
  public static final int ENCRYPTED_TRAILER_SIZE = 100;
  public static final int BLOCK_HEADER_SIZE = 16;
  public static final int MIN_BLOCK_SIZE = 4 * 1024;
  public static final int MAX_BLOCK_SIZE = 64 * 1024 * 1024;
  public static final long MAX_CATALOG_RAW = 1L << 30;
  /**
   * A catalog's raw bytes are at most this many times its stored bytes, plus {@link
   * #CATALOG_SLACK}: real catalogs shrink 3-20 times (paths and digests compress badly), and
   * the bound keeps an image of a few hundred bytes from claiming a gigabyte of catalog.
   */
  public static final int MAX_CATALOG_EXPANSION = 256;

  public static final long CATALOG_SLACK = 1L << 20;

  /**
   * How deep directories may nest in a library: deeper ones are refused by a save and by the
   * validator, which bounds the stack and descriptors every walk of a tree may need (a crafted
   * image nesting 15,000 deep overflowed the restore's stack). The kernel's PATH_MAX allows
   * 2,048 levels of one-letter names; real trees are far shallower.
   */
  public static final int MAX_DEPTH = 1024;
  /** Bytes of an extent digest ({@code image.ExtentDigest}). */
  public static final int DIGEST_SIZE = 8;
  /** Image files end in this; partially written ones add {@link #PARTIAL_SUFFIX}. */
  public static final String EXTENSION = ".bsave";

  public static final String PARTIAL_SUFFIX = ".partial";

  private ImageFormat() {}

  public static byte[] header() {
    ByteBuffer b = ByteBuffer.allocate(HEADER_SIZE);
    b.put(MAGIC).putShort((short) VERSION);
    return b.array();
  }

  /**
   * Checks the first 16 bytes of an image and returns its format version; a version 4 header
   * goes on ({@code crypt.Envelope}), and its bytes 10 to 15 are flags and
   * the header's length.
   */
  public static int checkHeader(String image, ByteBuffer b) throws ImageException {
    byte[] magic = new byte[MAGIC.length];
    b.get(magic);
    if (!java.util.Arrays.equals(magic, MAGIC)) {
      throw new ImageException(image + ": not a beamsave image (bad magic in header)");
    }
    int version = Short.toUnsignedInt(b.getShort());
    if (version < OLDEST_VERSION || version > NEWEST_VERSION) {
      throw new ImageException(image + ": image format version " + version + " not supported"
          + (version > NEWEST_VERSION ? " (written by a newer beamsave)" : ""));
    }
    if (version == ENCRYPTED_VERSION) {
      return version;
    }
    for (int i = 0; i < 6; i++) {
      if (b.get() != 0) {
        throw new ImageException(image + ": header reserved bytes are not zero");
      }
    }
    return version;
  }
}

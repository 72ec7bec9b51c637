package io.beamsave.transforms.image;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** Constants of image format version 1; docs/image-format.md is the specification. */
public final class ImageFormat {
  public static final int VERSION = 1;
  public static final byte[] MAGIC = "BEAMSAVE".getBytes(StandardCharsets.US_ASCII);
  public static final byte[] TRAILER_MAGIC = "BSAVEEND".getBytes(StandardCharsets.US_ASCII);
  public static final byte[] CATALOG_MAGIC = "BSCATLOG".getBytes(StandardCharsets.US_ASCII);
  public static final int HEADER_SIZE = 16;
  public static final int TRAILER_SIZE = 40;
  public static final int BLOCK_HEADER_SIZE = 16;
  public static final int MIN_BLOCK_SIZE = 4 * 1024;
  public static final int MAX_BLOCK_SIZE = 64 * 1024 * 1024;
  public static final long MAX_CATALOG_RAW = 1L << 30;
  /** Bytes of an extent digest ({@link ExtentDigest}). */
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

  static void checkHeader(String image, ByteBuffer b) throws ImageException {
    byte[] magic = new byte[MAGIC.length];
    b.get(magic);
    if (!java.util.Arrays.equals(magic, MAGIC)) {
      throw new ImageException(image + ": not a beamsave image (bad magic in header)");
    }
    int version = Short.toUnsignedInt(b.getShort());
    if (version != VERSION) {
      throw new ImageException(image + ": image format version " + version + " not supported");
    }
    for (int i = 0; i < 6; i++) {
      if (b.get() != 0) {
        throw new ImageException(image + ": header reserved bytes are not zero");
      }
    }
  }
}

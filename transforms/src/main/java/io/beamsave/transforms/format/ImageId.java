package io.beamsave.transforms.format;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * The 128-bit identity of an image, chosen at random when it is saved (format version 3 on).
 * An incremental image names the images whose bytes it references by their ids; an image of
 * an earlier version, which has none, is known by the first 16 bytes of its catalog's digest.
 */
public record ImageId(byte[] bytes) implements java.io.Serializable {
  public static final int SIZE = 16;
  private static final SecureRandom RANDOM = new SecureRandom();

  public ImageId {
    if (bytes.length != SIZE) {
      throw new IllegalArgumentException("an image id has " + SIZE + " bytes");
    }
    bytes = bytes.clone();
  }

  public static ImageId random() {
    byte[] b = new byte[SIZE];
    RANDOM.nextBytes(b);
    return new ImageId(b);
  }

  /** The id an image without one (format versions 1 and 2) is known by. */
  public static ImageId ofCatalogDigest(byte[] digest) {
    return new ImageId(Arrays.copyOf(digest, SIZE));
  }

  public static ImageId parse(String hex) {
    return new ImageId(HexFormat.of().parseHex(hex));
  }

  public boolean isZero() {
    for (byte b : bytes) {
      if (b != 0) {
        return false;
      }
    }
    return true;
  }

  @Override
  public byte[] bytes() {
    return bytes.clone();
  }

  /** SHA-256 of a catalog's raw bytes: what a chain records of each base, to know it again. */
  public static byte[] catalogDigest(byte[] raw) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(raw);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ImageId i && Arrays.equals(bytes, i.bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  @Override
  public String toString() {
    return HexFormat.of().formatHex(bytes);
  }
}

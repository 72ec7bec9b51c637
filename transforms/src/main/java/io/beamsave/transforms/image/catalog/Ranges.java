package io.beamsave.transforms.image.catalog;

import java.util.Arrays;

/**
 * The SHA-256 digest of each range of a file's bytes (format version 13 on): the file cut every
 * {@code 2^shift} bytes from its start, the last range shorter. An incremental save compares a
 * changed file's ranges with its base's at the same offsets and stores only those that differ
 * (docs/image-format.md, "Range digests"). A strong hash, since it decides what is stored: two
 * ranges of equal digest are taken for equal bytes. {@link #NONE} is a file without them: one
 * of an older image, or one no larger than a range.
 *
 * @param shift the range size's power of two, {@link #MIN_SHIFT} .. {@link #MAX_SHIFT}
 * @param digests {@code count} digests of {@link #DIGEST_SIZE} bytes, back to back
 */
public record Ranges(int shift, byte[] digests) implements java.io.Serializable {
  public static final Ranges NONE = new Ranges(0, new byte[0]);

  public static final int DIGEST_SIZE = 32;
  /** The smallest range a catalog may record: the smallest block. */
  public static final int MIN_SHIFT = 12;
  /** The largest: the largest block. */
  public static final int MAX_SHIFT = 26;
  /** The range size a save records: 1 MiB, the default block (docs/image-format.md). */
  public static final int DEFAULT_SHIFT = 20;

  /**
   * The most ranges a file records: 8 MiB of digests, which an entry of a catalog page (at most
   * 64 MiB) always has room for; 256 GiB of a file at the range size a save records. A larger
   * file records none, and is saved whole when it changes.
   */
  public static final int MAX_COUNT = 1 << 18;

  public Ranges {
    if (digests.length % DIGEST_SIZE != 0
        || (digests.length > 0 && (shift < MIN_SHIFT || shift > MAX_SHIFT))) {
      throw new IllegalArgumentException("ranges of 2^" + shift + " bytes, " + digests.length
          + " bytes of digests");
    }
  }

  /** How many ranges a file of {@code size} bytes has, cut every {@code 2^shift} bytes. */
  public static long countFor(long size, int shift) {
    return -Math.floorDiv(-size, 1L << shift);
  }

  /**
   * Whether a file of {@code size} bytes records its ranges: it has more than one, and no more
   * than {@link #MAX_COUNT}.
   */
  public static boolean recordedFor(long size, int shift) {
    return size > (1L << shift) && countFor(size, shift) <= MAX_COUNT;
  }

  public boolean isNone() {
    return digests.length == 0;
  }

  public long rangeSize() {
    return 1L << shift;
  }

  public int count() {
    return digests.length / DIGEST_SIZE;
  }

  /** Whether range {@code k}'s digest is {@code other}'s range {@code j}'s. */
  public boolean sameRange(int k, Ranges other, int j) {
    return Arrays.equals(digests, k * DIGEST_SIZE, (k + 1) * DIGEST_SIZE,
        other.digests, j * DIGEST_SIZE, (j + 1) * DIGEST_SIZE);
  }

  /** Whether range {@code k}'s digest is {@code digest}. */
  public boolean rangeIs(int k, byte[] digest) {
    return Arrays.equals(digests, k * DIGEST_SIZE, (k + 1) * DIGEST_SIZE, digest, 0,
        DIGEST_SIZE);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Ranges r && (r.digests.length == 0 ? digests.length == 0
        : shift == r.shift && Arrays.equals(digests, r.digests));
  }

  @Override
  public int hashCode() {
    return digests.length == 0 ? 0 : shift * 31 + Arrays.hashCode(digests);
  }

  @Override
  public String toString() {
    return isNone() ? "Ranges.NONE" : "Ranges[" + count() + " of 2^" + shift + "]";
  }
}

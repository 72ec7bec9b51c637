package io.beamsave.transforms.format;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Constants of the image format; docs/image-format.md is the specification. Writers write
 * {@link #VERSION}; readers read every version from {@link #OLDEST_VERSION} on.
 */
public final class ImageFormat {
  /**
   * Version 13: version 11 with the SHA-256 of each range of a large file's bytes, by which an
   * incremental save stores only a changed file's changed ranges, and a file's extents may lie
   * in this image and its bases at once (docs/image-format.md, "Range digests").
   * Version 11: version 9 with notes in the catalog's head: what the save knew of where its
   * bytes came from, as a file-system snapshot (docs/image-format.md, "Notes").
   * Version 9: version 7 with what {@code statx} does not say: owner and group names, extended
   * attributes (ACLs and capabilities among them), hard links, FIFOs and devices
   * (docs/image-format.md, "Metadata").
   * Version 7: a paged catalog whose pages hold entries packed against the entry before them
   * (docs/image-format.md, "Packed entries"): about a third of the catalog's bytes in
   * version 5's, half after compression.
   * Version 5: a paged catalog (docs/image-format.md, "Paged catalog"): entries in path order
   * in pages compressed on their own, and a head with the page index that readers load first.
   * Version 3: an image id, base images and extents that reference them (incremental saves).
   * Version 2: names as bytes, nanosecond ctime and inode per entry, the library root.
   */
  public static final int VERSION = 13;

  /** Version 13 sealed, as version 4 is. */
  public static final int ENCRYPTED_VERSION = 14;

  /** The first version whose files carry range digests. */
  public static final int RANGES_VERSION = 13;

  /** Version 13 sealed. */
  public static final int RANGES_ENCRYPTED_VERSION = 14;

  /** The first version whose catalog's head holds notes. */
  public static final int NOTES_VERSION = 11;

  /** Version 11 sealed. */
  public static final int NOTES_ENCRYPTED_VERSION = 12;

  /** The first version whose entries carry their metadata. */
  public static final int METADATA_VERSION = 9;

  /** Version 9 sealed. */
  public static final int METADATA_ENCRYPTED_VERSION = 10;

  /** The first version whose pages hold packed entries. */
  public static final int PACKED_VERSION = 7;

  /** Version 7 sealed. */
  public static final int PACKED_ENCRYPTED_VERSION = 8;

  /** The first version whose catalog is paged, its entries laid out as a whole catalog's. */
  public static final int PAGED_VERSION = 5;

  /** Version 5 sealed. */
  public static final int PAGED_ENCRYPTED_VERSION = 6;

  /** The last version whose catalog is one piece, and its encrypted twin. */
  public static final int WHOLE_CATALOG_VERSION = 3;

  public static final int WHOLE_CATALOG_ENCRYPTED_VERSION = 4;

  public static final int OLDEST_VERSION = 1;
  /** The newest version readers read. */
  public static final int NEWEST_VERSION = ENCRYPTED_VERSION;
  public static final byte[] MAGIC = "BEAMSAVE".getBytes(StandardCharsets.US_ASCII);
  public static final byte[] TRAILER_MAGIC = "BSAVEEND".getBytes(StandardCharsets.US_ASCII);
  public static final byte[] CATALOG_MAGIC = "BSCATLOG".getBytes(StandardCharsets.US_ASCII);
  /**
   * A page of a paged catalog closes once it holds this many raw bytes: small enough that
   * finding one path reads a few KiB, large enough that a million entries need under two
   * thousand index rows.
   */
  public static final int PAGE_TARGET = 64 * 1024;
  /** The most raw bytes one page may hold: one entry (a file of many extents) may pass the target. */
  public static final int MAX_PAGE_RAW = 64 * 1024 * 1024;
  /**
   * A writer also closes a page once its entries' paths, whole, hold this many bytes: packed
   * (version 7), a path is what it shares with the one before and the rest, so a page's raw
   * bytes no longer bound what its paths take once decoded.
   */
  public static final int PAGE_PATHS_TARGET = 8 * 1024 * 1024;
  /** The most a version 7 page's paths may hold, whole: the target and one longest path. */
  public static final int MAX_PAGE_PATHS = PAGE_PATHS_TARGET + 65_535;
  /** A page's raw bytes are at most this many times its stored bytes (no slack: pages are many). */
  public static final int MAX_PAGE_EXPANSION = 256;
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

  /** Whether images of {@code version} are encrypted (4, 6, 8, 10, 12 and 14). */
  public static boolean encrypted(int version) {
    return version == RANGES_ENCRYPTED_VERSION || version == NOTES_ENCRYPTED_VERSION
        || version == METADATA_ENCRYPTED_VERSION
        || version == PACKED_ENCRYPTED_VERSION
        || version == PAGED_ENCRYPTED_VERSION
        || version == WHOLE_CATALOG_ENCRYPTED_VERSION;
  }

  /** Whether images of {@code version} have a paged catalog (5 on). */
  public static boolean paged(int version) {
    return version >= PAGED_VERSION;
  }

  /** Whether the pages of images of {@code version} hold packed entries (7 on). */
  public static boolean packed(int version) {
    return version >= PACKED_VERSION;
  }

  /** Whether entries of images of {@code version} carry their metadata (9 on). */
  public static boolean metadata(int version) {
    return version >= METADATA_VERSION;
  }

  /** Whether the catalogs of images of {@code version} hold notes (11 on). */
  public static boolean notes(int version) {
    return version >= NOTES_VERSION;
  }

  /** Whether the files of images of {@code version} carry range digests (13 on). */
  public static boolean ranges(int version) {
    return version >= RANGES_VERSION;
  }

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
    if (encrypted(version)) {
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

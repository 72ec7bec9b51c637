package io.beamsave.transforms.image.catalog;

/** What a catalog entry is. The codes are part of the image format. */
public enum EntryType {
  FILE(1),
  DIRECTORY(2),
  SYMLINK(3),
  /** Format version 9 on: a FIFO. */
  FIFO(4),
  /** Format version 9 on: a character device, its number in the entry's metadata. */
  CHAR_DEVICE(5),
  /** Format version 9 on: a block device, likewise. */
  BLOCK_DEVICE(6),
  /**
   * Format version 9 on: another name of a regular file saved earlier in the image, whose path
   * the entry's link target holds; its bytes are the earlier entry's.
   */
  HARDLINK(7);

  /** The types an image of a version before 9 may hold. */
  public boolean before9() {
    return code <= 3;
  }

  /** Whether the entry is a FIFO or a device: a node made, never opened. */
  public boolean isNode() {
    return this == FIFO || this == CHAR_DEVICE || this == BLOCK_DEVICE;
  }

  private final int code;

  EntryType(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  public static EntryType fromCode(int code) {
    for (EntryType t : values()) {
      if (t.code == code) {
        return t;
      }
    }
    return null;
  }
}

package io.beamsave.transforms.image;

/** What a catalog entry is. The codes are part of the image format. */
public enum EntryType {
  FILE(1),
  DIRECTORY(2),
  SYMLINK(3);

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

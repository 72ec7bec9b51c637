package io.beamsave.transforms.codec;

/**
 * The codec byte stored in each block header. Values are part of the image format
 * (docs/image-format.md) and must never change; never derive them from {@code ordinal()}.
 */
public enum CodecId {
  /** The payload is the raw bytes (no codec, or the codec did not make the block smaller). */
  STORED(0),
  LZ4(1),
  ZLIB(2),
  ZSTD(3),
  XZ(4),
  /** The block is all zero bytes and has no payload; restores leave a hole (sparse files). */
  ZERO(16);

  private final int code;

  CodecId(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /** Returns the id for a byte read from an image, or {@code null} if it is not known. */
  public static CodecId fromCode(int code) {
    for (CodecId id : values()) {
      if (id.code == code) {
        return id;
      }
    }
    return null;
  }
}

package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.format.ImageException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Bounds-checked reads that name what they were reading when the bytes run out: the catalog's
 * raw bytes as {@link CatalogReader} decodes them, each failure an {@link ImageException} naming
 * the image. Not thread-safe; one per catalog decoded.
 */
final class CatalogInput {
  final String image;
  final ByteBuffer b;

  CatalogInput(String image, ByteBuffer b) {
    this.image = image;
    this.b = b;
  }

  ImageException fail(String msg) {
    return new ImageException(image + ": catalog: " + msg);
  }

  void need(int n, String what) throws ImageException {
    if (b.remaining() < n) {
      throw fail("truncated in " + what);
    }
  }

  int uint8(String what) throws ImageException {
    need(1, what);
    return Byte.toUnsignedInt(b.get());
  }

  int int16(String what) throws ImageException {
    need(2, what);
    return Short.toUnsignedInt(b.getShort());
  }

  int int32(String what) throws ImageException {
    need(4, what);
    return b.getInt();
  }

  long int32unsigned(String what) throws ImageException {
    need(4, what);
    return Integer.toUnsignedLong(b.getInt());
  }

  long int64Signed(String what) throws ImageException {
    need(8, what);
    return b.getLong();
  }

  long int64(String what) throws ImageException {
    long v = int64Signed(what);
    if (v < 0) {
      throw fail(what + " is out of range");
    }
    return v;
  }

  /**
   * An unsigned LEB128 varint of at most 64 bits (docs/image-format.md, "Packed entries"):
   * seven bits a byte, low first, the high bit set on every byte but the last. One written
   * longer than it needs (a last byte of zero after others) or past 64 bits is refused, so that
   * every value has one encoding.
   */
  long varint(String what) throws ImageException {
    long v = 0;
    for (int shift = 0; ; shift += 7) {
      need(1, what);
      int x = Byte.toUnsignedInt(b.get());
      if (shift == 63 && x > 1 || shift > 0 && x == 0) {
        throw fail(what + " is not a varint of the shortest form");
      }
      v |= (long) (x & 0x7f) << shift;
      if (x < 0x80) {
        return v;
      }
    }
  }

  /** A varint of at most {@code max}. */
  long varint(String what, long max) throws ImageException {
    long v = varint(what);
    if (Long.compareUnsigned(v, max) > 0) {
      throw fail(what + " is out of range");
    }
    return v;
  }

  /** A zigzag varint: a signed difference, small either side of zero. */
  long signedVarint(String what) throws ImageException {
    long v = varint(what);
    return (v >>> 1) ^ -(v & 1);
  }

  /** A u32 count of items of at least {@code minBytes} each, bounded by the bytes left. */
  long count(int minBytes, String what) throws ImageException {
    long n = int32unsigned(what);
    if (n > b.remaining() / minBytes) {
      throw fail(what + " " + n + " exceeds what the catalog can hold");
    }
    return n;
  }

  byte[] bytes(int n, String what) throws ImageException {
    need(n, what);
    byte[] out = new byte[n];
    b.get(out);
    return out;
  }

  /** A u16-prefixed byte string: a path or symlink target, any bytes. */
  PathBytes name(String what) throws ImageException {
    need(2, what);
    return PathBytes.wrap(bytes(Short.toUnsignedInt(b.getShort()), what));
  }

  /** A u16-prefixed UTF-8 string: the library name, the codec. */
  String text(String what) throws ImageException {
    byte[] raw = name(what).bytes();
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(raw))
          .toString();
    } catch (CharacterCodingException e) {
      throw fail(what + " is not valid UTF-8");
    }
  }
}

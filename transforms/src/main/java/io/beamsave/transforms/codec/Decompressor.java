package io.beamsave.transforms.codec;

import java.io.IOException;

/** Decompresses blocks; not thread-safe. */
public interface Decompressor extends AutoCloseable {

  /**
   * Decompresses {@code src[srcOff, srcOff+srcLen)} into exactly {@code rawLen} bytes at {@code
   * dst[dstOff]}.
   *
   * @throws IOException if the input is not a valid stream or does not decode to exactly {@code
   *     rawLen} bytes; never writes past {@code dst[dstOff + rawLen)}
   */
  void decompress(byte[] src, int srcOff, int srcLen, byte[] dst, int dstOff, int rawLen)
      throws IOException;

  @Override
  void close();
}

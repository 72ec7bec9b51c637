package io.beamsave.transforms.codec;

/** Compresses blocks; not thread-safe. */
public interface Compressor extends AutoCloseable {

  /**
   * Compresses {@code src[srcOff, srcOff+srcLen)} into {@code dst} starting at {@code dstOff},
   * using at most {@code dstCapacity} bytes.
   *
   * @return the compressed length, or {@code -1} when the result would not fit in {@code
   *     dstCapacity} bytes (the caller then stores the block raw)
   */
  int compress(byte[] src, int srcOff, int srcLen, byte[] dst, int dstOff, int dstCapacity);

  /**
   * The codec that produced the last block, for compressors that choose per block ({@code
   * auto}); null means the codec's own id.
   */
  default CodecId lastCodec() {
    return null;
  }

  @Override
  void close();
}

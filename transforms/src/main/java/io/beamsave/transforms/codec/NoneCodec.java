package io.beamsave.transforms.codec;

import java.io.IOException;

/** Stores every block raw. Thread-safe; free to create. */
final class NoneCodec implements Codec {
  static final NoneCodec INSTANCE = new NoneCodec();

  private NoneCodec() {}

  @Override
  public CodecId id() {
    return CodecId.STORED;
  }

  @Override
  public String spec() {
    return "none";
  }

  @Override
  public Compressor newCompressor() {
    return new Compressor() {
      @Override
      public int compress(byte[] src, int so, int sl, byte[] dst, int dOff, int cap) {
        return -1;
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public Decompressor newDecompressor() {
    return new Decompressor() {
      @Override
      public void decompress(byte[] src, int so, int sl, byte[] dst, int dOff, int rawLen)
          throws IOException {
        if (sl != rawLen) {
          throw new IOException("stored block holds " + sl + " bytes, expected " + rawLen);
        }
        System.arraycopy(src, so, dst, dOff, sl);
      }

      @Override
      public void close() {}
    };
  }

  private Object readResolve() {
    return INSTANCE;
  }
}

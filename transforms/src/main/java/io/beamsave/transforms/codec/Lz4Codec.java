package io.beamsave.transforms.codec;

import java.io.IOException;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * LZ4 block format (lz4-java's fast compressor). The factory is looked up once per JVM; its
 * compressors and decompressors are thread-safe, so the per-thread wrappers are free.
 * Decompression uses the safe decompressor because images may be crafted.
 */
final class Lz4Codec implements Codec {
  private static final class Holder {
    static final LZ4Factory FACTORY = LZ4Factory.fastestInstance();
  }

  @Override
  public CodecId id() {
    return CodecId.LZ4;
  }

  @Override
  public String spec() {
    return "lz4";
  }

  @Override
  public Compressor newCompressor() {
    LZ4Compressor lz4 = Holder.FACTORY.fastCompressor();
    return new Compressor() {
      @Override
      public int compress(byte[] src, int so, int sl, byte[] dst, int dOff, int cap) {
        try {
          return lz4.compress(src, so, sl, dst, dOff, cap);
        } catch (LZ4Exception tooSmall) {
          return -1;
        }
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public Decompressor newDecompressor() {
    LZ4SafeDecompressor lz4 = Holder.FACTORY.safeDecompressor();
    return new Decompressor() {
      @Override
      public void decompress(byte[] src, int so, int sl, byte[] dst, int dOff, int rawLen)
          throws IOException {
        int n;
        try {
          n = lz4.decompress(src, so, sl, dst, dOff, rawLen);
        } catch (LZ4Exception e) {
          throw new IOException("invalid lz4 data: " + e.getMessage());
        }
        if (n != rawLen) {
          throw new IOException("lz4 data decoded to " + n + " bytes, expected " + rawLen);
        }
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Lz4Codec;
  }

  @Override
  public int hashCode() {
    return 1;
  }
}

package io.beamsave.transforms.codec;

import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import java.io.IOException;

/**
 * Zstandard frames from zstd-jni; each block is one frame. A context owns native memory (a few
 * MiB at the usual levels), so create one per thread and close it.
 */
final class ZstdCodec implements Codec {
  private final int level;

  ZstdCodec(int level) {
    this.level = level;
  }

  @Override
  public CodecId id() {
    return CodecId.ZSTD;
  }

  @Override
  public String spec() {
    return "zstd:" + level;
  }

  @Override
  public Compressor newCompressor() {
    ZstdCompressCtx ctx = new ZstdCompressCtx();
    ctx.setLevel(level);
    ctx.setChecksum(false);
    return new Compressor() {
      @Override
      public int compress(byte[] src, int so, int sl, byte[] dst, int dOff, int cap) {
        try {
          return ctx.compressByteArray(dst, dOff, cap, src, so, sl);
        } catch (ZstdException tooSmall) {
          return -1;
        }
      }

      @Override
      public void close() {
        ctx.close();
      }
    };
  }

  @Override
  public Decompressor newDecompressor() {
    ZstdDecompressCtx ctx = new ZstdDecompressCtx();
    return new Decompressor() {
      @Override
      public void decompress(byte[] src, int so, int sl, byte[] dst, int dOff, int rawLen)
          throws IOException {
        int n;
        try {
          n = ctx.decompressByteArray(dst, dOff, rawLen, src, so, sl);
        } catch (ZstdException e) {
          throw new IOException("invalid zstd data: " + e.getMessage());
        }
        if (n != rawLen) {
          throw new IOException("zstd data decoded to " + n + " bytes, expected " + rawLen);
        }
      }

      @Override
      public void close() {
        ctx.close();
      }
    };
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ZstdCodec && ((ZstdCodec) o).level == level;
  }

  @Override
  public int hashCode() {
    return 31 * 3 + level;
  }
}

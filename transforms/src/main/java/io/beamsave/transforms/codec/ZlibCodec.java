package io.beamsave.transforms.codec;

import java.io.IOException;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * zlib streams (RFC 1950) from the JDK's {@link Deflater}; each block is one complete stream.
 * A Deflater holds about 256 KiB of native memory, so compressors are created per thread and
 * closed to free it promptly.
 */
final class ZlibCodec implements Codec {
  private final int level;

  ZlibCodec(int level) {
    this.level = level;
  }

  @Override
  public CodecId id() {
    return CodecId.ZLIB;
  }

  @Override
  public String spec() {
    return "zlib:" + level;
  }

  @Override
  public Compressor newCompressor() {
    Deflater deflater = new Deflater(level);
    return new Compressor() {
      @Override
      public int compress(byte[] src, int so, int sl, byte[] dst, int dOff, int cap) {
        deflater.reset();
        deflater.setInput(src, so, sl);
        deflater.finish();
        int n = 0;
        while (!deflater.finished() && n < cap) {
          n += deflater.deflate(dst, dOff + n, cap - n);
        }
        return deflater.finished() ? n : -1;
      }

      @Override
      public void close() {
        deflater.end();
      }
    };
  }

  @Override
  public Decompressor newDecompressor() {
    Inflater inflater = new Inflater();
    return new Decompressor() {
      @Override
      public void decompress(byte[] src, int so, int sl, byte[] dst, int dOff, int rawLen)
          throws IOException {
        inflater.reset();
        inflater.setInput(src, so, sl);
        int n = 0;
        try {
          while (n < rawLen && !inflater.finished()) {
            int got = inflater.inflate(dst, dOff + n, rawLen - n);
            if (got == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
              break;
            }
            n += got;
          }
        } catch (DataFormatException e) {
          throw new IOException("invalid zlib data: " + e.getMessage());
        }
        if (n != rawLen || !inflater.finished() || inflater.getRemaining() != 0) {
          throw new IOException("zlib data did not decode to exactly " + rawLen + " bytes");
        }
      }

      @Override
      public void close() {
        inflater.end();
      }
    };
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ZlibCodec && ((ZlibCodec) o).level == level;
  }

  @Override
  public int hashCode() {
    return 31 * 2 + level;
  }
}

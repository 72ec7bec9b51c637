package io.beamsave.transforms.codec;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import org.tukaani.xz.ArrayCache;
import org.tukaani.xz.BasicArrayCache;
import org.tukaani.xz.LZMA2Options;
import org.tukaani.xz.UnsupportedOptionsException;
import org.tukaani.xz.XZ;
import org.tukaani.xz.XZInputStream;
import org.tukaani.xz.XZOutputStream;

/**
 * .xz streams (LZMA2) from tukaani xz; each block is one stream without an integrity check of
 * its own (the block's CRC32C covers it). An encoder at preset 6 needs ~94 MiB; every
 * compressor keeps an {@link ArrayCache} so those buffers are allocated once per thread, not once
 * per block.
 */
final class XzCodec implements Codec {
  /** Decoder memory limit: the largest dictionary any preset uses (64 MiB) plus slack. */
  private static final int MEMORY_LIMIT_KIB = 80 * 1024;

  private final int preset;

  XzCodec(int preset) {
    this.preset = preset;
  }

  @Override
  public CodecId id() {
    return CodecId.XZ;
  }

  @Override
  public String spec() {
    return "xz:" + preset;
  }

  @Override
  public Compressor newCompressor() {
    LZMA2Options options;
    try {
      options = new LZMA2Options(preset);
    } catch (UnsupportedOptionsException e) {
      throw new IllegalArgumentException("xz preset " + preset, e);
    }
    ArrayCache cache = new BasicArrayCache();
    return new Compressor() {
      @Override
      public int compress(byte[] src, int so, int sl, byte[] dst, int dOff, int cap) {
        BoundedArrayOutputStream out = new BoundedArrayOutputStream(dst, dOff, cap);
        try (XZOutputStream xz = new XZOutputStream(out, options, XZ.CHECK_NONE, cache)) {
          xz.write(src, so, sl);
        } catch (BoundedArrayOutputStream.Full full) {
          return -1;
        } catch (IOException e) {
          throw new IllegalStateException("xz compression failed", e);
        }
        return out.count;
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public Decompressor newDecompressor() {
    ArrayCache cache = new BasicArrayCache();
    return new Decompressor() {
      @Override
      public void decompress(byte[] src, int so, int sl, byte[] dst, int dOff, int rawLen)
          throws IOException {
        int n = 0;
        boolean atEnd;
        try (XZInputStream in =
            new XZInputStream(
                new ByteArrayInputStream(src, so, sl), MEMORY_LIMIT_KIB, true, cache)) {
          while (n < rawLen) {
            int got = in.read(dst, dOff + n, rawLen - n);
            if (got < 0) {
              break;
            }
            n += got;
          }
          atEnd = in.read() == -1;
        } catch (IOException e) {
          throw new IOException("invalid xz data: " + e.getMessage(), e);
        }
        if (n != rawLen || !atEnd) {
          throw new IOException("xz data did not decode to exactly " + rawLen + " bytes");
        }
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof XzCodec && ((XzCodec) o).preset == preset;
  }

  @Override
  public int hashCode() {
    return 31 * 4 + preset;
  }

  /** Writes into a fixed slice of an array and fails fast when it is full. */
  private static final class BoundedArrayOutputStream extends OutputStream {
    static final class Full extends IOException {
      Full() {
        super("output buffer full");
      }

      @Override
      public synchronized Throwable fillInStackTrace() {
        return this; // control flow, not an error: the caller stores the block raw
      }
    }

    private final byte[] buf;
    private final int off;
    private final int cap;
    int count;

    BoundedArrayOutputStream(byte[] buf, int off, int cap) {
      this.buf = buf;
      this.off = off;
      this.cap = cap;
    }

    @Override
    public void write(int b) throws IOException {
      if (count >= cap) {
        throw new Full();
      }
      buf[off + count++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int o, int len) throws IOException {
      if (len > cap - count) {
        throw new Full();
      }
      System.arraycopy(b, o, buf, off + count, len);
      count += len;
    }
  }
}

package io.beamsave.transforms.transfer;

import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import io.beamsave.transforms.codec.Codecs;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * Compression applied while an image travels (the way IBM's ICC compresses raw save files in
 * transfer): each chunk becomes one self-contained gzip member or zstd frame, so chunks are
 * compressed in parallel and the stored object is still one standard stream that {@code gzip
 * -d} or {@code zstd -d} reads. gzip members carry a CRC32 and zstd frames a content checksum,
 * so a damaged stored object fails to decode.
 */
public final class TransferCodec {
  public static final TransferCodec NONE = new TransferCodec("none", 0);

  private final String name;
  private final int level;

  private TransferCodec(String name, int level) {
    this.name = name;
    this.level = level;
  }

  /** Parses {@code none}, {@code zlib[:1-9]} or {@code zstd[:1-22]}. */
  public static TransferCodec parse(String spec) {
    String canonical = Codecs.parse(spec).spec();
    int colon = canonical.indexOf(':');
    String name = colon < 0 ? canonical : canonical.substring(0, colon);
    switch (name) {
      case "none":
        return NONE;
      case "zlib":
      case "zstd":
        return new TransferCodec(name, Integer.parseInt(canonical.substring(colon + 1)));
      default:
        throw new IllegalArgumentException(
            "transfer codec '" + spec + "' is not one of none, zlib[:1-9], zstd[:1-22]");
    }
  }

  public boolean isNone() {
    return level == 0;
  }

  /** The spec, e.g. {@code zstd:3}, as stored in the object's metadata. */
  public String spec() {
    return isNone() ? "none" : name + ":" + level;
  }

  /** The stored object's content type. */
  public String contentType() {
    switch (name) {
      case "zlib":
        return "application/gzip";
      case "zstd":
        return "application/zstd";
      default:
        return "application/octet-stream";
    }
  }

  /** One chunk as a self-contained member/frame; thread-safe (no state kept). */
  public byte[] encode(byte[] chunk, int len) {
    switch (name) {
      case "zlib":
        ByteArrayOutputStream out = new ByteArrayOutputStream(len / 2 + 64);
        try (GZIPOutputStream gz = new LevelledGzip(out, level)) {
          gz.write(chunk, 0, len);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        return out.toByteArray();
      case "zstd":
        try (ZstdCompressCtx z = new ZstdCompressCtx()) {
          z.setLevel(level);
          z.setChecksum(true);
          z.setContentSize(true);
          byte[] in = len == chunk.length ? chunk : java.util.Arrays.copyOf(chunk, len);
          return z.compress(in);
        }
      default:
        return len == chunk.length ? chunk : java.util.Arrays.copyOf(chunk, len);
    }
  }

  /** Decodes a whole stored stream (any number of members/frames). */
  public InputStream decode(InputStream stored) throws IOException {
    switch (name) {
      case "zlib":
        return new GZIPInputStream(stored, 1 << 16);
      case "zstd":
        return new ZstdInputStreamNoFinalizer(stored);
      default:
        return stored;
    }
  }

  @Override
  public String toString() {
    return spec();
  }

  private static final class LevelledGzip extends GZIPOutputStream {
    LevelledGzip(java.io.OutputStream out, int level) throws IOException {
      super(out, 1 << 16);
      def.setLevel(level);
    }
  }
}

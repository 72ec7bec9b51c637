package io.beamsave.transforms.image.block;

import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.codec.CodecId;
import io.beamsave.transforms.codec.Compressor;
import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.format.ImageFormat;
import java.io.IOException;
import java.io.OutputStream;
import java.util.zip.CRC32C;
import javax.crypto.spec.SecretKeySpec;

/**
 * Turns raw slices into blocks (header + payload) with one codec; for an encrypted image, each
 * block sealed into a frame ({@link BlockSealer}) under the key {@link #sealWith} gave, the
 * frames numbered from 0 from then on. Holds a compressor and block-sized buffers, so it is not
 * thread-safe: one per worker thread.
 */
public final class BlockEncoder implements AutoCloseable {
  private final Codec codec;
  private final Compressor compressor;
  private final byte[] out;
  private final CRC32C crc = new CRC32C();
  private final byte[] header = new byte[ImageFormat.BLOCK_HEADER_SIZE];
  private CodecId lastCodec;
  private BlockSealer sealer;
  private byte[] frame;
  private SecretKeySpec key;
  private int index;

  public BlockEncoder(Codec codec, int blockSize) {
    this.codec = codec;
    this.compressor = codec.newCompressor();
    this.out = new byte[blockSize];
  }

  /**
   * Seals the blocks written from now on under {@code blockKey} (a shard's or the catalog's),
   * numbering them from 0; null writes plain blocks again.
   */
  public void sealWith(byte[] blockKey) {
    if (blockKey != null && sealer == null) {
      sealer = new BlockSealer();
      frame = new byte[ImageFormat.BLOCK_HEADER_SIZE + out.length + BlockSealer.OVERHEAD];
    }
    key = blockKey == null ? null : BlockSealer.key(blockKey);
    index = 0;
  }

  /**
   * Writes {@code raw[0, len)} as one block to {@code sink}.
   *
   * @return the bytes written, header included (the frame, when sealing)
   */
  public int write(byte[] raw, int len, OutputStream sink) throws IOException {
    if (len <= 0 || len > out.length) {
      throw new IllegalArgumentException("block length " + len + " outside 1.." + out.length);
    }
    CodecId id;
    byte[] payload;
    int stored;
    if (isZero(raw, len)) {
      id = CodecId.ZERO;
      payload = raw;
      stored = 0;
    } else {
      // One byte less than raw: a block that does not shrink is stored raw.
      int n = codec.id() == CodecId.STORED ? -1 : compressor.compress(raw, 0, len, out, 0, len - 1);
      if (n < 0 || compressor.lastCodec() == CodecId.STORED) {
        id = CodecId.STORED;
        payload = raw;
        stored = len;
      } else {
        CodecId chosen = compressor.lastCodec();
        id = chosen != null ? chosen : codec.id();
        payload = out;
        stored = n;
      }
    }
    header[0] = (byte) id.code();
    header[1] = header[2] = header[3] = 0;
    putInt(header, 4, len);
    putInt(header, 8, stored);
    crc.reset();
    crc.update(header, 0, 12);
    crc.update(payload, 0, stored);
    putInt(header, 12, (int) crc.getValue());
    lastCodec = id;
    if (key != null) {
      int n = ImageFormat.BLOCK_HEADER_SIZE + stored + BlockSealer.OVERHEAD;
      if (sink instanceof BlockBuffer blocks) {
        int at = blocks.append(n);
        sealer.seal(key, index++, header, payload, stored, blocks.array(), at);
      } else {
        sealer.seal(key, index++, header, payload, stored, frame, 0);
        sink.write(frame, 0, n);
      }
      return n;
    }
    sink.write(header);
    sink.write(payload, 0, stored);
    return ImageFormat.BLOCK_HEADER_SIZE + stored;
  }

  /** The codec id of the block written last (for counters). */
  public CodecId lastCodec() {
    return lastCodec;
  }

  private static final byte[] ZEROS = new byte[64 * 1024];

  static boolean isZero(byte[] b, int len) {
    for (int off = 0; off < len; off += ZEROS.length) {
      int n = Math.min(ZEROS.length, len - off);
      if (java.util.Arrays.mismatch(b, off, off + n, ZEROS, 0, n) >= 0) {
        return false;
      }
    }
    return true;
  }

  static void putInt(byte[] b, int off, int v) {
    b[off] = (byte) (v >>> 24);
    b[off + 1] = (byte) (v >>> 16);
    b[off + 2] = (byte) (v >>> 8);
    b[off + 3] = (byte) v;
  }

  @Override
  public void close() {
    compressor.close();
  }
}

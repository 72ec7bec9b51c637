package io.beamsave.transforms.image.block;

import io.beamsave.transforms.codec.CodecId;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;
import javax.crypto.spec.SecretKeySpec;

/**
 * Checks and decodes blocks, and opens the frames of an encrypted image first ({@link
 * #decodeSealed}). Keeps one decompressor per codec and buffers, so it is not thread-safe: one
 * per worker thread.
 */
public final class BlockDecoder implements AutoCloseable {
  private final Codecs.DecompressorSet decompressors = new Codecs.DecompressorSet();
  private final CRC32C crc = new CRC32C();
  private BlockSealer sealer;
  private byte[] opened = new byte[0];

  /**
   * Opens frame {@code index} in {@code frame[0, frameLen)} under {@code key} (see {@link
   * BlockSealer}) and decodes the block it holds into {@code raw[rawOff, rawOff + expectedRaw)}.
   *
   * @return whether it was a zero block
   */
  public boolean decodeSealed(SecretKeySpec key, int index, byte[] frame, int frameLen,
      byte[] raw, int rawOff, int expectedRaw, String where) throws ImageException {
    int n = open(key, index, frame, frameLen, where);
    decode(opened, n, raw, rawOff, expectedRaw, where);
    return isZeroBlock(opened);
  }

  /**
   * Opens frame {@code index} in {@code frame[0, frameLen)} under {@code key}; returns the length
   * of the block it held, which is in {@link #opened()} until the next call.
   */
  public int open(SecretKeySpec key, int index, byte[] frame, int frameLen, String where)
      throws ImageException {
    java.util.Objects.checkFromIndexSize(0, frameLen, frame.length);
    if (sealer == null) {
      sealer = new BlockSealer();
    }
    if (opened.length < frameLen) {
      opened = new byte[frameLen];
    }
    return sealer.open(key, index, frame, frameLen, opened, where);
  }

  /** The block {@link #open} opened last. */
  public byte[] opened() {
    return opened;
  }

  /**
   * Decodes the block held in {@code block[0, blockLen)} (header and payload) into {@code
   * raw[0, expectedRaw)}.
   *
   * @param where names the block in error messages, e.g. {@code image x: shard 3 block 7}
   * @throws ImageException if the block is damaged or does not hold exactly {@code expectedRaw}
   *     raw bytes
   */
  public void decode(byte[] block, int blockLen, byte[] raw, int expectedRaw, String where)
      throws ImageException {
    decode(block, blockLen, raw, 0, expectedRaw, where);
  }

  /** Like {@link #decode(byte[], int, byte[], int, String)}, into {@code raw[rawOff..]}. */
  public void decode(
      byte[] block, int blockLen, byte[] raw, int rawOff, int expectedRaw, String where)
      throws ImageException {
    // The codecs' native code trusts its offsets: every one is checked here first.
    java.util.Objects.checkFromIndexSize(0, blockLen, block.length);
    java.util.Objects.checkFromIndexSize(rawOff, expectedRaw, raw.length);
    if (blockLen < ImageFormat.BLOCK_HEADER_SIZE) {
      throw new ImageException(where + ": block shorter than its header");
    }
    ByteBuffer h = ByteBuffer.wrap(block, 0, ImageFormat.BLOCK_HEADER_SIZE);
    int code = Byte.toUnsignedInt(h.get());
    int reserved = (Byte.toUnsignedInt(h.get()) << 16) | Short.toUnsignedInt(h.getShort());
    long rawLen = Integer.toUnsignedLong(h.getInt());
    long stored = Integer.toUnsignedLong(h.getInt());
    int expectedCrc = h.getInt();
    crc.reset();
    crc.update(block, 0, 12);
    if (stored <= blockLen - ImageFormat.BLOCK_HEADER_SIZE) {
      crc.update(block, ImageFormat.BLOCK_HEADER_SIZE, (int) stored);
    }
    if ((int) crc.getValue() != expectedCrc
        || stored != blockLen - ImageFormat.BLOCK_HEADER_SIZE) {
      throw new ImageException(where + ": checksum mismatch (block damaged)");
    }
    CodecId id = CodecId.fromCode(code);
    if (id == null || reserved != 0) {
      throw new ImageException(where + ": unknown codec id " + code);
    }
    if (rawLen != expectedRaw) {
      throw new ImageException(
          where + ": block holds " + rawLen + " raw bytes, catalog expects " + expectedRaw);
    }
    int off = ImageFormat.BLOCK_HEADER_SIZE;
    switch (id) {
      case ZERO:
        if (stored != 0) {
          throw new ImageException(where + ": zero block with a payload");
        }
        Arrays.fill(raw, rawOff, rawOff + expectedRaw, (byte) 0);
        return;
      case STORED:
        if (stored != rawLen) {
          throw new ImageException(where + ": stored block length differs from raw length");
        }
        System.arraycopy(block, off, raw, rawOff, expectedRaw);
        return;
      default:
        if (stored >= rawLen) {
          throw new ImageException(where + ": compressed block not smaller than raw");
        }
        try {
          decompressors.get(id).decompress(block, off, (int) stored, raw, rawOff, expectedRaw);
        } catch (IOException e) {
          throw new ImageException(where + ": " + e.getMessage());
        }
    }
  }

  /** Whether the block in {@code block} is a zero block (callers may skip writing it). */
  public static boolean isZeroBlock(byte[] block) {
    return Byte.toUnsignedInt(block[0]) == CodecId.ZERO.code();
  }

  @Override
  public void close() {
    decompressors.close();
  }
}

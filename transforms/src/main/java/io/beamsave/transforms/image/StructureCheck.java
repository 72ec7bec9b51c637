package io.beamsave.transforms.image;

import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.LongConsumer;

/**
 * What can be checked of an encrypted image without its key: the header's and trailer's
 * structure and checksums ({@link ImageEnds#read}), and every frame from the header to the
 * trailer, walked in order, each one's length and CRC32C, and every padding frame's zeros. So
 * any damage to any byte is found; what the checksums cannot tell is a deliberate change that
 * recomputes them, which only the key's authentication tags reveal.
 */
public final class StructureCheck {
  private StructureCheck() {}

  /** What the walk found. */
  public record Result(ImageEnds.Trailer trailer, long frames, long frameBytes) {}

  /**
   * Walks the frames of the encrypted image {@code ch}; {@code progress} hears of each frame's
   * length as it is checked.
   */
  public static Result check(ImageSource ch, LongConsumer progress) throws IOException {
    String name = ch.name();
    ImageEnds.Trailer t = ImageEnds.read(ch);
    if (!t.encrypted()) {
      throw new ImageException(name + " is not encrypted (it was replaced meanwhile?)");
    }
    long shardsEnd = t.catalogOffset();
    long end = t.catalogOffset() + t.catalogStored();
    ch.willRead(t.dataStart(), end - t.dataStart());
    BlockSealer sealer = new BlockSealer();
    byte[] buf = new byte[1 << 20];
    long pos = t.dataStart();
    long frames = 0;
    long frameBytes = 0;
    while (pos < end) {
      boolean inCatalog = pos >= shardsEnd;
      long limit = inCatalog ? end : shardsEnd;
      String where = name + ": " + (inCatalog ? "catalog" : "shard") + " frame at image offset "
          + pos;
      if (limit - pos < BlockSealer.FRAME_HEADER) {
        throw new ImageException(where + ": truncated");
      }
      ch.read(pos, buf, 0, BlockSealer.FRAME_HEADER);
      int field = ByteBuffer.wrap(buf).getInt(0);
      long pad = BlockSealer.paddingLength(field);
      long n = pad >= 0 ? pad : Integer.toUnsignedLong(field);
      long maxSealed =
          ImageFormat.BLOCK_HEADER_SIZE + ImageFormat.MAX_BLOCK_SIZE + BlockSealer.TAG;
      if (n > limit - pos - BlockSealer.FRAME_HEADER
          || (pad >= 0 && inCatalog)
          || (pad < 0 && (n < ImageFormat.BLOCK_HEADER_SIZE + BlockSealer.TAG
              || n > maxSealed))) {
        throw new ImageException(where + ": invalid length " + n
            + (pad >= 0 ? " of padding" : ""));
      }
      if (pad >= 0) {
        checkPadding(ch, pos, n, buf, where);
      } else {
        int len = (int) (BlockSealer.FRAME_HEADER + n);
        if (buf.length < len) {
          byte[] bigger = new byte[len];
          System.arraycopy(buf, 0, bigger, 0, BlockSealer.FRAME_HEADER);
          buf = bigger;
        }
        ch.read(pos + BlockSealer.FRAME_HEADER, buf, BlockSealer.FRAME_HEADER, (int) n);
        sealer.check(buf, len, where);
        frames++;
        frameBytes += len;
      }
      pos += BlockSealer.FRAME_HEADER + n;
      progress.accept(BlockSealer.FRAME_HEADER + n);
    }
    return new Result(t, frames, frameBytes);
  }

  /** A padding frame: its CRC over its length field and its zeros, which must be zeros. */
  private static void checkPadding(ImageSource ch, long pos, long n, byte[] buf, String where)
      throws IOException {
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(buf, 0, 4);
    int expected = ByteBuffer.wrap(buf).getInt(4);
    byte[] chunk = new byte[(int) Math.min(n, 1 << 20)];
    for (long done = 0; done < n; ) {
      int k = (int) Math.min(chunk.length, n - done);
      ch.read(pos + BlockSealer.FRAME_HEADER + done, chunk, 0, k);
      for (int i = 0; i < k; i++) {
        if (chunk[i] != 0) {
          throw new ImageException(where + ": padding is not zero (image damaged)");
        }
      }
      crc.update(chunk, 0, k);
      done += k;
    }
    if ((int) crc.getValue() != expected) {
      throw new ImageException(where + ": padding checksum mismatch (image damaged)");
    }
  }
}

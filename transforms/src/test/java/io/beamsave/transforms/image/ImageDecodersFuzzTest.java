package io.beamsave.transforms.image;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.beamsave.transforms.io.ReadTask;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Coverage-guided fuzzing of everything that reads an image: the catalog decoder (the one
 * validator), the image reader and the shard reader with every codec's decompressor behind it.
 * Whatever the bytes, each must either succeed or throw {@link ImageException}; any other
 * exception, a crash of the JVM (native code given a bad offset), a hang or an
 * OutOfMemoryError is a finding. The first input byte picks the target:
 *
 * <ul>
 *   <li>0, 1: the rest is a raw catalog of format version 2 or 1, decoded directly;
 *   <li>2: the rest is an image whose checksums are made right first (the trailer's, and each
 *       block's in sequence), so mutations get past the CRC32C to the structure and the codecs;
 *       its catalog is read, then every file's pieces through the shard reader.
 * </ul>
 *
 * <p>{@code mvn verify} runs the seeds in {@code ImageDecodersFuzzTestInputs/} (golden and crafted
 * images) in every test run, and fuzzes for a bounded time in the {@code fuzz} execution
 * ({@code JAZZER_FUZZ=1}), for one minute.
 */
class ImageDecodersFuzzTest {

  @FuzzTest(maxDuration = "60s")
  void decoders(byte[] input) {
    if (input.length == 0) {
      return;
    }
    byte[] rest = java.util.Arrays.copyOfRange(input, 1, input.length);
    try {
      switch (input[0] & 3) {
        case 0 -> CatalogCodec.decode("fuzz", rest, 1L << 40, 2);
        case 1 -> CatalogCodec.decode("fuzz", rest, 1L << 40, 1);
        default -> readWholeImage(fixChecksums(rest));
      }
    } catch (ImageException expected) {
      // A clean, named refusal is the right answer to a bad image.
    }
  }

  static void readWholeImage(byte[] image) throws ImageException {
    try (ImageSource src = new BytesImageSource(image)) {
      Catalog c = ImageReader.readCatalog(src);
      // Bases are other images; this one's own shards are what its bytes can reach.
      List<Entry> files = c.entries().stream().filter(Entry::isFile)
          .map(e -> e.withExtents(e.extents().stream().filter(x -> !x.isReference()).toList()))
          .toList();
      try (ShardReader r = new ShardReader(c.blockSize())) {
        for (ReadTask t : ReadTask.forEntries(
            io.beamsave.transforms.store.ImageChain.of("fuzz", c), files)) {
          r.read(src, "fuzz", t.shard(), t.info(), t.pieces(),
              (p, pos, buf, off, len, zero) -> java.util.Objects.checkFromIndexSize(off, len,
                  buf.length));
        }
      }
    } catch (ImageException e) {
      throw e;
    } catch (java.io.IOException e) {
      throw new AssertionError("an I/O error that is not an ImageException", e);
    }
  }

  /** Makes the trailer's CRC and every block's, walked in sequence from the header, right. */
  static byte[] fixChecksums(byte[] image) {
    byte[] b = image.clone();
    int end = b.length - ImageFormat.TRAILER_SIZE;
    if (end < ImageFormat.HEADER_SIZE) {
      return b;
    }
    CRC32C crc = new CRC32C();
    crc.update(b, end, 28);
    ByteBuffer.wrap(b).putInt(end + 28, (int) crc.getValue());
    int pos = ImageFormat.HEADER_SIZE;
    while (pos + ImageFormat.BLOCK_HEADER_SIZE <= end) {
      long stored = Integer.toUnsignedLong(ByteBuffer.wrap(b).getInt(pos + 8));
      if (stored > end - pos - ImageFormat.BLOCK_HEADER_SIZE) {
        break;
      }
      crc.reset();
      crc.update(b, pos, 12);
      crc.update(b, pos + ImageFormat.BLOCK_HEADER_SIZE, (int) stored);
      ByteBuffer.wrap(b).putInt(pos + 12, (int) crc.getValue());
      pos += ImageFormat.BLOCK_HEADER_SIZE + (int) stored;
    }
    return b;
  }

  /** An image held in memory. */
  static final class BytesImageSource implements ImageSource {
    private final byte[] bytes;

    BytesImageSource(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public String name() {
      return "fuzz";
    }

    @Override
    public long size() {
      return bytes.length;
    }

    @Override
    public void read(long pos, byte[] buf, int off, int len) throws ImageException {
      if (pos < 0 || pos > bytes.length - (long) len) {
        throw new ImageException("fuzz: unexpected end of image at offset " + pos);
      }
      System.arraycopy(bytes, (int) pos, buf, off, len);
    }

    @Override
    public void close() {}
  }
}

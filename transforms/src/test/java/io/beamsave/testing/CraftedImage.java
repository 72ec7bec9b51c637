package io.beamsave.testing;

import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.block.BlockEncoder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Images a correct writer would never make, assembled from raw parts: how tests play the
 * attacker who hands beamsave a file of their own.
 */
public final class CraftedImage {
  private CraftedImage() {}

  /**
   * Writes an image of one shard, {@code blocks} zero blocks of {@code blockSize}, and the given
   * raw catalog (stored in blocks of codec none). Returns the shard's stored length.
   */
  public static int write(Path image, int blockSize, int blocks, byte[] catalogRaw)
      throws IOException {
    Files.createDirectories(image.toAbsolutePath().getParent());
    ByteArrayOutputStream shard = new ByteArrayOutputStream();
    try (BlockEncoder enc = new BlockEncoder(Codecs.parse("none"), blockSize)) {
      for (int i = 0; i < blocks; i++) {
        enc.write(new byte[blockSize], blockSize, shard);
      }
    }
    Files.deleteIfExists(ImageWriter.partialPath(image));
    ImageWriter.appendShard(image, shard.toByteArray(), shard.size());
    try (ImageWriter w = ImageWriter.open(image)) {
      w.finish(catalogRaw, Codecs.parse("none"), blockSize);
    }
    return shard.size();
  }

  /** A block header of codec {@code codec} claiming {@code raw} raw bytes, its CRC right. */
  public static byte[] blockHeader(int codec, int raw, byte[] payload) {
    ByteBuffer b = ByteBuffer.allocate(ImageFormat.BLOCK_HEADER_SIZE + payload.length);
    b.put((byte) codec).put(new byte[3]).putInt(raw).putInt(payload.length);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, 12);
    crc.update(payload);
    b.putInt(crc.getValue() == 0 ? 0 : (int) crc.getValue()).put(payload);
    return b.array();
  }

  /**
   * A whole image whose catalog is {@code catalogBlocks} (raw bytes of block headers and
   * payloads) claiming {@code catalogRaw} raw bytes, after a header and no shard; the trailer's
   * CRC is right, so only the reader's own bounds stand in the way.
   */
  public static byte[] withCatalogBlocks(byte[] catalogBlocks, long catalogRaw) {
    ByteBuffer b = ByteBuffer.allocate(ImageFormat.HEADER_SIZE + catalogBlocks.length
        + ImageFormat.TRAILER_SIZE);
    b.put(ImageFormat.header()).put(catalogBlocks);
    int t = b.position();
    b.putLong(ImageFormat.HEADER_SIZE).putLong(catalogBlocks.length).putLong(catalogRaw);
    b.putShort((short) ImageFormat.VERSION).putShort((short) 0);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), t, 28);
    b.putInt((int) crc.getValue()).put(ImageFormat.TRAILER_MAGIC);
    return b.array();
  }
}

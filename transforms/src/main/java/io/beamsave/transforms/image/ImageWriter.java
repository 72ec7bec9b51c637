package io.beamsave.transforms.image;

import io.beamsave.transforms.codec.Codec;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Writes one image front to back into {@code <image>.partial} and renames it to its final name
 * only when the trailer is on disk, so a complete-looking image is always complete. Not
 * thread-safe.
 */
public final class ImageWriter implements AutoCloseable {
  private final Path target;
  private final Path partial;
  private final FileChannel channel;
  private boolean done;

  private ImageWriter(Path target) throws IOException {
    this.target = target;
    this.partial = partialPath(target);
    this.channel =
        FileChannel.open(
            partial,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE);
    writeFully(ByteBuffer.wrap(ImageFormat.header()));
  }

  public static ImageWriter create(Path target) throws IOException {
    return new ImageWriter(target);
  }

  public static Path partialPath(Path target) {
    return target.resolveSibling(target.getFileName() + ImageFormat.PARTIAL_SUFFIX);
  }

  /** The offset the next shard will start at. */
  public long position() throws IOException {
    return channel.position();
  }

  /**
   * Appends a shard staged as a file of blocks.
   *
   * @return where it now lies in the image
   */
  public ShardInfo appendShard(Path staged, long rawLength, int[] blockLengths)
      throws IOException {
    long offset = channel.position();
    try (FileChannel in = FileChannel.open(staged, StandardOpenOption.READ)) {
      long size = in.size();
      long sent = 0;
      while (sent < size) {
        sent += in.transferTo(sent, size - sent, channel);
      }
      channel.position(offset + size);
      return new ShardInfo(offset, size, rawLength, blockLengths);
    }
  }

  /**
   * Writes the catalog and the trailer, forces the file to disk and renames it to its final
   * name. The catalog's shard table must describe the shards appended so far.
   */
  public void finish(Catalog catalog, Codec codec) throws IOException {
    finish(CatalogCodec.encode(catalog), codec, catalog.blockSize());
  }

  /**
   * Like {@link #finish(Catalog, Codec)} with the catalog already encoded; tests use it to
   * write images whose catalog a correct writer would never produce.
   */
  public void finish(byte[] raw, Codec codec, int blockSize) throws IOException {
    long catalogOffset = channel.position();
    OutputStream out = new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 20);
    try (BlockEncoder blocks = new BlockEncoder(codec, blockSize)) {
      byte[] slice = new byte[blockSize];
      for (int off = 0; off < raw.length; off += slice.length) {
        int n = Math.min(slice.length, raw.length - off);
        System.arraycopy(raw, off, slice, 0, n);
        blocks.write(slice, n, out);
      }
    }
    out.flush();
    long catalogStored = channel.position() - catalogOffset;
    ByteBuffer t = ByteBuffer.allocate(ImageFormat.TRAILER_SIZE);
    t.putLong(catalogOffset).putLong(catalogStored).putLong(raw.length);
    t.putShort((short) ImageFormat.VERSION).putShort((short) 0);
    CRC32C crc = new CRC32C();
    crc.update(t.array(), 0, 28);
    t.putInt((int) crc.getValue());
    t.put(ImageFormat.TRAILER_MAGIC);
    t.flip();
    writeFully(t);
    channel.force(true);
    channel.close();
    Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    done = true;
  }

  private void writeFully(ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      channel.write(b);
    }
  }

  /** Closes and, unless {@link #finish} succeeded, deletes the partial file. */
  @Override
  public void close() throws IOException {
    if (!done) {
      channel.close();
      Files.deleteIfExists(partial);
    }
  }
}

package io.beamsave.transforms.image.block;

import java.io.OutputStream;
import java.util.Arrays;

/**
 * A reusable run of blocks in memory (a shard, a catalog), handed to a sink whole once complete.
 * A {@link BlockEncoder} seals a frame straight into its array, with no buffer in between: at 1
 * MiB a block, every copy evicts what the codec keeps in the cache. Not thread-safe.
 */
public final class BlockBuffer extends OutputStream {
  private byte[] buf;
  private int size;

  public BlockBuffer(long capacity) {
    buf = new byte[Math.toIntExact(capacity)];
  }

  public void reset() {
    size = 0;
  }

  public int size() {
    return size;
  }

  /** The bytes written are {@code array()[0, size())}. */
  public byte[] array() {
    return buf;
  }

  /** Makes room for {@code capacity} bytes in all (to read a shard into it whole). */
  public void ensure(int capacity) {
    if (buf.length < capacity) {
      buf = Arrays.copyOf(buf, capacity);
    }
  }

  /**
   * Appends {@code n} bytes, for the caller to fill at the offset returned, in {@link #array()}
   * as it is after this call.
   */
  public int append(int n) {
    if (n > buf.length - size) {
      buf = Arrays.copyOf(buf, Math.max(size + n, buf.length * 2));
    }
    int at = size;
    size += n;
    return at;
  }

  @Override
  public void write(int b) {
    int at = append(1);
    buf[at] = (byte) b;
  }

  @Override
  public void write(byte[] b, int off, int len) {
    int at = append(len);
    System.arraycopy(b, off, buf, at, len);
  }

  /** A copy of what was written. */
  public byte[] toByteArray() {
    return Arrays.copyOf(buf, size);
  }
}

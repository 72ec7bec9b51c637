package io.beamsave.transforms.image;

/**
 * Where a shard lies in an image: its first block's offset, its stored length (blocks with
 * headers), its raw length, and each block's stored length (header included), so a reader can
 * seek straight to the block holding a raw offset.
 */
public record ShardInfo(long imageOffset, long storedLength, long rawLength, int[] blockLengths)
    implements java.io.Serializable {

  /** Offset in the image of block {@code k}. */
  public long blockOffset(int k) {
    long off = imageOffset;
    for (int i = 0; i < k; i++) {
      off += blockLengths[i];
    }
    return off;
  }
}

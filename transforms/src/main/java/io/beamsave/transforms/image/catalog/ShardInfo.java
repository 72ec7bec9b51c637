package io.beamsave.transforms.image.catalog;

/**
 * Where a shard lies in an image: its first block's offset, its stored length (blocks with
 * headers), its raw length, and each block's stored length (header included), so a reader can
 * seek straight to the block holding a raw offset. In an encrypted image, {@code sealedKey} is
 * the key its frames are sealed under, wrapped by the image's data key ({@link
 * io.beamsave.transforms.crypt.ImageKey#wrap}); null otherwise.
 */
public record ShardInfo(
    long imageOffset, long storedLength, long rawLength, int[] blockLengths, byte[] sealedKey)
    implements java.io.Serializable {

  /** A shard of an image that is not encrypted. */
  public ShardInfo(long imageOffset, long storedLength, long rawLength, int[] blockLengths) {
    this(imageOffset, storedLength, rawLength, blockLengths, null);
  }

  /** The same shard at another offset (in another image). */
  public ShardInfo at(long offset) {
    return new ShardInfo(offset, storedLength, rawLength, blockLengths, sealedKey);
  }

  /** The same shard with its key wrapped anew (for another image). */
  public ShardInfo withSealedKey(byte[] key) {
    return new ShardInfo(imageOffset, storedLength, rawLength, blockLengths, key);
  }

  /** Offset in the image of block {@code k}. */
  public long blockOffset(int k) {
    long off = imageOffset;
    for (int i = 0; i < k; i++) {
      off += blockLengths[i];
    }
    return off;
  }
}

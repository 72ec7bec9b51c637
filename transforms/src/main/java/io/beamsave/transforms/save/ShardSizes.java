package io.beamsave.transforms.save;

import io.beamsave.transforms.format.ImageFormat;
import java.io.Serializable;

/**
 * How a save cuts each library into shards and blocks: the largest shard, the block, and how
 * many workers a library's shards are shared by. The two sizes are checked together, so the
 * order they are given in does not matter. Immutable.
 */
final class ShardSizes implements Serializable {
  private static final long serialVersionUID = 1L;

  private final long shardSize;
  private final int blockSize;
  /** How many workers a library's shards are shared by; see {@link #forLibrary}. */
  private final int spreadOver;

  private ShardSizes(long shardSize, int blockSize, int spreadOver) {
    this.shardSize = shardSize;
    this.blockSize = blockSize;
    this.spreadOver = spreadOver;
  }

  /** Shards of at most {@code shard} bytes in blocks of {@code block}, for one worker. */
  static ShardSizes of(long shard, long block) {
    check(shard, block);
    return new ShardSizes(shard, (int) block, 1);
  }

  /** Both sizes at once; the spread as it was. */
  ShardSizes withSizes(long shard, long block) {
    check(shard, block);
    return new ShardSizes(shard, (int) block, spreadOver);
  }

  private static void check(long shard, long block) {
    if (block < ImageFormat.MIN_BLOCK_SIZE || block > ImageFormat.MAX_BLOCK_SIZE) {
      throw new IllegalArgumentException(
          "block size " + block + " must be between 4 KiB and 64 MiB");
    }
    if (shard < block || shard > SaveSpec.MAX_SHARD_SIZE) {
      throw new IllegalArgumentException(
          "shard size " + shard + " must be between the block size (" + block + ") and 1 GiB");
    }
  }

  /** The same sizes, shards spread over {@code workers} workers (at least 1). */
  ShardSizes spreadOver(int workers) {
    return new ShardSizes(shardSize, blockSize, Math.max(1, workers));
  }

  long shardSize() {
    return shardSize;
  }

  int blockSize() {
    return blockSize;
  }

  /**
   * The shard size of a library of {@code rawBytes} to store: {@link #shardSize()}, or, when
   * the save is spread over several workers, the size that makes the library's shards a
   * multiple of their number and no larger than that, in whole blocks. Workers then finish
   * together: 74 MiB in a 64 MiB and a 10 MiB shard kept one of two cores busy for most of the
   * compression.
   */
  long forLibrary(long rawBytes) {
    long shards = -Math.floorDiv(-rawBytes, shardSize);
    if (spreadOver <= 1 || shards == 0) {
      return shardSize;
    }
    shards = -Math.floorDiv(-shards, spreadOver) * spreadOver;
    long size = -Math.floorDiv(-rawBytes, shards);
    return Math.min(shardSize, Math.max(blockSize, -Math.floorDiv(-size, blockSize) * blockSize));
  }
}

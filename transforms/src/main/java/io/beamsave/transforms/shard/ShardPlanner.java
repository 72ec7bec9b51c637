package io.beamsave.transforms.shard;

import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * Lays a library's files, sorted by path ({@link PathOrder}), end to end as one virtual stream and
 * cuts it every {@code shardSize} bytes: small files are packed together, large files split, and
 * every shard but the last holds exactly {@code shardSize} raw bytes, unless describing its
 * pieces would take more than {@link #MAX_PIECE_BYTES}: a shard is one worker's task, and the
 * worker holds the list of its pieces, so 64 MiB of files of a few bytes each closes early
 * rather than make a task of millions of pieces. Deterministic: the same entries and shard size
 * always give the same plan, so the plan can be recomputed instead of shipped.
 */
public final class ShardPlanner {
  private ShardPlanner() {}

  /** The entries sorted by path with extents (without digests) set on files, and the shards. */
  public record Plan(List<Entry> entries, List<Long> shardRawLengths) {
    public int shardCount() {
      return shardRawLengths.size();
    }

    public long rawBytes() {
      long n = 0;
      for (long len : shardRawLengths) {
        n += len;
      }
      return n;
    }
  }

  /**
   * The most a shard's pieces may take to describe ({@link #pieceBytes} each): about 200,000
   * pieces of files with short names, some 30 MB of a worker's heap.
   */
  public static final long MAX_PIECE_BYTES = 16L << 20;

  /** What a piece of the file at {@code path} takes to describe, as a shard's task stages it. */
  public static long pieceBytes(int pathLength) {
    return 70 + pathLength;
  }

  /** The order of a catalog's entries, and so of a library's bytes in its shards. */
  public static final Comparator<Entry> BY_PATH = PathOrder.ENTRIES;

  public static Plan plan(List<Entry> entries, long shardSize) {
    List<Entry> sorted = new ArrayList<>(entries);
    Collections.sort(sorted, BY_PATH);
    Layout layout = new Layout(shardSize);
    List<Entry> planned = new ArrayList<>(sorted.size());
    for (Entry e : sorted) {
      planned.add(layout.place(e));
    }
    return new Plan(planned, layout.shardRawLengths());
  }

  /**
   * The plan made one entry at a time, for entries given in {@link #BY_PATH} order: what {@link
   * #plan} does without holding them. Not thread-safe.
   */
  public static final class Layout {
    private final long shardSize;
    /** The shard being filled, the bytes and the description of pieces it holds so far. */
    private int shard;
    private long inShard;
    private long described;
    private long pos;
    private final List<Long> closed = new ArrayList<>();

    public Layout(long shardSize) {
      if (shardSize <= 0) {
        throw new IllegalArgumentException("shardSize must be positive, was " + shardSize);
      }
      this.shardSize = shardSize;
    }

    /**
     * {@code e} with its extents: a file's bytes at the stream's end (or, unchanged since the
     * base image, where they are there); none for other entries.
     */
    public Entry place(Entry e) {
      if (!e.isFile()) {
        return e.extents().isEmpty() ? e : e.withExtents(List.of());
      }
      if (!e.extents().isEmpty() && e.extents().get(0).isReference()) {
        // Unchanged since the base image (IncrementalPlan): its bytes are there already.
        return e;
      }
      List<Extent> extents = new ArrayList<>(1);
      long remaining = e.size();
      long cost = pieceBytes(e.path().length());
      while (remaining > 0) {
        if (inShard == shardSize || (inShard > 0 && described + cost > MAX_PIECE_BYTES)) {
          closed.add(inShard);
          shard = Math.incrementExact(shard);
          inShard = 0;
          described = 0;
        }
        long n = Math.min(remaining, shardSize - inShard);
        extents.add(new Extent(shard, inShard, n, null));
        inShard += n;
        described += cost;
        pos += n;
        remaining -= n;
      }
      return e.withExtents(extents);
    }

    /** The raw bytes laid out so far. */
    public long rawBytes() {
      return pos;
    }

    public int shardCount() {
      return inShard > 0 ? shard + 1 : shard;
    }

    /** Each shard's raw length, as far as the entries placed make them. */
    public List<Long> shardRawLengths() {
      List<Long> shards = new ArrayList<>(closed);
      if (inShard > 0) {
        shards.add(inShard);
      }
      return shards;
    }
  }
}

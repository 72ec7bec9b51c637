package io.beamsave.transforms.shard;

import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.image.catalog.Ranges;
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

  /**
   * An extent of a file's own bytes not laid out yet: {@code length} bytes of the file, to be
   * placed in this image's shards ({@link Layout#place}). A file changed since its base has
   * these among references to the ranges that did not change.
   */
  public static Extent toPlace(long length) {
    return new Extent(0, -1, 0, length, null);
  }

  /** Whether {@code x} is one of {@link #toPlace}'s. */
  public static boolean isToPlace(Extent x) {
    return x.image() == 0 && x.shard() == -1;
  }

  /**
   * Whether the worker that reads {@code length} bytes of a file of {@code fileSize} bytes from
   * {@code fileOffset} digests its ranges ({@link Ranges}, {@link Ranges#DEFAULT_SHIFT}): the
   * file records them and the piece is whole ranges, as {@link Layout#place} cuts them. Both the
   * worker and the assembly of the catalog ask, so that they agree on which digests there are.
   */
  public static boolean digestsRanges(long fileSize, long fileOffset, long length) {
    long range = 1L << Ranges.DEFAULT_SHIFT;
    long end = fileOffset + length;
    return Ranges.recordedFor(fileSize, Ranges.DEFAULT_SHIFT) && fileOffset % range == 0
        && (end % range == 0 || end == fileSize);
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
     * base image, where they are there); none for other entries. A file whose bytes are partly
     * in a base ({@link #toPlace} extents among references) has only the rest laid out.
     *
     * <p>A file that records its {@link Ranges} is cut between shards only where a range ends,
     * so that each worker digests whole ranges: the shard before such a cut closes up to a
     * range short of full.
     */
    public Entry place(Entry e) {
      if (!e.isFile()) {
        return e.extents().isEmpty() ? e : e.withExtents(List.of());
      }
      List<Extent> given = e.extents();
      if (!given.isEmpty() && given.stream().noneMatch(ShardPlanner::isToPlace)) {
        // Unchanged since the base image (IncrementalPlan): its bytes are there already.
        return e;
      }
      long range = 1L << Ranges.DEFAULT_SHIFT;
      boolean aligned = Ranges.recordedFor(e.size(), Ranges.DEFAULT_SHIFT) && shardSize >= range;
      List<Extent> extents = new ArrayList<>(Math.max(1, given.size()));
      long cost = pieceBytes(e.path().length());
      long fileOffset = 0;
      for (Extent x : given.isEmpty() ? List.of(toPlace(e.size())) : given) {
        if (!isToPlace(x)) {
          extents.add(x);
          fileOffset += x.length();
          continue;
        }
        long remaining = x.length();
        while (remaining > 0) {
          if (inShard == shardSize || (inShard > 0 && described + cost > MAX_PIECE_BYTES)) {
            close();
          }
          long n = Math.min(remaining, shardSize - inShard);
          if (aligned && n < remaining) {
            // Cut where a range ends; no whole range left in this shard: the next one.
            long cut = Math.floorDiv(fileOffset + n, range) * range - fileOffset;
            if (cut <= 0) {
              close();
              continue;
            }
            n = cut;
          }
          extents.add(new Extent(shard, inShard, n, null));
          inShard += n;
          described += cost;
          pos += n;
          fileOffset += n;
          remaining -= n;
        }
      }
      return e.withExtents(extents);
    }

    private void close() {
      closed.add(inShard);
      shard = Math.incrementExact(shard);
      inShard = 0;
      described = 0;
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

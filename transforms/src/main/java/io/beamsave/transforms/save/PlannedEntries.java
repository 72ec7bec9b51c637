package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.image.catalog.Ranges;
import io.beamsave.transforms.shard.ShardPlanner;
import java.util.AbstractSequentialList;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.ListIterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * A library's catalog entries as the image records them, made one at a time from the listing
 * {@link PlanShards} staged (in path order): each file placed in the shards again ({@link
 * ShardPlanner.Layout}), its extents' digests taken from the shards' results, and flagged if it
 * changed or could not be read, and the {@link LateFiles} merged in path order. Every iteration
 * reads the staged chunks afresh, one at a time,
 * so a catalog of any number of entries is written holding a chunk of them. Sequential and
 * read-only: only {@link #iterator} and {@link #size} work.
 */
final class PlannedEntries extends AbstractSequentialList<Entry> {
  private final SaveSpec spec;
  private final String library;
  private final StagedListing listing;
  private final List<ShardResult> byShard;
  private final Set<PathBytes> changed = new HashSet<>();
  private final Set<PathBytes> unread = new HashSet<>();
  private final List<Entry> late;
  private final int staged;

  /**
   * {@code listing}: the planned listing; {@code byShard}: the result of each shard the image
   * keeps, by shard index; {@code late}: the late files' entries, complete, in path order.
   */
  PlannedEntries(SaveSpec spec, String library, StagedListing listing,
      List<ShardResult> byShard, List<Entry> late) {
    this.spec = spec;
    this.library = library;
    this.listing = listing;
    this.byShard = byShard;
    byShard.forEach(r -> changed.addAll(r.changedPaths()));
    byShard.forEach(r -> r.unreadable().forEach(u -> unread.add(u.path())));
    this.late = late;
    staged = Math.toIntExact(listing.entries());
  }

  @Override
  public int size() {
    return Math.addExact(staged, late.size());
  }

  @Override
  public ListIterator<Entry> listIterator(int index) {
    if (index != 0) {
      throw new UnsupportedOperationException("the planned entries are read in order");
    }
    Iterator<Entry> in = listing.read(spec);
    ShardPlanner.Layout layout = new ShardPlanner.Layout(spec.shardSize(listing.rawBytes()));
    ShardDigests digests = new ShardDigests();
    return new ListIterator<>() {
      private int next;
      private int placed;
      /** The late files' directories, and those of them already in the catalog. */
      private final Set<PathBytes> wantedParents = new HashSet<>();
      private final Set<PathBytes> lateParents = new HashSet<>();

      {
        late.forEach(l -> wantedParents.add(l.path().parent()));
      }
      private int lateNext;
      /** The next planned entry, placed, once looked at. */
      private Entry pending;

      @Override
      public boolean hasNext() {
        return next < size();
      }

      @Override
      public Entry next() {
        if (next >= size()) {
          throw new NoSuchElementException();
        }
        next++;
        if (pending == null && placed < staged) {
          placed++;
          pending = planned();
        }
        if (lateNext < late.size()) {
          Entry l = late.get(lateNext);
          int order = pending == null ? -1 : PathOrder.compare(l.path(), pending.path());
          if (order == 0) {
            throw new IllegalStateException(library + ": late file " + l.path()
                + " is in the listing too");
          }
          if (order < 0) {
            lateNext++;
            PathBytes parent = l.path().parent();
            if (parent != null && parent.length() > 0 && !lateParents.contains(parent)) {
              throw new BeamsaveException(library + ": the directory " + parent + " of " + l.path()
                  + ", which is added at the save's end, is not in the image (left out?)");
            }
            return l;
          }
        }
        Entry e = pending;
        pending = null;
        if (e.type() == io.beamsave.transforms.image.catalog.EntryType.DIRECTORY
            && wantedParents.contains(e.path())) {
          lateParents.add(e.path());
        }
        return e;
      }

      private Entry planned() {
        Entry e = layout.place(in.next());
        if (!e.isFile()) {
          return e;
        }
        List<Extent> extents = new ArrayList<>(e.extents().size());
        // The ranges the shards digested join those the plan took from the base.
        boolean own = false;
        byte[] ranges = Ranges.recordedFor(e.size(), Ranges.DEFAULT_SHIFT)
            ? (e.ranges().isNone() ? new byte[Math.toIntExact(Ranges.countFor(e.size(),
                Ranges.DEFAULT_SHIFT) * Ranges.DIGEST_SIZE)] : e.ranges().digests().clone())
            : null;
        long fileOffset = 0;
        for (Extent x : e.extents()) {
          if (x.isReference()) {
            extents.add(x);
          } else {
            own = true;
            extents.add(x.withDigest(digests.next(x.shard())));
            if (ShardPlanner.digestsRanges(e.size(), fileOffset, x.length())) {
              int n = Math.toIntExact(Ranges.countFor(x.length(), Ranges.DEFAULT_SHIFT));
              byte[] got = digests.ranges(x.shard(), n);
              if (ranges != null) {
                System.arraycopy(got, 0, ranges,
                    Math.toIntExact(fileOffset >> Ranges.DEFAULT_SHIFT) * Ranges.DIGEST_SIZE,
                    got.length);
              }
            } else {
              ranges = null;
            }
          }
          fileOffset += x.length();
        }
        int flags = e.flags() | (changed.contains(e.path()) ? Entry.FLAG_CHANGED : 0)
            | (unread.contains(e.path()) ? Entry.FLAG_UNREADABLE : 0);
        Entry done = e.withExtents(extents).withFlags(flags);
        if (own) {
          done = done.withRanges(ranges == null ? Ranges.NONE
              : new Ranges(Ranges.DEFAULT_SHIFT, ranges));
        }
        return done;
      }

      @Override
      public boolean hasPrevious() {
        return false;
      }

      @Override
      public Entry previous() {
        throw new UnsupportedOperationException();
      }

      @Override
      public int nextIndex() {
        return next;
      }

      @Override
      public int previousIndex() {
        return next - 1;
      }

      @Override
      public void remove() {
        throw new UnsupportedOperationException();
      }

      @Override
      public void set(Entry e) {
        throw new UnsupportedOperationException();
      }

      @Override
      public void add(Entry e) {
        throw new UnsupportedOperationException();
      }
    };
  }

  /**
   * The shards' digests, taken in turn. Shards are packed in path order, so a few are in use at
   * a time: each is loaded when its first piece comes and let go after its last.
   */
  private final class ShardDigests {
    private final byte[][] loaded = new byte[byShard.size()][];
    private final int[] cursor = new int[byShard.size()];
    private final int[] rangeCursor = new int[byShard.size()];

    /** The next {@code n} range digests of shard {@code shard}. */
    byte[] ranges(int shard, int n) {
      byte[] all = byShard.get(shard).rangeDigests();
      int at = rangeCursor[shard];
      int end = at + n * Ranges.DIGEST_SIZE;
      if (end > all.length) {
        throw new IllegalStateException("shard " + shard + " has fewer range digests than"
            + " ranges");
      }
      rangeCursor[shard] = end;
      return java.util.Arrays.copyOfRange(all, at, end);
    }

    byte[] next(int shard) {
      if (loaded[shard] == null) {
        loaded[shard] = byShard.get(shard).digests(spec, library);
      }
      byte[] all = loaded[shard];
      int at = cursor[shard]++ * ImageFormat.DIGEST_SIZE;
      if (at + ImageFormat.DIGEST_SIZE > all.length) {
        throw new IllegalStateException("shard " + shard + " has fewer digests than pieces");
      }
      if (at + ImageFormat.DIGEST_SIZE == all.length) {
        loaded[shard] = EMPTY;
      }
      return java.util.Arrays.copyOfRange(all, at, at + ImageFormat.DIGEST_SIZE);
    }
  }

  private static final byte[] EMPTY = new byte[0];
}

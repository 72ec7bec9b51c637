package io.beamsave.transforms.save;

import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.shard.ShardPlanner;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.AbstractSequentialList;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.ListIterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * A library's catalog entries as the image records them, made one at a time from the listing
 * {@link PlanShards} staged (in path order): each file placed in the shards again ({@link
 * ShardPlanner.Layout}), its extents' digests taken from the shards' results, and flagged if it
 * changed or could not be read. Every iteration decodes the staged bytes afresh, so a catalog of
 * any number of entries is written holding one of them at a time, beside the listing's compact
 * bytes. Sequential and read-only: only {@link #iterator} and {@link #size} work.
 */
final class PlannedEntries extends AbstractSequentialList<Entry> {
  private final byte[] listing;
  private final long shardSize;
  private final List<ShardResult> byShard;
  private final Set<PathBytes> changed = new HashSet<>();
  private final Set<PathBytes> unread = new HashSet<>();
  private final int size;

  /**
   * {@code listing}: the staged bytes; {@code byShard}: the result of each shard the image
   * keeps, by shard index.
   */
  PlannedEntries(byte[] listing, long shardSize, List<ShardResult> byShard) {
    this.listing = listing;
    this.shardSize = shardSize;
    this.byShard = byShard;
    byShard.forEach(r -> changed.addAll(r.changedPaths()));
    byShard.forEach(r -> r.unreadable().forEach(u -> unread.add(u.path())));
    try (DataInputStream in = open()) {
      Listing.readHead(in);
      size = in.readInt();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private DataInputStream open() {
    return new DataInputStream(new ByteArrayInputStream(listing));
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public ListIterator<Entry> listIterator(int index) {
    if (index != 0) {
      throw new UnsupportedOperationException("the planned entries are read in order");
    }
    DataInputStream in = open();
    try {
      Listing.readHead(in);
      in.readInt();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ShardPlanner.Layout layout = new ShardPlanner.Layout(shardSize);
    int[] cursor = new int[byShard.size()];
    return new ListIterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < size;
      }

      @Override
      public Entry next() {
        if (next >= size) {
          throw new NoSuchElementException();
        }
        next++;
        Entry e;
        try {
          e = layout.place(Listing.readEntry(in));
        } catch (IOException x) {
          throw new UncheckedIOException(x);
        }
        if (!e.isFile()) {
          return e;
        }
        List<Extent> extents = new ArrayList<>(e.extents().size());
        for (Extent x : e.extents()) {
          extents.add(x.isReference() ? x
              : x.withDigest(byShard.get(x.shard()).digests().get(cursor[x.shard()]++)));
        }
        int flags = e.flags() | (changed.contains(e.path()) ? Entry.FLAG_CHANGED : 0)
            | (unread.contains(e.path()) ? Entry.FLAG_UNREADABLE : 0);
        return e.withExtents(extents).withFlags(flags);
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
}

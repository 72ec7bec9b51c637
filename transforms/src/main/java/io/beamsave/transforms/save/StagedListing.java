package io.beamsave.transforms.save;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.walk.Listing;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.AbstractSequentialList;
import java.util.Iterator;
import java.util.List;
import java.util.ListIterator;

/**
 * One library's listing as it travels between the steps of a save: the listing's head (root,
 * what could not be read, paths listed but missing, bases) and counts, with its entries in
 * staging ({@link StagedEntries}, in path order), so that the element stays small whatever the
 * library holds.
 *
 * @param head the listing's root, what the walk could not read, and the bases
 * @param segments the staged streams that hold the entries, one after another: one, or a part
 *     of the library each when it was walked in parts
 * @param files how many of the entries are files
 * @param rawBytes the bytes of those files the new image stores (not those left in a base)
 * @param referencedBytes the bytes of files left in a base
 * @param shards how many shards the plan made, once planned (-1 before)
 * @param comparedBytes the bytes of changed files read while planned, to find the ranges a base
 *     holds of them
 */
public record StagedListing(Listing head, List<Segment> segments, long entries, long files,
    long rawBytes, long referencedBytes, int shards, long comparedBytes) {

  /** One staged stream of entries: its stem, its chunks and how many entries it holds. */
  public record Segment(String stem, int chunks, long entries) {}

  public StagedListing {
    segments = List.copyOf(segments);
  }

  /** A listing not planned yet. */
  public StagedListing(Listing head, List<Segment> segments, long entries, long files,
      long rawBytes, long referencedBytes) {
    this(head, segments, entries, files, rawBytes, referencedBytes, -1, 0);
  }

  /** The same listing, planned into {@code count} shards. */
  public StagedListing withShards(int count) {
    return new StagedListing(head, segments, entries, files, rawBytes, referencedBytes, count,
        comparedBytes);
  }

  /** The same listing, {@code bytes} of its changed files read to compare their ranges. */
  public StagedListing withComparedBytes(long bytes) {
    return new StagedListing(head, segments, entries, files, rawBytes, referencedBytes, shards,
        bytes);
  }

  /** A listing staged as one stream. */
  public StagedListing(Listing head, String stem, int chunks, long entries, long files,
      long rawBytes, long referencedBytes) {
    this(head, List.of(new Segment(stem, chunks, entries)), entries, files, rawBytes,
        referencedBytes);
  }

  /** The entries, read from staging in order, a chunk at a time, as often as iterated. */
  public List<Entry> entries(SaveSpec spec) {
    return new AbstractSequentialList<>() {
      @Override
      public int size() {
        return Math.toIntExact(entries);
      }

      @Override
      public Iterator<Entry> iterator() {
        return read(spec);
      }

      @Override
      public ListIterator<Entry> listIterator(int index) {
        throw new UnsupportedOperationException("staged entries are read in order");
      }
    };
  }

  Iterator<Entry> read(SaveSpec spec) {
    Iterator<Segment> next = segments.iterator();
    return new Iterator<>() {
      private Iterator<Entry> at = java.util.Collections.emptyIterator();

      @Override
      public boolean hasNext() {
        while (!at.hasNext() && next.hasNext()) {
          Segment s = next.next();
          at = StagedEntries.read(spec, libraryOf(s.stem()), s.stem(), s.chunks(), s.entries());
        }
        return at.hasNext();
      }

      @Override
      public Entry next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        return at.next();
      }
    };
  }

  /** The library a stem belongs to: its first component ({@link Staging#listingName}). */
  private static String libraryOf(String stem) {
    return stem.substring(0, stem.lastIndexOf('/'));
  }

  public static final DataCoder<StagedListing> CODER = new DataCoder<>() {
    @Override
    public void write(StagedListing s, DataOutputStream out) throws IOException {
      Listing.writeHead(s.head, out);
      out.writeInt(s.segments.size());
      for (Segment g : s.segments) {
        out.writeUTF(g.stem());
        out.writeInt(g.chunks());
        out.writeLong(g.entries());
      }
      out.writeLong(s.entries);
      out.writeLong(s.files);
      out.writeLong(s.rawBytes);
      out.writeLong(s.referencedBytes);
      out.writeInt(s.shards);
      out.writeLong(s.comparedBytes);
    }

    @Override
    public StagedListing read(DataInputStream in) throws IOException {
      Listing head = Listing.readHead(in);
      int n = in.readInt();
      List<Segment> segments = new java.util.ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        segments.add(new Segment(in.readUTF(), in.readInt(), in.readLong()));
      }
      return new StagedListing(head, segments, in.readLong(), in.readLong(), in.readLong(),
          in.readLong(), in.readInt(), in.readLong());
    }
  };
}

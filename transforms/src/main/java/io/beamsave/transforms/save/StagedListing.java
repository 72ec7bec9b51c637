package io.beamsave.transforms.save;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.image.Entry;
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
 * @param stem the staged stream that holds the entries
 * @param files how many of the entries are files
 * @param rawBytes the bytes of those files the new image stores (not those left in a base)
 * @param referencedBytes the bytes of files left in a base
 */
public record StagedListing(Listing head, String stem, int chunks, long entries, long files,
    long rawBytes, long referencedBytes) {

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
    return StagedEntries.read(spec, libraryOf(stem), stem, chunks, entries);
  }

  /** The library a stem belongs to: its first component ({@link SaveSpec#listingName}). */
  private static String libraryOf(String stem) {
    return stem.substring(0, stem.lastIndexOf('/'));
  }

  public static final DataCoder<StagedListing> CODER = new DataCoder<>() {
    @Override
    public void write(StagedListing s, DataOutputStream out) throws IOException {
      Listing.writeHead(s.head, out);
      out.writeUTF(s.stem);
      out.writeInt(s.chunks);
      out.writeLong(s.entries);
      out.writeLong(s.files);
      out.writeLong(s.rawBytes);
      out.writeLong(s.referencedBytes);
    }

    @Override
    public StagedListing read(DataInputStream in) throws IOException {
      Listing head = Listing.readHead(in);
      return new StagedListing(head, in.readUTF(), in.readInt(), in.readLong(), in.readLong(),
          in.readLong(), in.readLong());
    }
  };
}

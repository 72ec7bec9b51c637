package io.beamsave.transforms.save;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.CatalogReader;
import io.beamsave.transforms.image.CatalogWriter;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.image.PathBytes;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The library root and the entries of one library, as {@link ListLibrary} found them, with what
 * the walk could not read and skipped ({@code --skip-unreadable}) and the paths {@code
 * --files-from} listed that the library does not hold. Once planned against a base image
 * ({@link io.beamsave.transforms.shard.IncrementalPlan}), unchanged files carry their reference
 * extents, and {@code bases} and {@code depth} are the new image's. A whole library travels as one element:
 * per-element overhead, not bytes, dominates on the DirectRunner, and planning needs every entry
 * at once anyway.
 */
public record Listing(
    Entry root, List<Entry> entries, List<Unreadable> unreadable, List<PathBytes> missing,
    List<Catalog.Base> bases, int depth) {

  public Listing(Entry root, List<Entry> entries) {
    this(root, entries, List.of(), List.of());
  }

  public Listing(
      Entry root, List<Entry> entries, List<Unreadable> unreadable, List<PathBytes> missing) {
    this(root, entries, unreadable, missing, List.of(), 0);
  }

  /** The same listing with {@code newEntries} (planned, say) instead. */
  public Listing withEntries(List<Entry> newEntries) {
    return new Listing(root, newEntries, unreadable, missing, bases, depth);
  }

  /** The same listing planned against a base: its entries, and the new image's bases. */
  public Listing withBases(List<Entry> newEntries, List<Catalog.Base> newBases, int newDepth) {
    return new Listing(root, newEntries, unreadable, missing, List.copyOf(newBases), newDepth);
  }

  /** Raw bytes of files whose bytes stay in a base image. */
  public long referencedBytes() {
    long n = 0;
    for (Entry e : entries) {
      for (Extent x : e.extents()) {
        n += x.isReference() ? x.length() : 0;
      }
    }
    return n;
  }

  public static final DataCoder<Listing> CODER =
      new DataCoder<>() {
        @Override
        public void write(Listing b, DataOutputStream out) throws IOException {
          writeHead(b, b.entries.size(), out);
          for (Entry e : b.entries) {
            writeEntry(e, out);
          }
        }

        @Override
        public Listing read(DataInputStream in) throws IOException {
          Listing head = readHead(in);
          int n = in.readInt();
          List<Entry> entries = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            entries.add(readEntry(in));
          }
          return head.withEntries(entries);
        }
      };

  /**
   * Writes everything but the entries, then their count: the entries follow, each by {@link
   * #writeEntry}, so that a reader can take them one at a time ({@link #readHead}, then {@link
   * #readEntry} as often as the count says).
   */
  static void writeHead(Listing b, int entries, DataOutputStream out) throws IOException {
    CatalogWriter.writeEntryMetadata(out, b.root);
    Unreadable.writeAll(out, b.unreadable);
    Unreadable.writePaths(out, b.missing);
    out.writeInt(b.depth);
    out.writeInt(b.bases.size());
    for (Catalog.Base base : b.bases) {
      out.write(base.id().bytes());
      out.write(base.catalogDigest());
      out.writeLong(base.createdMillis());
      out.writeUTF(base.location());
    }
    out.writeInt(entries);
  }

  /** An entry: its metadata, and its extents if they are references (own ones are planned). */
  static void writeEntry(Entry e, DataOutputStream out) throws IOException {
    CatalogWriter.writeEntryMetadata(out, e);
    boolean refs = !e.extents().isEmpty() && e.extents().get(0).isReference();
    out.writeInt(refs ? e.extents().size() : 0);
    for (Extent x : refs ? e.extents() : List.<Extent>of()) {
      out.writeShort(x.image());
      out.writeInt(x.shard());
      out.writeLong(x.offset());
      out.writeLong(x.length());
      out.write(x.digest());
    }
  }

  /** What {@link #writeHead} wrote but the entry count: a listing without entries. */
  static Listing readHead(DataInputStream in) throws IOException {
    Entry root = CatalogReader.readEntryMetadata(in);
    List<Unreadable> unreadable = Unreadable.readAll(in);
    List<PathBytes> missing = Unreadable.readPaths(in);
    int depth = in.readInt();
    int nb = in.readInt();
    List<Catalog.Base> bases = new ArrayList<>(nb);
    for (int i = 0; i < nb; i++) {
      byte[] id = new byte[ImageId.SIZE];
      in.readFully(id);
      byte[] digest = new byte[32];
      in.readFully(digest);
      bases.add(new Catalog.Base(new ImageId(id), digest, in.readLong(), in.readUTF()));
    }
    return new Listing(root, List.of(), unreadable, missing, bases, depth);
  }

  static Entry readEntry(DataInputStream in) throws IOException {
    Entry e = CatalogReader.readEntryMetadata(in);
    int refs = in.readInt();
    if (refs == 0) {
      return e;
    }
    List<Extent> extents = new ArrayList<>(refs);
    for (int k = 0; k < refs; k++) {
      int image = in.readUnsignedShort();
      int shard = in.readInt();
      long offset = in.readLong();
      long length = in.readLong();
      byte[] digest = new byte[io.beamsave.transforms.format.ImageFormat.DIGEST_SIZE];
      in.readFully(digest);
      extents.add(new Extent(image, shard, offset, length, digest));
    }
    return e.withExtents(extents);
  }
}

package io.beamsave.transforms.walk;

import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogReader;
import io.beamsave.transforms.image.catalog.CatalogWriter;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.Meta;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.Ranges;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The library root and the entries of one library, as {@code save.ListLibrary} found them, with
 * what the walk could not read and skipped ({@code --skip-unreadable}) and the paths {@code
 * --files-from} listed that the library does not hold. Once planned against a base image ({@link
 * io.beamsave.transforms.shard.IncrementalPlan}), {@code bases} and {@code depth} are the new
 * image's. A save hands it on as the head of a {@code save.StagedListing}, without entries, which
 * wait in staging; {@link #writeEntry} and {@link #readEntry} are their form there.
 */
public record Listing(
    Entry root, List<Unreadable> unreadable, List<PathBytes> missing, List<Catalog.Base> bases,
    int depth) {

  public Listing(Entry root, List<Unreadable> unreadable, List<PathBytes> missing) {
    this(root, unreadable, missing, List.of(), 0);
  }

  /** The same listing planned against a base: the new image's bases and depth. */
  public Listing withBases(List<Catalog.Base> newBases, int newDepth) {
    return new Listing(root, unreadable, missing, List.copyOf(newBases), newDepth);
  }

  /**
   * Writes the listing; its entries are written apart, each by {@link #writeEntry}.
   */
  public static void writeHead(Listing b, DataOutputStream out) throws IOException {
    CatalogWriter.writeEntryMetadata(out, b.root);
    writeMeta(b.root, out);
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
  }

  /**
   * An entry: its metadata, its extents if some are references (own ones are planned, but for
   * where they lie among the references), and its range digests.
   */
  public static void writeEntry(Entry e, DataOutputStream out) throws IOException {
    CatalogWriter.writeEntryMetadata(out, e);
    writeMeta(e, out);
    boolean refs = e.extents().stream().anyMatch(Extent::isReference);
    out.writeInt(refs ? e.extents().size() : 0);
    for (Extent x : refs ? e.extents() : List.<Extent>of()) {
      out.writeShort(x.image());
      out.writeInt(x.shard());
      out.writeLong(x.offset());
      out.writeLong(x.length());
      out.writeBoolean(x.digest() != null);
      if (x.digest() != null) {
        out.write(x.digest());
      }
    }
    if (e.isFile()) {
      out.writeByte(e.ranges().shift());
      writeBytes(e.ranges().digests(), out);
    }
  }

  /**
   * What an entry holds beyond what {@link CatalogWriter#writeEntryMetadata} writes: a hard
   * link's target, the names, extended attributes and device number. Staging is this save's
   * own, so nothing here is checked as an image's would be.
   */
  private static void writeMeta(Entry e, DataOutputStream out) throws IOException {
    if (e.isHardLink()) {
      writeBytes(e.linkTarget().bytes(), out);
    }
    Meta m = e.meta();
    writeBytes(m.user(), out);
    writeBytes(m.group(), out);
    out.writeLong(m.rdev());
    out.writeInt(m.xattrs().size());
    for (Meta.Xattr x : m.xattrs()) {
      writeBytes(x.name(), out);
      writeBytes(x.value(), out);
    }
  }

  private static Entry readMeta(Entry e, DataInputStream in) throws IOException {
    if (e.isHardLink()) {
      e = new Entry(e.path(), e.type(), e.flags(), e.mode(), e.uid(), e.gid(),
          e.mtimeSeconds(), e.mtimeNanos(), e.ctimeSeconds(), e.ctimeNanos(), e.inode(),
          e.size(), PathBytes.of(readBytes(in)), e.extents());
    }
    byte[] user = readBytes(in);
    byte[] group = readBytes(in);
    long rdev = in.readLong();
    int n = in.readInt();
    List<Meta.Xattr> xattrs = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      xattrs.add(new Meta.Xattr(readBytes(in), readBytes(in)));
    }
    Meta m = new Meta(user, group, xattrs, rdev);
    return m.isNone() ? e : e.withMeta(m);
  }

  private static void writeBytes(byte[] b, DataOutputStream out) throws IOException {
    out.writeInt(b == null ? -1 : b.length);
    if (b != null) {
      out.write(b);
    }
  }

  private static byte[] readBytes(DataInputStream in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    byte[] b = new byte[n];
    in.readFully(b);
    return b;
  }

  /** What {@link #writeHead} wrote. */
  public static Listing readHead(DataInputStream in) throws IOException {
    Entry root = readMeta(CatalogReader.readEntryMetadata(in), in);
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
    return new Listing(root, unreadable, missing, bases, depth);
  }

  public static Entry readEntry(DataInputStream in) throws IOException {
    Entry e = readMeta(CatalogReader.readEntryMetadata(in), in);
    int refs = in.readInt();
    List<Extent> extents = new ArrayList<>(refs);
    for (int k = 0; k < refs; k++) {
      int image = in.readUnsignedShort();
      int shard = in.readInt();
      long offset = in.readLong();
      long length = in.readLong();
      byte[] digest = null;
      if (in.readBoolean()) {
        digest = new byte[io.beamsave.transforms.format.ImageFormat.DIGEST_SIZE];
        in.readFully(digest);
      }
      extents.add(new Extent(image, shard, offset, length, digest));
    }
    if (refs > 0) {
      e = e.withExtents(extents);
    }
    if (e.isFile()) {
      int shift = in.readUnsignedByte();
      byte[] digests = readBytes(in);
      if (digests.length > 0) {
        e = e.withRanges(new Ranges(shift, digests));
      }
    }
    return e;
  }
}

package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.format.ImageId;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * Serializes the catalog to its raw bytes (docs/image-format.md, "Catalog"): the head of a
 * paged catalog ({@link #head}; its pages are cut by {@link CatalogPager}), or a whole catalog
 * as versions 3 and 4 laid it out ({@link #encode}, which tests still write). {@link
 * CatalogReader} and {@link CatalogHead} read them back. Static methods only.
 */
public final class CatalogWriter {
  /** The most bases a catalog may list: extents name them by a u16. */
  public static final int MAX_BASES = 65_535;

  private CatalogWriter() {}

  /**
   * The catalog's raw bytes as a whole catalog (format version 3, or 4 for an encrypted image,
   * whose shard table holds each shard's wrapped key).
   */
  public static byte[] encode(Catalog c) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + c.entries().size() * 96);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      writePreamble(out, c, false);
      out.writeInt(c.entries().size());
      for (Entry e : c.entries()) {
        writeEntry(out, e);
      }
      writeShards(out, c);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /**
   * The head of a paged catalog (version 5, or 6 encrypted): what {@link #encode} writes but
   * the entries, then {@code pageKey} (encrypted only), the totals and the page index.
   */
  public static byte[] head(Catalog c, CatalogHead.Totals totals, List<CatalogHead.Page> pages,
      byte[] pageKey) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256 + pages.size() * 96);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      writePreamble(out, c, true);
      writeShards(out, c);
      if (c.encrypted()) {
        out.write(pageKey);
      }
      out.writeLong(totals.entries());
      out.writeLong(totals.files());
      out.writeLong(totals.rawBytes());
      out.writeLong(totals.ownBytes());
      out.writeLong(totals.changed());
      out.writeLong(totals.unreadable());
      out.writeInt(pages.size());
      for (CatalogHead.Page p : pages) {
        writeBytes(out, p.firstPath(), "path");
        out.writeInt(p.entries());
        out.writeInt(p.blocks());
        out.writeInt(p.rawLength());
        out.writeLong(p.offset());
        out.writeLong(p.storedLength());
        out.write(p.digest());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /**
   * What comes before the entries; {@code meta}: with the root's metadata and the notes
   * (version 11; version 9 had the metadata alone).
   */
  private static void writePreamble(DataOutputStream out, Catalog c, boolean meta)
      throws IOException {
    out.write(ImageFormat.CATALOG_MAGIC);
    writeText(out, c.library());
    writeText(out, c.codecSpec());
    out.writeLong(c.createdMillis());
    out.writeInt(c.blockSize());
    out.writeLong(c.shardSize());
    writeRoot(out, c.root());
    if (meta) {
      new PackedEntries.Writer(out).writeMeta(c.root().meta());
    }
    out.write(c.id().bytes());
    out.write(c.origin() == null ? new byte[ImageId.SIZE] : c.origin().bytes());
    out.writeInt(c.depth());
    if (c.bases().size() > MAX_BASES) {
      throw new IllegalArgumentException("more than " + MAX_BASES + " base images");
    }
    out.writeShort(c.bases().size());
    for (Catalog.Base b : c.bases()) {
      out.write(b.id().bytes());
      out.write(b.catalogDigest());
      out.writeLong(b.createdMillis());
      writeBytes(out, PathBytes.of(b.location()), "base location");
    }
    if (meta) {
      // Version 11 on: a catalog with entry metadata holds notes too.
      Map<String, String> notes = Notes.check(c.notes());
      out.writeShort(notes.size());
      for (Map.Entry<String, String> n : notes.entrySet()) {
        writeText(out, n.getKey());
        writeText(out, n.getValue());
      }
    }
  }

  /** An entry with its extents, as catalogs of version 3 on lay it out. */
  static void writeEntry(DataOutputStream out, Entry e) throws IOException {
    writeEntryMetadata(out, e);
    if (e.isFile()) {
      out.writeInt(e.extents().size());
      for (Extent x : e.extents()) {
        out.writeShort(x.image());
        out.writeInt(x.shard());
        out.writeLong(x.offset());
        out.writeLong(x.length());
        out.write(x.digest());
      }
    }
  }

  private static void writeShards(DataOutputStream out, Catalog c) throws IOException {
    out.writeInt(c.shards().size());
    for (ShardInfo s : c.shards()) {
      out.writeLong(s.imageOffset());
      out.writeLong(s.storedLength());
      out.writeLong(s.rawLength());
      out.writeInt(s.blockLengths().length);
      for (int len : s.blockLengths()) {
        out.writeInt(len);
      }
      if (c.encrypted()) {
        if (s.sealedKey() == null || s.sealedKey().length != ImageKey.WRAPPED_KEY_SIZE) {
          throw new IllegalArgumentException("a shard of an encrypted image without its key");
        }
        out.write(s.sealedKey());
      }
    }
  }

  private static void writeRoot(DataOutputStream out, Entry root) throws IOException {
    if (root == null) {
      throw new IllegalArgumentException("a catalog records its library root");
    }
    out.writeInt(root.mode());
    out.writeInt(root.uid());
    out.writeInt(root.gid());
    out.writeLong(root.mtimeSeconds());
    out.writeInt(root.mtimeNanos());
    out.writeLong(root.ctimeSeconds());
    out.writeInt(root.ctimeNanos());
    out.writeLong(root.inode());
  }

  /**
   * Writes an entry's metadata (everything but its extents) as the current catalog lays it
   * out; the pipeline's listing uses the same encoding.
   */
  public static void writeEntryMetadata(DataOutputStream out, Entry e) throws IOException {
    writeBytes(out, e.path(), "path");
    out.writeByte(e.type().code());
    out.writeByte(e.flags());
    out.writeInt(e.mode());
    out.writeInt(e.uid());
    out.writeInt(e.gid());
    out.writeLong(e.mtimeSeconds());
    out.writeInt(e.mtimeNanos());
    out.writeLong(e.ctimeSeconds());
    out.writeInt(e.ctimeNanos());
    out.writeLong(e.inode());
    out.writeLong(e.size());
    if (e.type() == EntryType.SYMLINK) {
      writeBytes(out, e.linkTarget(), "symlink target");
    }
  }

  private static void writeText(DataOutputStream out, String s) throws IOException {
    writeBytes(out, PathBytes.of(s), "text");
  }

  private static void writeBytes(DataOutputStream out, PathBytes b, String what)
      throws IOException {
    if (b.length() > CatalogPaths.MAX_NAME_BYTES) {
      throw new IOException(what + " longer than " + CatalogPaths.MAX_NAME_BYTES + " bytes: " + b);
    }
    out.writeShort(b.length());
    out.write(b.bytes());
  }
}

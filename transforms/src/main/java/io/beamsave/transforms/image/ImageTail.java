package io.beamsave.transforms.image;

import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.block.BlockBuffer;
import io.beamsave.transforms.image.block.BlockEncoder;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.CatalogPager;
import io.beamsave.transforms.image.catalog.CatalogWriter;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathOrder;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What follows an image's shards, as bytes: its catalog stored as blocks, then the trailer that
 * points at it (docs/image-format.md, "Paged catalog" and "Trailer"). Encodes the catalog into
 * blocks of the image's codec, sealed in an encrypted image, and lays out the pages, the head
 * and the trailer; writes nothing itself. A file image's writer ({@link ImageWriter#finish})
 * appends these bytes, and an image assembled in object storage ends with them too.
 */
public final class ImageTail {
  private ImageTail() {}

  /**
   * The end of an image whose catalog starts at {@code catalogOffset}: the catalog's pages in
   * path order, each as blocks of {@code codec}, then its head, then the trailer pointing at
   * the head (docs/image-format.md, "Paged catalog"). With the catalog's key, the end of an
   * encrypted image: the pages sealed under a key the head holds, the head under a key the
   * trailer holds wrapped. Images assembled in object storage end with these bytes too.
   */
  public static byte[] encode(Catalog catalog, Codec codec, long catalogOffset)
      throws IOException {
    ImageKey key = catalog.key();
    int blockSize = catalog.blockSize();
    List<Entry> entries = catalog.entries();
    // A list held in memory may come in another order (an older image's, consolidated); one
    // streamed is in path order, which the pager checks as it goes.
    if (entries instanceof java.util.RandomAccess && !PathOrder.isSorted(entries)) {
      entries = new ArrayList<>(entries);
      entries.sort(PathOrder.ENTRIES);
    }
    BlockBuffer out = new BlockBuffer(Math.min(entries.size(), 1 << 20) * 24 + 4096);
    byte[] pageKey = key == null ? null : ImageKey.newBlockKey();
    List<CatalogHead.Page> pages = new ArrayList<>();
    CatalogHead.Totals totals;
    try (BlockEncoder blocks = new BlockEncoder(codec, blockSize)) {
      // One key for all pages, their frames numbered on from page to page.
      blocks.sealWith(pageKey);
      byte[] slice = new byte[blockSize];
      CatalogPager pager = new CatalogPager(page -> {
        try {
          long start = out.size();
          int n = writeBlocks(blocks, page.raw(), slice, out);
          pages.add(new CatalogHead.Page(page.firstPath(), page.entries(), n, page.raw().length,
              catalogOffset + start, out.size() - start, CatalogHead.sha256(page.raw())));
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      for (Entry e : entries) {
        pager.add(e);
      }
      totals = pager.finish();
    }
    long headOffset = catalogOffset + out.size();
    byte[] head = CatalogWriter.head(catalog, totals, pages, pageKey);
    byte[] headTail = encodeWhole(head, codec, blockSize, headOffset, key, ImageFormat.VERSION);
    out.write(headTail);
    return out.toByteArray();
  }

  /** Writes {@code raw} as blocks of at most {@code slice.length}; returns how many. */
  private static int writeBlocks(BlockEncoder blocks, byte[] raw, byte[] slice, BlockBuffer out)
      throws IOException {
    int n = 0;
    for (int off = 0; off < raw.length; off += slice.length) {
      int len = Math.min(slice.length, raw.length - off);
      System.arraycopy(raw, off, slice, 0, len);
      blocks.write(slice, len, out);
      n++;
    }
    return n;
  }

  /**
   * {@code raw} (a whole catalog, or a paged catalog's head) at {@code offset} as blocks of
   * {@code codec}, then the trailer pointing at it, of {@code version}; with {@code key}, sealed
   * under a key of its own, which the trailer holds wrapped.
   */
  static byte[] encodeWhole(byte[] raw, Codec codec, int blockSize, long offset, ImageKey key,
      int version) throws IOException {
    BlockBuffer out = new BlockBuffer(raw.length / 2 + 64);
    byte[] catalogKey = key == null ? null : ImageKey.newBlockKey();
    try (BlockEncoder blocks = new BlockEncoder(codec, blockSize)) {
      blocks.sealWith(catalogKey);
      writeBlocks(blocks, raw, new byte[blockSize], out);
    }
    long stored = out.size();
    if (key != null) {
      out.write(ImageEnds.encryptedTrailer(key, catalogKey, raw.length, offset, stored));
      return out.toByteArray();
    }
    out.write(ImageEnds.plainTrailer(offset, stored, raw.length, version));
    return out.toByteArray();
  }
}

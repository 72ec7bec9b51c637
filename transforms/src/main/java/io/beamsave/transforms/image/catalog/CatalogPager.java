package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.format.ImageFormat;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Consumer;

/**
 * Cuts a catalog's entries, given one at a time in {@link PathOrder}, into pages of about
 * {@link ImageFormat#PAGE_TARGET} raw bytes of {@link PackedEntries} (docs/image-format.md,
 * "Paged catalog"), handing
 * each page on as it closes: a writer holds one page of entries, never the catalog. Counts the
 * totals the head records. Not thread-safe.
 */
public final class CatalogPager {
  /** A page's raw bytes, the path of its first entry and how many entries it holds. */
  public record Page(byte[] raw, PathBytes firstPath, int entries) {}

  private final Consumer<Page> sink;
  private final ByteArrayOutputStream buf = new ByteArrayOutputStream(ImageFormat.PAGE_TARGET * 2);
  private final PackedEntries.Writer out =
      new PackedEntries.Writer(new DataOutputStream(buf));
  private PathBytes first;
  private PathBytes last;
  private int count;
  /** The bytes of the page's paths, whole ({@link ImageFormat#PAGE_PATHS_TARGET}). */
  private long pathBytes;
  private long entries;
  private long files;
  private long rawBytes;
  private long ownBytes;
  private long changed;
  private long unreadable;

  public CatalogPager(Consumer<Page> sink) {
    this.sink = sink;
  }

  /** Adds the next entry; it must come after the last one in {@link PathOrder}. */
  public void add(Entry e) {
    if (last != null && PathOrder.compare(last, e.path()) >= 0) {
      throw new IllegalArgumentException("catalog entries out of path order: '" + e.path()
          + "' after '" + last + "'");
    }
    try {
      out.write(e);
    } catch (IOException x) {
      throw new UncheckedIOException(x);
    }
    if (buf.size() > ImageFormat.MAX_PAGE_RAW) {
      throw new IllegalArgumentException("the catalog entry of '" + e.path() + "' needs more"
          + " than " + ImageFormat.MAX_PAGE_RAW + " bytes (a file of too many extents: raise"
          + " --shard-size)");
    }
    if (count == 0) {
      first = e.path();
    }
    last = e.path();
    count++;
    entries++;
    changed += e.changed() ? 1 : 0;
    unreadable += e.unreadable() ? 1 : 0;
    if (e.isFile()) {
      files++;
      rawBytes += e.size();
      for (Extent x : e.extents()) {
        ownBytes += x.isReference() ? 0 : x.length();
      }
    }
    pathBytes += e.path().length();
    if (buf.size() >= ImageFormat.PAGE_TARGET || pathBytes >= ImageFormat.PAGE_PATHS_TARGET) {
      flush();
    }
  }

  /** Hands on the last page, if it holds anything, and returns the totals. */
  public CatalogHead.Totals finish() {
    flush();
    return new CatalogHead.Totals(entries, files, rawBytes, ownBytes, changed, unreadable);
  }

  private void flush() {
    if (count == 0) {
      return;
    }
    sink.accept(new Page(buf.toByteArray(), first, count));
    buf.reset();
    out.restart();
    pathBytes = 0;
    count = 0;
  }
}

package io.beamsave.transforms.image;

import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathOrder;
import java.io.IOException;
import java.util.List;

/**
 * A catalog's entries pulled one at a time, in {@link PathOrder}, a page read when the one
 * before is used up: what walks two catalogs side by side (a diff) takes, in the memory of a
 * page each. Not thread-safe.
 */
public final class CatalogCursor {
  private final ImageSource src;
  private final CatalogHead head;
  private int page = -1;
  private List<Entry> entries = List.of();
  private int at;

  public CatalogCursor(ImageSource src, CatalogHead head) {
    this.src = src;
    this.head = head;
  }

  /** The next entry, or null after the last. */
  public Entry next() throws IOException {
    while (at >= entries.size()) {
      if (page + 1 >= head.pages().size()) {
        return null;
      }
      page++;
      entries = ImageReader.readPage(src, head, page);
      at = 0;
    }
    return entries.get(at++);
  }
}

package io.beamsave.transforms.image;

import java.io.IOException;
import java.util.List;

/**
 * Reads a catalog's entries page by page, in {@link PathOrder}, reading only the pages that can
 * hold the entries asked for: a subtree is one run of pages, and one path is in the page the
 * head's index points to. Holds one page of entries at a time (the last one read, which the
 * next lookup often needs again), so walking a catalog of any size takes the memory of a page.
 * Not thread-safe.
 */
public final class CatalogWalk {
  private final ImageSource src;
  private final CatalogHead head;
  private int cachedPage = -1;
  private List<Entry> cached;
  private int pagesRead;

  public CatalogWalk(ImageSource src, CatalogHead head) {
    this.src = src;
    this.head = head;
  }

  /** What a walk hands each entry to. */
  @FunctionalInterface
  public interface Visitor {
    void visit(Entry e) throws IOException;
  }

  /** How many pages this walk has read. */
  public int pagesRead() {
    return pagesRead;
  }

  private List<Entry> page(int i) throws IOException {
    if (i != cachedPage) {
      cached = ImageReader.readPage(src, head, i);
      cachedPage = i;
      pagesRead++;
    }
    return cached;
  }

  /** Visits the entries at or beneath {@code under} (every entry when it is empty), in order. */
  public void walk(PathBytes under, Visitor visitor) throws IOException {
    for (int i = under.isEmpty() ? 0 : head.pageOf(under); i < head.pages().size(); i++) {
      if (PathOrder.pastSubtree(head.pages().get(i).firstPath(), under)) {
        return;
      }
      for (Entry e : page(i)) {
        if (PathOrder.within(e.path(), under)) {
          visitor.visit(e);
        } else if (PathOrder.pastSubtree(e.path(), under)) {
          return;
        }
      }
    }
  }

  /** The entry at {@code path}, or null if the catalog has none. */
  public Entry find(PathBytes path) throws IOException {
    if (head.pages().isEmpty()) {
      return null;
    }
    for (Entry e : page(head.pageOf(path))) {
      int c = PathOrder.compare(e.path(), path);
      if (c == 0) {
        return e;
      }
      if (c > 0) {
        return null;
      }
    }
    return null;
  }
}

package io.beamsave.transforms.image;

import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PathOrder;
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

  /**
   * Visits the entries at or beneath {@code under} (every entry when it is empty), in order.
   * The next page is read and checked on another thread while the visitor takes this one's.
   */
  public void walk(PathBytes under, Visitor visitor) throws IOException {
    int first = under.isEmpty() ? 0 : head.pageOf(under);
    if (head.whole() == null && first < head.pages().size()) {
      // The pages the walk may read lie together: a store is asked for them in large ranges.
      int end = first + 1;
      while (end < head.pages().size()
          && !PathOrder.pastSubtree(head.pages().get(end).firstPath(), under)) {
        end++;
      }
      CatalogHead.Page last = head.pages().get(end - 1);
      long from = head.pages().get(first).offset();
      src.willRead(from, last.offset() + last.storedLength() - from);
    }
    java.util.concurrent.CompletableFuture<List<Entry>> ahead = null;
    try {
      for (int i = first; i < head.pages().size(); i++) {
        if (PathOrder.pastSubtree(head.pages().get(i).firstPath(), under)) {
          return;
        }
        List<Entry> entries = ahead == null ? page(i) : taken(ahead, i);
        ahead = null;
        if (i + 1 < head.pages().size()
            && !PathOrder.pastSubtree(head.pages().get(i + 1).firstPath(), under)) {
          int next = i + 1;
          ahead = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
              return ImageReader.readPage(src, head, next);
            } catch (IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          }, READER);
        }
        for (Entry e : entries) {
          if (PathOrder.within(e.path(), under)) {
            visitor.visit(e);
          } else if (PathOrder.pastSubtree(e.path(), under)) {
            return;
          }
        }
      }
    } finally {
      if (ahead != null) {
        ahead.cancel(false);
        try {
          ahead.join();
        } catch (RuntimeException ignored) {
          // A page read ahead and not needed: what failed in it does not matter.
        }
      }
    }
  }

  /** The page read ahead, which becomes the page at hand. */
  private List<Entry> taken(java.util.concurrent.CompletableFuture<List<Entry>> ahead, int i)
      throws IOException {
    try {
      cached = ahead.join();
      cachedPage = i;
      pagesRead++;
      return cached;
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof java.io.UncheckedIOException u) {
        throw u.getCause();
      }
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }

  /** Reads pages ahead of a walk; daemon threads, so a walk left unfinished holds no JVM. */
  private static final java.util.concurrent.Executor READER =
      java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "catalog-page-reader");
        t.setDaemon(true);
        return t;
      });

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

package io.beamsave.transforms.walk;

import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.walk.LibraryWalker.Sink;
import io.beamsave.transforms.walk.LibraryWalker.Walked;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hands one walk's entries on in path order, each directory's entry once it has been listed,
 * while a bounded window of the directories coming next is listed ahead, in parallel, by the
 * {@link DirectoryLister}: what it holds is the directories on the way down and that window,
 * never the walk whole.
 */
final class OrderedWalk {
  private final ForkJoinPool pool;
  private final DirectoryLister lister;
  /** The files of more than one name met so far, to save later names as links. */
  private final HardLinks links = new HardLinks();
  /** Entries held by directories listed ahead and not yet handed on. */
  private final AtomicLong held = new AtomicLong();
  /** Listings begun ahead, by the child they list. */
  private final Map<Listed.Child, CompletableFuture<Listed>> ahead = new IdentityHashMap<>();
  private long entries;
  private long files;
  private long rawBytes;

  OrderedWalk(ForkJoinPool pool, DirectoryLister lister) {
    this.pool = pool;
    this.lister = lister;
  }

  /**
   * Hands on the entries beneath {@code top} in path order, each directory's entry once it
   * has been listed, beginning the listings of the directories coming next ahead of time.
   */
  void emit(Listed top, Sink sink) throws IOException {
    Deque<Listed> stack = new ArrayDeque<>();
    stack.push(top);
    try {
      aheadOf(stack);
      while (!stack.isEmpty()) {
        Listed at = stack.peek();
        if (at.next == at.children.length) {
          stack.pop();
          if (at.self != null) {
            at.self.release();
          }
          continue;
        }
        Listed.Child c = at.children[at.next];
        at.children[at.next++] = null;
        if (c.entry().type() != EntryType.DIRECTORY) {
          add(links.of(c.entry(), c.device(), c.links()), sink);
          continue;
        }
        CompletableFuture<Listed> listing = ahead.remove(c);
        Listed sub = join(listing != null ? listing : begin(at, c));
        held.addAndGet(-sub.children.length);
        add(sub.flagged ? WalkedEntry.unreadable(c.entry()) : c.entry(), sink);
        stack.push(sub);
        aheadOf(stack);
      }
    } finally {
      // Listings still running use handles closeLeftovers() is about to close.
      for (CompletableFuture<Listed> f : ahead.values()) {
        try {
          f.join();
        } catch (RuntimeException ignored) {
          // The walk has failed already; this one's failure would say no more.
        }
      }
    }
  }

  private void add(Entry e, Sink sink) throws IOException {
    sink.add(e);
    entries++;
    if (e.isFile()) {
      files++;
      rawBytes += e.size();
    }
  }

  /**
   * Begins listing the directories coming next, nearest first (the deepest directory's rest,
   * then its parent's, and so on), while the window allows.
   */
  private void aheadOf(Deque<Listed> stack) {
    for (Listed at : stack) {
      at.nextAhead = Math.max(at.nextAhead, at.next);
      while (at.nextAhead < at.children.length) {
        if (ahead.size() >= LibraryWalker.AHEAD || held.get() >= LibraryWalker.HELD) {
          return;
        }
        Listed.Child c = at.children[at.nextAhead++];
        if (c.entry().type() == EntryType.DIRECTORY) {
          ahead.put(c, begin(at, c));
        }
      }
    }
  }

  private CompletableFuture<Listed> begin(Listed parent, Listed.Child c) {
    if (c.links() == DirectoryLister.MOUNT_POINT) {
      return CompletableFuture.completedFuture(
          new Listed(c.entry().path(), parent.depth + 1, null, new Listed.Child[0], false));
    }
    return CompletableFuture.supplyAsync(() -> {
      Listed l = lister.list(parent.self, c.name(), c.entry().path(), parent.depth + 1, c.selected());
      held.addAndGet(l.children.length);
      return l;
    }, pool);
  }

  private static Listed join(CompletableFuture<Listed> f) {
    try {
      return f.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }

  /** What the walk found, its top being {@code root}. */
  Walked walked(Entry root) {
    return new Walked(lister.listing(root), entries, files, rawBytes, lister.special.get(),
        lister.excludedByPattern());
  }
}

package io.beamsave.transforms.walk;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.SymlinkException;
import io.beamsave.transforms.image.catalog.CatalogPaths;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.select.Excludes;
import io.beamsave.transforms.select.FilesFrom;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Walks a library through directory handles and hands its entries on one at a time, in {@link
 * io.beamsave.transforms.image.catalog.PathOrder path order}: each directory's names sorted as
 * bytes, a directory followed by what is beneath it. That order is what the catalog's pages keep,
 * so the walk is never held or sorted whole: what it holds is the directories on the way down and a
 * bounded window of directories listed ahead, in parallel, of where the entries have got to (a walk
 * is a chain of small syscalls, and while it runs nothing else in the save can). A directory's own
 * entry is handed on once it has been listed, so that it can carry whether all of it could be.
 *
 * <p>Every directory is opened from its parent's handle without following links, so a directory
 * swapped for a symlink mid-walk fails the walk instead of leading it outside the library.
 *
 * <p>Plain Java, no Beam: {@code save.ListLibrary} runs a walk in its DoFn, or on background
 * threads before the pipeline. Static methods only; one walk's state is shared by its directory
 * tasks on the pool given, and by nothing else.
 */
public final class LibraryWalker {
  private static final PathBytes EMPTY = PathBytes.of(new byte[0]);

  /** Directories listed ahead of the entries handed on, at most. */
  static final int AHEAD = 64;

  /** Entries the directories listed ahead may hold before listing waits for the walk. */
  static final int HELD = 1 << 17;

  private LibraryWalker() {}

  /** What takes the walk's entries, in path order. */
  @FunctionalInterface
  public interface Sink {
    void add(Entry e) throws IOException;
  }

  /**
   * What a walk found besides its entries: the listing's head (root, what could not be read,
   * listed paths missing), counts of the entries handed on, the special files skipped, and the
   * entries each of the operator's exclude patterns left out.
   */
  public record Walked(Listing head, long entries, long files, long rawBytes, long special,
      long[] excluded) {}

  /**
   * The names at the library's top that a walk of one part of it takes, with all beneath them:
   * those from {@code from} (all, if null) up to but not including {@code to} (all, if null),
   * compared as bytes, the order a directory's names are walked in. Consecutive parts whose
   * bounds meet cover the library once, also names made after they were drawn.
   */
  public record TopNames(byte[] from, byte[] to) implements java.io.Serializable {
    public static final TopNames ALL = new TopNames(null, null);

    boolean take(byte[] name) {
      return (from == null || Arrays.compareUnsigned(name, from) >= 0)
          && (to == null || Arrays.compareUnsigned(name, to) < 0);
    }
  }

  /** A pool for walks: one thread per core. */
  public static ForkJoinPool newPool() {
    return new ForkJoinPool(Math.max(1, Runtime.getRuntime().availableProcessors()));
  }

  /**
   * Walks the library at {@code root} on {@code pool}, handing its entries to {@code sink} in
   * path order, leaving out what {@code excludes} does; with {@code only}, just the paths it
   * lists and the way to them; with {@code skip}, keeping what cannot be read flagged unreadable
   * instead of failing.
   */
  public static Walked walk(ForkJoinPool pool, Path root, Excludes excludes, FilesFrom only,
      boolean skip, Sink sink) {
    return walk(pool, root, root, TopNames.ALL, excludes, only, skip, sink);
  }

  /**
   * Like {@link #walk(ForkJoinPool, Path, Excludes, FilesFrom, boolean, Sink)}, one part, with
   * the root named {@code shownAs} in messages (a snapshot as the library it was taken of).
   */
  public static Walked walk(ForkJoinPool pool, Path root, Path shownAs, TopNames part,
      Excludes excludes, FilesFrom only, boolean skip, Sink sink) {
    if (only != null && part != TopNames.ALL) {
      // Which listed paths are missing is known only to a walk of all of the library.
      throw new IllegalArgumentException("a walk of --files-from is not made in parts");
    }
    Walk walk = new Walk(pool, part, excludes, only, skip, excludes.otherFileSystems());
    try (Dir dir = Dir.open(root, shownAs)) {
      FileStat rootStat = dir.stat();
      walk.rootDevice = rootStat.device();
      Entry top = WalkedEntry.of(rootStat, EMPTY, null);
      top = top.withMeta(WalkedEntry.meta(rootStat, top.meta(), dir.xattrNames(), dir::xattr));
      Listed listed = walk.list(new SharedDir(walk, dir, false), null, EMPTY, 0, only == null);
      walk.emit(listed, sink);
      // The root is the target's top when restored: it is never flagged.
      return walk.walked(top);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot list", shownAs, e);
    } finally {
      walk.closeLeftovers();
    }
  }

  /**
   * A warning from the walk, in the form every warning of beamsave's takes. The walk runs in
   * the worker, whose standard error is the operator's on the DirectRunner and the
   * TaskManager's log on Flink.
   */
  static void warn(String line) {
    System.err.println("beamsave: warning: " + line);
    System.err.flush();
  }

  /** The link count of a directory {@code --one-file-system} does not descend into. */
  private static final int MOUNT_POINT = -1;

  /**
   * A child of a listed directory: its name, its entry, whether all of it is saved, and for a
   * regular file the device and link count that say whether other names of it may come.
   */
  private record Child(byte[] name, Entry entry, boolean selected, long device, int links) {}

  /** A directory listed: its children in order, and the handle they are opened from. */
  private static final class Listed {
    final PathBytes rel;
    final int depth;
    /** Null when the directory could not be opened. */
    final SharedDir self;
    final Child[] children;
    /** Whether the directory could not be wholly listed. */
    final boolean flagged;
    /** The next child to hand on, and the next whose listing may begin ahead. */
    int next;
    int nextAhead;

    Listed(PathBytes rel, int depth, SharedDir self, Child[] children, boolean flagged) {
      this.rel = rel;
      this.depth = depth;
      this.self = self;
      this.children = children;
      this.flagged = flagged;
    }
  }

  /** What the walk of one library found, shared by its directory tasks. */
  private static final class Walk {
    final ForkJoinPool pool;
    final TopNames top;
    final Excludes excludes;
    final AtomicLongArray excluded;
    final AtomicLong special = new AtomicLong();
    final Set<SharedDir> open = ConcurrentHashMap.newKeySet();
    /** What --files-from selects, or null for everything. */
    final FilesFrom only;
    final boolean skip;
    final Queue<Unreadable> unreadable = new ConcurrentLinkedQueue<>();
    /** Listed paths the walk came to. */
    final Set<PathBytes> reached = ConcurrentHashMap.newKeySet();
    /** Directories on the way to listed paths that were excluded or could not be read. */
    final Set<PathBytes> settled = ConcurrentHashMap.newKeySet();
    /** The files of more than one name met so far, to save later names as links. */
    final HardLinks links = new HardLinks();
    /** Whether to stay on the root's filesystem, and which that is. */
    final boolean oneFileSystem;
    long rootDevice;
    final AtomicLong otherFileSystems = new AtomicLong();
    /** Entries held by directories listed ahead and not yet handed on. */
    final AtomicLong held = new AtomicLong();
    /** Listings begun ahead, by the child they list. */
    final Map<Child, CompletableFuture<Listed>> ahead = new IdentityHashMap<>();
    long entries;
    long files;
    long rawBytes;

    Walk(ForkJoinPool pool, TopNames top, Excludes excludes, FilesFrom only, boolean skip,
        boolean oneFileSystem) {
      this.oneFileSystem = oneFileSystem;
      this.pool = pool;
      this.top = top;
      this.excludes = excludes;
      this.excluded = new AtomicLongArray(excludes.patterns().size());
      this.only = only;
      this.skip = skip;
    }

    /**
     * Fails the walk on {@code e} as the message names it, or with {@link #skip} records {@code
     * rel} as unreadable instead, and the caller flags what misses it (the entry itself, or the
     * directory). A directory swapped for a symlink always fails: that is a library changing
     * under the save, not one it may not read.
     */
    void cannot(String action, String shown, PathBytes rel, IOException e) {
      if (!skip || e instanceof SymlinkException) {
        throw BeamsaveException.io(action, shown, e);
      }
      unreadable.add(new Unreadable(rel, BeamsaveException.describe(e)));
      settle(rel);
    }

    void settle(PathBytes rel) {
      if (only != null) {
        settled.add(rel);
      }
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
          Child c = at.children[at.next];
          at.children[at.next++] = null;
          if (c.entry.type() != EntryType.DIRECTORY) {
            add(links.of(c.entry, c.device, c.links), sink);
            continue;
          }
          CompletableFuture<Listed> listing = ahead.remove(c);
          Listed sub = join(listing != null ? listing : begin(at, c));
          held.addAndGet(-sub.children.length);
          add(sub.flagged ? WalkedEntry.unreadable(c.entry) : c.entry, sink);
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
          if (ahead.size() >= AHEAD || held.get() >= HELD) {
            return;
          }
          Child c = at.children[at.nextAhead++];
          if (c.entry.type() == EntryType.DIRECTORY) {
            ahead.put(c, begin(at, c));
          }
        }
      }
    }

    private CompletableFuture<Listed> begin(Listed parent, Child c) {
      if (c.links == MOUNT_POINT) {
        return CompletableFuture.completedFuture(
            new Listed(c.entry.path(), parent.depth + 1, null, new Child[0], false));
      }
      return CompletableFuture.supplyAsync(() -> {
        Listed l = list(parent.self, c.name, c.entry.path(), parent.depth + 1, c.selected);
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

    /**
     * Opens {@code parent}'s child {@code name} (the root when name is null, whose handle
     * {@code parent} is), at {@code depth} components, and lists it: its children sorted by
     * name, each stat'ed, without what is excluded or off the listed paths.
     */
    Listed list(SharedDir parent, byte[] name, PathBytes rel, int depth, boolean selected) {
      SharedDir self = parent;
      if (name != null) {
        try {
          self = new SharedDir(this, parent.dir.openDir(name), true);
        } catch (IOException e) {
          cannot("cannot list", parent.dir.child(name), rel, e);
          return new Listed(rel, depth, null, new Child[0], true);
        } finally {
          parent.release();
        }
      }
      boolean flagged = false;
      Dir dir = self.dir;
      List<byte[]> names;
      try {
        names = dir.list();
      } catch (IOException e) {
        cannot("cannot list", dir.name(), rel, e);
        names = List.of();
        flagged = true;
      }
      if (excludes.caches() && CacheDirTag.tags(dir, names)) {
        names = List.of(CacheDirTag.NAME);
      }
      names = new ArrayList<>(names);
      if (depth == 0) {
        names.removeIf(n -> !top.take(n));
      }
      names.sort(Arrays::compareUnsigned);
      List<Child> children = new ArrayList<>(names.size());
      for (byte[] child : names) {
        PathBytes childRel = rel.child(child);
        boolean childSelected = selected;
        if (only != null && only.listed(childRel)) {
          // Also beneath a listed directory: a path listed twice is not missing.
          childSelected = true;
          reached.add(childRel);
        } else if (!selected && !only.onTheWay(childRel)) {
          continue; // Off the listed paths and the way to them: not even stat'ed.
        }
        // What a pattern leaves out whatever its type is never even stat'ed (a stale mount,
        // a file gone meanwhile); patterns of directories only are tried after the stat.
        int excludedBy = excludes.match(childRel, false);
        FileStat s = null;
        if (excludedBy < 0) {
          try {
            s = dir.stat(child);
          } catch (IOException x) {
            cannot("cannot read", dir.child(child), childRel, x);
            flagged = true;
            continue;
          }
          if (!childSelected && !s.isDirectory()) {
            continue; // On the way, but not a directory: what was listed beneath is missing.
          }
          if (s.isDirectory()) {
            excludedBy = excludes.match(childRel, true);
          }
        }
        if (excludedBy >= 0) {
          settle(childRel);
          if (excludedBy < excluded.length()) {
            excluded.incrementAndGet(excludedBy);
          }
          continue;
        }
        if (childRel.length() > CatalogPaths.MAX_NAME_BYTES) {
          throw new BeamsaveException("cannot save " + dir.child(child) + ": its path in the"
              + " library is longer than " + CatalogPaths.MAX_NAME_BYTES + " bytes");
        }
        if (depth + 1 > ImageFormat.MAX_DEPTH) {
          throw new BeamsaveException("cannot save " + dir.child(child) + ": it nests deeper"
              + " than " + ImageFormat.MAX_DEPTH + " directories");
        }
        if (s.isSocket()) {
          special.incrementAndGet();
          warn("skipping socket " + Printable.text(dir.child(child))
              + ": a socket is made by the program that listens on it, not restored");
          continue;
        }
        Entry e;
        try {
          e = WalkedEntry.of(s, childRel, s.isSymlink() ? dir.readLink(child) : null);
        } catch (IOException x) {
          cannot("cannot read", dir.child(child), childRel, x);
          flagged = true;
          continue;
        }
        try {
          e = e.withMeta(WalkedEntry.meta(s, e.meta(), dir.xattrNames(child),
              n -> dir.xattr(child, n)));
        } catch (IOException x) {
          // Kept, flagged, with what could be read of it: as a file whose bytes cannot be.
          cannot("cannot read the extended attributes of", dir.child(child), childRel, x);
          e = WalkedEntry.unreadable(e);
        }
        if (oneFileSystem && s.device() != rootDevice) {
          otherFileSystems.incrementAndGet();
          if (!s.isDirectory()) {
            warn("skipping " + Printable.text(dir.child(child))
                + ": it is on another filesystem (--one-file-system)");
            continue;
          }
          // The mount point is kept, empty, as tar and restic keep it.
          warn("not descending into " + Printable.text(dir.child(child))
              + ": another filesystem is mounted there (--one-file-system)");
          children.add(new Child(child, e, childSelected, s.device(), MOUNT_POINT));
          continue;
        }
        if (e.type() == EntryType.DIRECTORY) {
          self.retain();
        } else if (e.isFile() && (e.mode() & 0444) != 0444 && !dir.canRead(child)) {
          // A file everyone's bits may read skips the access() call: an ACL that still denies
          // this user makes the read fail later, naming the file the same way.
          cannot("cannot read", dir.child(child), childRel,
              new AccessDeniedException(dir.child(child)));
          e = WalkedEntry.unreadable(e);
        }
        children.add(new Child(child, e, childSelected, s.device(), s.links()));
      }
      return new Listed(rel, depth, self, children.toArray(new Child[0]), flagged);
    }

    Walked walked(Entry root) {
      long[] byPattern = new long[excluded.length()];
      for (int i = 0; i < byPattern.length; i++) {
        byPattern[i] = excluded.get(i);
      }
      List<Unreadable> skipped = new ArrayList<>(unreadable);
      skipped.sort(Comparator.comparing(Unreadable::path));
      List<PathBytes> missing = new ArrayList<>();
      if (only != null) {
        for (PathBytes p : only.paths()) {
          if (!reached.contains(p) && !underSettled(p)) {
            missing.add(p);
          }
        }
      }
      return new Walked(new Listing(root, skipped, missing), entries, files,
          rawBytes, special.get(), byPattern);
    }

    private boolean underSettled(PathBytes p) {
      for (PathBytes d = p.parent(); d != null; d = d.parent()) {
        if (settled.contains(d)) {
          return true;
        }
      }
      return false;
    }

    /** Closes the handles of directories whose walk a failure cut short. */
    void closeLeftovers() {
      for (SharedDir d : open) {
        d.closeNow();
      }
    }
  }

  /**
   * A directory handle shared by the walk, while it hands on the directory's entries, and by
   * the listings of its subdirectories, each of which opens its own from it: closed when the
   * last has, so that the handles open at once number about the walk's depth and its window,
   * not its width.
   */
  private static final class SharedDir {
    final Walk walk;
    final Dir dir;
    final boolean owned;
    final AtomicInteger users = new AtomicInteger(1);

    SharedDir(Walk walk, Dir dir, boolean owned) {
      this.walk = walk;
      this.dir = dir;
      this.owned = owned;
      if (owned) {
        walk.open.add(this);
      }
    }

    void retain() {
      users.incrementAndGet();
    }

    void release() {
      if (users.decrementAndGet() == 0) {
        closeNow();
      }
    }

    void closeNow() {
      if (owned && walk.open.remove(this)) {
        try {
          dir.close();
        } catch (IOException ignored) {
          // A listing handle: nothing was written through it.
        }
      }
    }
  }
}

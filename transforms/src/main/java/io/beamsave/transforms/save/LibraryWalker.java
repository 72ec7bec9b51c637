package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.SymlinkException;
import io.beamsave.transforms.image.CatalogPaths;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.EntryType;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.select.Excludes;
import io.beamsave.transforms.select.FilesFrom;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountedCompleter;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Walks a library through directory handles, listing directories in parallel: a walk is a
 * chain of small syscalls, and while it runs nothing else in the save can. Every directory is
 * opened from its parent's handle without following links, so a directory swapped for a
 * symlink mid-walk fails the walk instead of leading it outside the library.
 *
 * <p>Plain Java, no Beam: {@link ListLibrary} runs a walk in its DoFn, or on background threads
 * before the pipeline. Static methods only; one walk's state is shared by its directory tasks
 * on the pool given, and by nothing else.
 */
final class LibraryWalker {
  private static final PathBytes EMPTY = PathBytes.of(new byte[0]);

  private LibraryWalker() {}

  /**
   * One library's listing, the special files its walk skipped, and the entries each of the
   * operator's exclude patterns left out.
   */
  record Walked(Listing listing, long special, long[] excluded) {
    long files() {
      return listing.entries().stream().filter(Entry::isFile).count();
    }
  }

  /** A pool for walks: one thread per core. */
  static ForkJoinPool newPool() {
    return new ForkJoinPool(Math.max(1, Runtime.getRuntime().availableProcessors()));
  }

  /**
   * Walks the library at {@code root} on {@code pool}, leaving out what {@code excludes} does;
   * with {@code only}, just the paths it lists and the way to them; with {@code skip}, keeping
   * what cannot be read flagged unreadable instead of failing.
   */
  static Walked walk(
      ForkJoinPool pool, Path root, Excludes excludes, FilesFrom only, boolean skip) {
    Walk walk = new Walk(excludes, only, skip);
    try (Dir dir = Dir.open(root)) {
      walk.root = entry(dir.stat(), PathBytes.of(new byte[0]), null);
      pool.invoke(new WalkDirectory(null, walk, new SharedDir(walk, dir, false), null, EMPTY, 0,
          only == null));
    } catch (IOException e) {
      throw BeamsaveException.io("cannot list", root, e);
    } finally {
      walk.closeLeftovers();
    }
    return walk.walked();
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

  /** What the walk of one library found, shared by its directory tasks. */
  private static final class Walk {
    final Excludes excludes;
    final AtomicLongArray excluded;
    volatile Entry root;
    final Queue<Entry> found = new ConcurrentLinkedQueue<>();
    final AtomicLong special = new AtomicLong();
    final Set<SharedDir> open = ConcurrentHashMap.newKeySet();
    /** What --files-from selects, or null for everything. */
    final FilesFrom only;
    final boolean skip;
    final Queue<Unreadable> unreadable = new ConcurrentLinkedQueue<>();
    /** Entries found but not wholly read: files without their bytes, directories partly listed. */
    final Set<PathBytes> flagged = ConcurrentHashMap.newKeySet();
    /** Listed paths the walk came to. */
    final Set<PathBytes> reached = ConcurrentHashMap.newKeySet();
    /** Directories on the way to listed paths that were excluded or could not be read. */
    final Set<PathBytes> settled = ConcurrentHashMap.newKeySet();

    Walk(Excludes excludes, FilesFrom only, boolean skip) {
      this.excludes = excludes;
      this.excluded = new AtomicLongArray(excludes.patterns().size());
      this.only = only;
      this.skip = skip;
    }

    /**
     * Fails the walk on {@code e} as the message names it, or with {@link #skip} records {@code
     * rel} as unreadable and flags {@code flag} (the entry itself, or the directory that misses
     * it) instead. A directory swapped for a symlink always fails: that is a library changing
     * under the save, not one it may not read.
     */
    void cannot(String action, String shown, PathBytes rel, PathBytes flag, IOException e) {
      if (!skip || e instanceof SymlinkException) {
        throw BeamsaveException.io(action, shown, e);
      }
      unreadable.add(new Unreadable(rel, BeamsaveException.describe(e)));
      if (flag != null && !flag.isEmpty()) {
        flagged.add(flag);
      }
      settled.add(rel);
    }

    Walked walked() {
      long[] byPattern = new long[excluded.length()];
      for (int i = 0; i < byPattern.length; i++) {
        byPattern[i] = excluded.get(i);
      }
      List<Entry> entries = new ArrayList<>(found.size());
      for (Entry e : found) {
        entries.add(flagged.contains(e.path()) ? unreadableEntry(e) : e);
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
      return new Walked(new Listing(root, entries, skipped, missing), special.get(), byPattern);
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
   * A directory handle shared by the task that lists it and the tasks of its subdirectories,
   * each of which opens its own from it: closed when the last has, so that the handles open at
   * once number about the walk's depth times its threads, not its width.
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

  /**
   * Lists one directory, records its children and forks the walks of its subdirectories. A
   * counted completer, not a recursive action: a task ends before its subdirectories' run, so
   * the stack stays flat however deep the tree nests (a thousand levels overflowed the other).
   */
  private static final class WalkDirectory extends CountedCompleter<Void> {
    private final Walk walk;
    private final SharedDir parent;
    private final byte[] name;
    private final PathBytes rel;
    private final int depth;
    /** Whether all of this directory is saved; if not, it is on the way to listed paths. */
    private final boolean selected;

    /**
     * The walk of {@code parent}'s child {@code name} at {@code depth} components, or of the
     * root when name is null.
     */
    WalkDirectory(CountedCompleter<?> completer, Walk walk, SharedDir parent, byte[] name,
        PathBytes rel, int depth, boolean selected) {
      super(completer);
      this.walk = walk;
      this.parent = parent;
      this.name = name;
      this.rel = rel;
      this.depth = depth;
      this.selected = selected;
    }

    @Override
    public void compute() {
      SharedDir self = parent;
      if (name != null) {
        try {
          self = new SharedDir(walk, parent.dir.openDir(name), true);
        } catch (IOException e) {
          walk.cannot("cannot list", parent.dir.child(name), rel, rel, e);
          self = null;
        } finally {
          parent.release();
        }
        if (self == null) {
          tryComplete();
          return;
        }
      }
      List<WalkDirectory> subdirectories = new ArrayList<>();
      Dir dir = self.dir;
      try {
        List<byte[]> children;
        try {
          children = dir.list();
        } catch (IOException e) {
          walk.cannot("cannot list", dir.name(), rel, rel, e);
          children = List.of();
        }
        if (walk.excludes.caches() && CacheDirTag.tags(dir, children)) {
          children = List.of(CacheDirTag.NAME);
        }
        for (byte[] child : children) {
          PathBytes childRel = rel.child(child);
          boolean childSelected = selected;
          if (walk.only != null && walk.only.listed(childRel)) {
            // Also beneath a listed directory: a path listed twice is not missing.
            childSelected = true;
            walk.reached.add(childRel);
          } else if (!selected && !walk.only.onTheWay(childRel)) {
            continue; // Off the listed paths and the way to them: not even stat'ed.
          }
          // What a pattern leaves out whatever its type is never even stat'ed (a stale mount,
          // a file gone meanwhile); patterns of directories only are tried after the stat.
          int excludedBy = walk.excludes.match(childRel, false);
          FileStat s = null;
          if (excludedBy < 0) {
            try {
              s = dir.stat(child);
            } catch (IOException x) {
              walk.cannot("cannot read", dir.child(child), childRel, rel, x);
              continue;
            }
            if (!childSelected && !s.isDirectory()) {
              continue; // On the way, but not a directory: what was listed beneath is missing.
            }
            if (s.isDirectory()) {
              excludedBy = walk.excludes.match(childRel, true);
            }
          }
          if (excludedBy >= 0) {
            walk.settled.add(childRel);
            if (excludedBy < walk.excluded.length()) {
              walk.excluded.incrementAndGet(excludedBy);
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
          Entry e;
          try {
            e = entry(s, childRel, s.isSymlink() ? dir.readLink(child) : null);
          } catch (IOException x) {
            walk.cannot("cannot read", dir.child(child), childRel, rel, x);
            continue;
          }
          if (e == null) {
            walk.special.incrementAndGet();
            warn("skipping special file (FIFO, socket or device) "
                + Printable.text(dir.child(child)) + ": it is not saved");
            continue;
          }
          if (e.type() == EntryType.DIRECTORY) {
            self.retain();
            subdirectories.add(new WalkDirectory(this, walk, self, child, childRel, depth + 1,
                childSelected));
          } else if (e.isFile() && (e.mode() & 0444) != 0444 && !dir.canRead(child)) {
            // A file everyone's bits may read skips the access() call: an ACL that still denies
            // this user makes the read fail later, naming the file the same way.
            walk.cannot("cannot read", dir.child(child), childRel, childRel,
                new AccessDeniedException(dir.child(child)));
          }
          walk.found.add(e);
        }
      } finally {
        self.release();
      }
      setPendingCount(subdirectories.size());
      subdirectories.forEach(WalkDirectory::fork);
      tryComplete();
    }
  }

  /**
   * {@code e} flagged unreadable: a file keeps no bytes (none were read, and none are planned),
   * a directory keeps what could be listed.
   */
  static Entry unreadableEntry(Entry e) {
    Entry flagged = e.withFlags(e.flags() | Entry.FLAG_UNREADABLE);
    if (!e.isFile()) {
      return flagged;
    }
    return new Entry(e.path(), e.type(), flagged.flags(), e.mode(), e.uid(), e.gid(),
        e.mtimeSeconds(), e.mtimeNanos(), e.ctimeSeconds(), e.ctimeNanos(), e.inode(), 0,
        e.linkTarget(), List.of());
  }

  /**
   * The catalog entry for what {@code s} describes, at {@code rel}, or {@code null} for a
   * special file (FIFO, socket, device), which images do not hold.
   */
  static Entry entry(FileStat s, PathBytes rel, byte[] linkTarget) {
    EntryType type;
    if (s.isDirectory()) {
      type = EntryType.DIRECTORY;
    } else if (s.isRegularFile()) {
      type = EntryType.FILE;
    } else if (s.isSymlink()) {
      type = EntryType.SYMLINK;
    } else {
      return null;
    }
    return new Entry(
        rel,
        type,
        0,
        s.permissions(),
        s.uid(),
        s.gid(),
        s.mtimeSeconds(),
        s.mtimeNanos(),
        s.ctimeSeconds(),
        s.ctimeNanos(),
        s.inode(),
        type == EntryType.FILE ? s.size() : 0,
        linkTarget == null ? null : PathBytes.of(linkTarget),
        List.of());
  }
}

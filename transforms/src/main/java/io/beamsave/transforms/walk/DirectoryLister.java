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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Lists the directories of one walk, each opened from its parent's handle: a directory's names
 * sorted as bytes, each stat'ed, without what the operator's patterns exclude, what lies off the
 * paths {@code --files-from} lists, sockets, and what is on another filesystem under {@code
 * --one-file-system}; what cannot be read fails the walk, or with {@code --skip-unreadable} is
 * kept flagged and recorded. Shared by the walk's listing tasks on its pool.
 */
final class DirectoryLister {
  /** The link count of a directory {@code --one-file-system} does not descend into. */
  static final int MOUNT_POINT = -1;

  final LibraryWalker.TopNames top;
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
  /** Whether to stay on the root's filesystem, and which that is. */
  final boolean oneFileSystem;
  long rootDevice;
  final AtomicLong otherFileSystems = new AtomicLong();

  DirectoryLister(LibraryWalker.TopNames top, Excludes excludes, FilesFrom only, boolean skip,
      boolean oneFileSystem) {
    this.top = top;
    this.excludes = excludes;
    this.excluded = new AtomicLongArray(excludes.patterns().size());
    this.only = only;
    this.skip = skip;
    this.oneFileSystem = oneFileSystem;
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
   * Opens {@code parent}'s child {@code name} (the root when name is null, whose handle
   * {@code parent} is), at {@code depth} components, and lists it: its children sorted by
   * name, each stat'ed, without what is excluded or off the listed paths.
   */
  Listed list(SharedDir parent, byte[] name, PathBytes rel, int depth, boolean selected) {
    SharedDir self = parent;
    if (name != null) {
      try {
        self = new SharedDir(open, parent.dir.openDir(name), true);
      } catch (IOException e) {
        cannot("cannot list", parent.dir.child(name), rel, e);
        return new Listed(rel, depth, null, new Listed.Child[0], true);
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
    List<Listed.Child> children = new ArrayList<>(names.size());
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
        LibraryWalker.warn("skipping socket " + Printable.text(dir.child(child))
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
          LibraryWalker.warn("skipping " + Printable.text(dir.child(child))
              + ": it is on another filesystem (--one-file-system)");
          continue;
        }
        // The mount point is kept, empty, as tar and restic keep it.
        LibraryWalker.warn("not descending into " + Printable.text(dir.child(child))
            + ": another filesystem is mounted there (--one-file-system)");
        children.add(new Listed.Child(child, e, childSelected, s.device(), MOUNT_POINT));
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
      children.add(new Listed.Child(child, e, childSelected, s.device(), s.links()));
    }
    return new Listed(rel, depth, self, children.toArray(new Listed.Child[0]), flagged);
  }

  /**
   * The listing's head for a walk whose top is {@code root}: what could not be read, in path
   * order, and the listed paths the walk did not come to.
   */
  Listing listing(Entry root) {
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
    return new Listing(root, skipped, missing);
  }

  /** The entries each of the operator's exclude patterns left out. */
  long[] excludedByPattern() {
    long[] byPattern = new long[excluded.length()];
    for (int i = 0; i < byPattern.length; i++) {
      byPattern[i] = excluded.get(i);
    }
    return byPattern;
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

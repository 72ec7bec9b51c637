package io.beamsave.transforms.walk;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.select.Excludes;
import io.beamsave.transforms.select.FilesFrom;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;

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
 * threads before the pipeline. Static methods only; one walk's state ({@link DirectoryLister}
 * lists, {@link OrderedWalk} hands on in order) is shared by its directory tasks on the pool
 * given, and by nothing else.
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
    DirectoryLister lister =
        new DirectoryLister(part, excludes, only, skip, excludes.otherFileSystems());
    OrderedWalk walk = new OrderedWalk(pool, lister);
    try (Dir dir = Dir.open(root, shownAs)) {
      FileStat rootStat = dir.stat();
      lister.rootDevice = rootStat.device();
      Entry top = WalkedEntry.of(rootStat, EMPTY, null);
      top = top.withMeta(WalkedEntry.meta(rootStat, top.meta(), dir.xattrNames(), dir::xattr));
      Listed listed =
          lister.list(new SharedDir(lister.open, dir, false), null, EMPTY, 0, only == null);
      walk.emit(listed, sink);
      // The root is the target's top when restored: it is never flagged.
      return walk.walked(top);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot list", shownAs, e);
    } finally {
      lister.closeLeftovers();
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
}

package io.beamsave.pipelines.restore;

import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.read.ReadTask;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The mtimes a restore's target could not hold exactly (the kernel clamps what a filesystem
 * cannot keep: ext4 ends in 2446, some keep no nanoseconds): how many, and the first, told in
 * one warning. Not thread-safe: the driver's.
 */
final class ClampedTimes {
  private final Path given;
  private final Beneath tree;
  private long clamped;
  private String firstClamped;

  ClampedTimes(Path given, Beneath tree) {
    this.given = given;
    this.tree = tree;
  }

  private String show(io.beamsave.transforms.image.catalog.PathBytes rel) {
    return TargetTree.show(given, rel);
  }

  /**
   * Notes an mtime the filesystem did not keep as given: the kernel clamps what a filesystem
   * cannot hold (ext4 ends in 2446, some keep no nanoseconds), and the operator should know.
   */
  void check(FileStat s, Entry e) {
    if (s.mtimeSeconds() != e.mtimeSeconds() || s.mtimeNanos() != e.mtimeNanos()) {
      if (clamped++ == 0) {
        firstClamped = (e.path().isEmpty() ? given.toString() : show(e.path())) + ": saved "
            + e.mtimeSeconds() + "." + String.format("%09d", e.mtimeNanos()) + " s, restored "
            + s.mtimeSeconds() + "." + String.format("%09d", s.mtimeNanos()) + " s";
      }
    }
  }

  /**
   * A warning if the target could not hold some mtime exactly, else null; {@code byWorkers}
   * more files were so, as the restore's workers counted them.
   */
  String warning(long byWorkers, List<Entry> chosen) {
    if (byWorkers > 0) {
      find(chosen);
    }
    return warning(byWorkers);
  }

  /**
   * Looks for the first of {@code chosen}, files workers made, whose mtime the target did not
   * keep, unless one is known: workers only count theirs.
   */
  void find(List<Entry> chosen) {
    if (firstClamped == null) {
      // The workers only count theirs; the first one is looked for here, to name it.
      for (Entry e : chosen) {
        if (firstClamped != null) {
          break;
        }
        if (ReadTask.madeByWorker(e)) {
          try {
            Dir dir = tree.dir(e.path().bytes(), Math.max(0, e.path().lastSlash()));
            FileStat s = dir.stat(e.path().fileName());
            long before = clamped;
            check(s, e);
            clamped = before;
          } catch (IOException gone) {
            // Removed or replaced since: another may name the loss.
          }
        }
      }
    }
  }

  /** Like {@link #warning(long, List)}, the first one already looked for. */
  String warning(long byWorkers) {
    long all = clamped + byWorkers;
    return all == 0 ? null : "the target's filesystem could not hold the exact mtime of "
        + all + " entr" + (all == 1 ? "y" : "ies")
        + (firstClamped != null ? " (" + firstClamped + ")" : "");
  }
}

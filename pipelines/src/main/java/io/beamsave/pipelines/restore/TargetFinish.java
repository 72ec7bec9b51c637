package io.beamsave.pipelines.restore;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.Handle;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.read.RestoreTarget;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The restore's last pass over its target, once the workers have run: the files made before
 * them moved from their temporary names into place with their owner, mode and mtime, the
 * symlinks created, the directories' metadata set deepest first and then the top's, and the
 * marker removed. Counts the mtimes the target's filesystem could not hold exactly. Not
 * thread-safe: the driver's, one per restore.
 */
final class TargetFinish {
  private final Path given;
  private final Dir root;
  private final Beneath tree;
  private final RestoreTarget target;
  private final TargetMarkers markers;
  private final boolean asRoot = Dir.effectiveUid() == 0;
  /** Entries whose mtime the target's filesystem could not hold: how many, and the first. */
  private long clamped;
  private String firstClamped;

  TargetFinish(Path given, Dir root, Beneath tree, RestoreTarget target, TargetMarkers markers) {
    this.given = given;
    this.root = root;
    this.tree = tree;
    this.target = target;
    this.markers = markers;
  }

  private String show(PathBytes rel) {
    return TargetTree.show(given, rel);
  }

  /**
   * Moves the written files into place with their metadata, creates the symlinks, sets the
   * directories' metadata deepest first and then the top's ({@code top}, null to leave the top
   * as it is), and removes the marker. {@code ids} are the inodes {@link TargetTree#create}
   * returned.
   */
  void run(List<Entry> entries, long[] ids, Entry top) {
    List<Entry> dirs = place(entries, ids);
    java.util.Collections.reverse(dirs);
    directories(dirs);
    done(top);
  }

  /**
   * Moves the written files of {@code entries} into place with their metadata and creates the
   * symlinks; returns the directories, whose metadata waits for all beneath them.
   */
  List<Entry> place(List<Entry> entries, long[] ids) {
    List<Entry> dirs = new ArrayList<>();
    int file = 0;
    for (Entry e : entries) {
      try {
        switch (e.type()) {
          case FILE -> {
            long id = ids[file++];
            if (!ReadTask.madeByWorker(e)) {
              place(e, id);
            }
          }
          case SYMLINK -> link(e);
          case DIRECTORY -> dirs.add(e);
        }
      } catch (IOException x) {
        throw BeamsaveException.io("cannot restore", show(e.path()), x);
      }
    }
    return dirs;
  }

  /** Sets the metadata of {@code dirs}, in the order given: deepest first. */
  void directories(List<Entry> dirs) {
    for (Entry e : dirs) {
      try {
        setMetadata(tree.dir(e.path().bytes(), e.path().length()), e);
      } catch (IOException x) {
        throw BeamsaveException.io("cannot set metadata of", show(e.path()), x);
      }
    }
  }

  /** Sets the top's metadata ({@code top}, null to leave it) and removes the marker. */
  void done(Entry top) {
    try {
      tree.close();
      markers.remove();
      if (top != null) {
        setMetadata(root, top);
      }
    } catch (IOException x) {
      throw BeamsaveException.io("cannot set metadata of", given, x);
    }
  }

  private void place(Entry e, long id) throws IOException {
    Dir dir = tree.dir(e.path().bytes(), Math.max(0, e.path().lastSlash()));
    byte[] temp = target.temporaryName(e.path());
    try (OpenFile f = dir.openRead(temp)) {
      FileStat s = f.stat();
      if (!s.isRegularFile() || s.inode() != id) {
        throw new BeamsaveException("refusing to restore " + show(e.path()) + ": the file"
            + " written for it was replaced during the restore");
      }
      setMetadata(f, e);
    }
    dir.rename(temp, e.path().fileName());
  }

  /**
   * Creates a symlink with its owner and mtime. A symlink cannot be opened to set them through
   * a handle, and by name someone who can write in its directory could swap it for a hard link
   * to a file elsewhere between creating it and chowning it (nofollow does not stop a hard
   * link): so it is made in a directory of its own that only this process's user may enter,
   * and renamed into place from there.
   */
  private void link(Entry e) throws IOException {
    Dir dir = tree.dir(e.path().bytes(), Math.max(0, e.path().lastSlash()));
    byte[] temp = target.temporaryName(e.path());
    dir.mkdir(temp, 0700);
    try (Dir own = dir.openDir(temp)) {
      FileStat s = own.stat();
      if (s.uid() != Dir.effectiveUid() || (s.permissions() & 077) != 0) {
        throw new BeamsaveException("refusing to restore " + show(e.path()) + ": the directory"
            + " made for it was replaced during the restore");
      }
      byte[] name = e.path().fileName();
      own.symlink(e.linkTarget().bytes(), name);
      if (asRoot) {
        own.setLinkOwner(name, e.uid(), e.gid());
      }
      own.setLinkModified(name, e.mtimeSeconds(), e.mtimeNanos());
      checkTime(own.stat(name), e);
      own.renameTo(name, dir, name);
    } finally {
      dir.deleteDirectory(temp);
    }
  }

  private void setMetadata(Handle h, Entry e) throws IOException {
    checkTime(RestoreTarget.setMetadata(
        h, e.uid(), e.gid(), e.mode(), e.mtimeSeconds(), e.mtimeNanos(), asRoot), e);
  }

  /**
   * Notes an mtime the filesystem did not keep as given: the kernel clamps what a filesystem
   * cannot hold (ext4 ends in 2446, some keep no nanoseconds), and the operator should know.
   */
  private void checkTime(FileStat s, Entry e) {
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
  String clampedTimes(long byWorkers, List<Entry> chosen) {
    if (byWorkers > 0) {
      findClamped(chosen);
    }
    return clampedTimes(byWorkers);
  }

  /**
   * Looks for the first of {@code chosen}, files workers made, whose mtime the target did not
   * keep, unless one is known: workers only count theirs.
   */
  void findClamped(List<Entry> chosen) {
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
            checkTime(s, e);
            clamped = before;
          } catch (IOException gone) {
            // Removed or replaced since: another may name the loss.
          }
        }
      }
    }
  }

  /** Like {@link #clampedTimes(long, List)}, the first one already looked for. */
  String clampedTimes(long byWorkers) {
    long all = clamped + byWorkers;
    return all == 0 ? null : "the target's filesystem could not hold the exact mtime of "
        + all + " entr" + (all == 1 ? "y" : "ies")
        + (firstClamped != null ? " (" + firstClamped + ")" : "");
  }
}

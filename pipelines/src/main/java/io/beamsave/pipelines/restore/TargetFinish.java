package io.beamsave.pipelines.restore;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.Handle;
import io.beamsave.transforms.fs.NotSupportedException;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Meta;
import io.beamsave.transforms.image.catalog.PathBytes;
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
  /** The files hard links are made to: earlier in path order than the links' own paths. */
  private final Beneath linked;
  private final MetadataLoss lost = new MetadataLoss();
  /** What {@code --skip-damaged} leaves out: never placed. */
  private final DamagedFiles damaged;
  /** Entries whose mtime the target's filesystem could not hold. */
  private final ClampedTimes times;

  TargetFinish(Path given, Dir root, Beneath tree, RestoreTarget target, TargetMarkers markers,
      DamagedFiles damaged) {
    this.damaged = damaged;
    this.given = given;
    this.root = root;
    this.tree = tree;
    this.target = target;
    this.markers = markers;
    this.linked = new Beneath(root);
    this.times = new ClampedTimes(given, tree);
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
            if (damaged.contains(e.path())) {
              leaveOut(e, id);
            } else if (!ReadTask.madeByWorker(e)) {
              place(e, id);
            }
          }
          case SYMLINK -> link(e);
          case DIRECTORY -> dirs.add(e);
          case HARDLINK -> {
            if (damaged.contains(e.linkTarget())) {
              damaged.addLink(e.path(), "a hard link to " + e.linkTarget() + ", which is damaged");
            } else {
              hardLink(e);
            }
          }
          case FIFO, CHAR_DEVICE, BLOCK_DEVICE -> node(e);
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
      linked.close();
      markers.remove();
      if (top != null) {
        setMetadata(root, top);
      }
    } catch (IOException x) {
      throw BeamsaveException.io("cannot set metadata of", given, x);
    }
  }

  /**
   * Removes the file made for damaged {@code e} before the workers wrote into it (a worker
   * removes what it makes itself): only the very file made, by its inode.
   */
  private void leaveOut(Entry e, long id) throws IOException {
    if (ReadTask.madeByWorker(e)) {
      return;
    }
    Dir dir = tree.dir(e.path().bytes(), Math.max(0, e.path().lastSlash()));
    byte[] temp = target.temporaryName(e.path());
    try {
      if (dir.stat(temp).inode() == id) {
        dir.delete(temp);
      }
    } catch (java.nio.file.NoSuchFileException gone) {
      // Nothing to leave behind.
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
    inPrivateDir(e, (own, name) -> {
      own.symlink(e.linkTarget().bytes(), name);
      return true;
    });
  }

  /**
   * Makes a FIFO or device node with its metadata. A node is never opened (opening a device
   * acts on it), so what a handle would set is set by name, in a directory of its own that only
   * this process's user may enter, as for a symlink. Devices need root: as another user each is
   * counted and left out.
   */
  private void node(Entry e) throws IOException {
    int type = switch (e.type()) {
      case FIFO -> FIFO_BITS;
      case CHAR_DEVICE -> CHAR_BITS;
      default -> BLOCK_BITS;
    };
    inPrivateDir(e, (own, name) -> {
      try {
        own.mknod(name, type | 0600, e.type() == EntryType.FIFO ? 0 : e.meta().rdev());
      } catch (java.nio.file.AccessDeniedException denied) {
        if (e.type() == EntryType.FIFO) {
          throw denied;
        }
        lost.note(MetadataLoss.DEVICES, "only root may make them", show(e.path()));
        return false;
      }
      if (target.inheritsAcls()) {
        own.removeXattr(name, ACL_ACCESS);
      }
      return true;
    });
  }

  /** Makes an entry in a private directory; returns whether it made it. */
  @FunctionalInterface
  private interface Maker {
    boolean make(Dir own, byte[] name) throws IOException;
  }

  /**
   * Makes {@code e} with {@code maker} in a directory of its own beside its place, that only
   * this process's user may enter, gives it its owner, mode (not a symlink's), attributes and
   * mtime by name there, and renames it into place.
   */
  private void inPrivateDir(Entry e, Maker maker) throws IOException {
    Dir dir = tree.dir(e.path().bytes(), Math.max(0, e.path().lastSlash()));
    byte[] temp = target.temporaryName(e.path());
    byte[] name = e.path().fileName();
    dir.mkdir(temp, 0700);
    boolean placed = false;
    try (Dir own = dir.openDir(temp)) {
      FileStat s = own.stat();
      if (s.uid() != Dir.effectiveUid() || (s.permissions() & 077) != 0) {
        throw new BeamsaveException("refusing to restore " + show(e.path()) + ": the directory"
            + " made for it was replaced during the restore");
      }
      if (!maker.make(own, name)) {
        return;
      }
      if (asRoot) {
        own.setLinkOwner(name, e.uid(), e.gid());
      }
      if (e.type() != EntryType.SYMLINK) {
        own.setPermissions(name, e.mode());
      }
      setXattrs(e, (n, v) -> own.setXattr(name, n, v));
      own.setLinkModified(name, e.mtimeSeconds(), e.mtimeNanos());
      times.check(own.stat(name), e);
      own.renameTo(name, dir, name);
      placed = true;
    } finally {
      removePrivate(dir, temp, name, placed);
    }
  }

  /**
   * Removes the private directory {@code temp} a symlink or node was made in, and what failed to
   * leave it ({@code name}, unless {@code placed}); a failure to do so once the entry is placed
   * fails the restore, and before it is left to the failure that came first, which says more.
   */
  private static void removePrivate(Dir dir, byte[] temp, byte[] name, boolean placed)
      throws IOException {
    if (!placed) {
      try (Dir own = dir.openDir(temp)) {
        own.delete(name);
      } catch (IOException | RuntimeException leftNothing) {
        // Nothing was made there, or it cannot be reached: the rmdir below says which.
      }
    }
    try {
      dir.deleteDirectory(temp);
    } catch (IOException e) {
      if (placed) {
        throw e;
      }
    }
  }

  /**
   * Makes {@code e} another name of the file its link target names, which the restore has made
   * by now (it comes first in path order; a link whose file a selection leaves out is restored
   * as a file instead). Made under a temporary name and renamed into place, so that an entry in
   * the way is replaced, as files are. The file's metadata is its own: nothing is set here.
   */
  private void hardLink(Entry e) throws IOException {
    PathBytes to = e.linkTarget();
    Dir from = linked.dir(to.bytes(), Math.max(0, to.lastSlash()));
    FileStat s = from.stat(to.fileName());
    if (!s.isRegularFile()) {
      throw new BeamsaveException("cannot restore " + show(e.path()) + " as a link to " + to
          + ": that is not a regular file in the target");
    }
    Dir dir = tree.dir(e.path().bytes(), Math.max(0, e.path().lastSlash()));
    byte[] temp = target.temporaryName(e.path());
    from.link(to.fileName(), dir, temp);
    dir.rename(temp, e.path().fileName());
  }

  private static final byte[] ACL_ACCESS =
      Meta.ACL_ACCESS.getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  private static final int FIFO_BITS = 0010000;
  private static final int CHAR_BITS = 0020000;
  private static final int BLOCK_BITS = 0060000;

  private void setMetadata(Handle h, Entry e) throws IOException {
    FileStat s = target.setMetadata(
        h, e.uid(), e.gid(), e.mode(), e.mtimeSeconds(), e.mtimeNanos(), asRoot);
    setXattrs(e, h::setXattr);
    times.check(s, e);
  }

  /** Sets one extended attribute, by a handle or by name. */
  @FunctionalInterface
  private interface XattrSetter {
    void set(byte[] name, byte[] value) throws IOException;
  }

  /**
   * Sets {@code e}'s extended attributes, after its owner and mode (a chown clears a file's
   * capabilities, a chmod rewrites an ACL's mask) and with the capability last. What the
   * target's filesystem or this user may not set is counted by kind, not failed.
   */
  private void setXattrs(Entry e, XattrSetter setter) throws IOException {
    Meta.Xattr capability = null;
    for (Meta.Xattr x : e.meta().xattrs()) {
      if (x.is(Meta.CAPABILITY)) {
        capability = x;
      } else {
        setXattr(e, x, setter);
      }
    }
    if (capability != null) {
      setXattr(e, capability, setter);
    }
  }

  private void setXattr(Entry e, Meta.Xattr x, XattrSetter setter) throws IOException {
    try {
      setter.set(x.name(), x.value());
    } catch (java.nio.file.AccessDeniedException denied) {
      lost.note(kind(x), asRoot ? "the target refused them" : "not permitted as this user",
          show(e.path()));
    } catch (NotSupportedException refused) {
      lost.note(kind(x), "the target's filesystem does not keep them", show(e.path()));
    }
  }

  /** What a lost attribute is called in a warning. */
  private static String kind(Meta.Xattr x) {
    if (x.is(Meta.ACL_ACCESS) || x.is(Meta.ACL_DEFAULT)) {
      return "ACLs";
    }
    if (x.is(Meta.CAPABILITY)) {
      return "file capabilities";
    }
    String n = x.nameText();
    return n.substring(0, n.indexOf('.')) + ". extended attributes";
  }

  /** The mtimes the target could not hold. */
  ClampedTimes times() {
    return times;
  }

  /** Adds what could not be restored, by kind, to {@code out}. */
  void lostMetadata(List<String> out) {
    lost.warnings(out);
  }
}

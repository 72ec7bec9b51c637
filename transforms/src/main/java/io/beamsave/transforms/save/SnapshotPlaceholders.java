package io.beamsave.transforms.save;

import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Meta;
import io.beamsave.transforms.walk.WalkedEntry;
import java.io.IOException;

/**
 * In a btrfs snapshot, a subvolume nested in the one snapshotted is an empty directory made up
 * for it (inode 2), with a mode, owner and times of its own. A library read from its snapshot
 * ({@code save -x --snapshot}) keeps that directory, empty, and here gets the real directory's
 * mode, owner, times and extended attributes, from the same path in the library, as a save of
 * the live tree with {@code -x} keeps a mount point.
 */
final class SnapshotPlaceholders implements AutoCloseable {
  /** btrfs's BTRFS_EMPTY_SUBVOL_DIR_OBJECTID: no real inode has it. */
  static final long PLACEHOLDER_INODE = 2;

  private final SaveSpec.Library lib;
  private Dir root;
  private Beneath tree;

  SnapshotPlaceholders(SaveSpec.Library lib) {
    this.lib = lib;
  }

  /** {@code e}, or for a snapshot's placeholder, the library's directory it stands for. */
  Entry real(Entry e) throws IOException {
    if (lib.readFrom() == null || e.type() != EntryType.DIRECTORY
        || e.inode() != PLACEHOLDER_INODE || e.path().length() == 0) {
      return e;
    }
    if (tree == null) {
      root = Dir.open(lib.rootPath());
      tree = new Beneath(root);
    }
    byte[] name = e.path().fileName();
    try {
      Dir parent = tree.dir(e.path().bytes(), Math.max(e.path().lastSlash(), 0));
      FileStat s = parent.stat(name);
      if (!s.isDirectory()) {
        return e;
      }
      Entry real = new Entry(e.path(), e.type(), e.flags(), s.permissions(), s.uid(), s.gid(),
          s.mtimeSeconds(), s.mtimeNanos(), s.ctimeSeconds(), s.ctimeNanos(), e.inode(), 0,
          null, e.extents());
      return real.withMeta(WalkedEntry.meta(s, Meta.NONE, parent.xattrNames(name),
          n -> parent.xattr(name, n)));
    } catch (IOException gone) {
      return e; // Not there, or not reachable without a link: the snapshot's is what there is.
    }
  }

  @Override
  public void close() {
    if (tree != null) {
      try {
        tree.close();
        root.close();
      } catch (IOException ignored) {
        // Read-only handles: nothing to lose.
      }
    }
  }
}

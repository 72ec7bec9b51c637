package io.beamsave.pipelines.mount;

import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import java.io.IOException;
import ru.serce.jnrfuse.struct.FileStat;

/** What {@code getattr} shows of a node: its {@code struct stat}, and its inode number. */
final class NodeStat {
  private NodeStat() {}

  /** The permissions of a directory and of a link the view makes up, owned by root. */
  static final int MADE_DIRECTORY = 0555;

  static final int MADE_LINK = 0777;

  static void fill(FileStat st, MountedFs.Node n) throws IOException {
    if (n instanceof MountedFs.Made m) {
      boolean link = m.target() != null;
      st.st_mode.set(link ? FileStat.S_IFLNK | MADE_LINK : FileStat.S_IFDIR | MADE_DIRECTORY);
      st.st_ino.set(inode(0, m.path()));
      st.st_nlink.set(1);
      st.st_size.set(link ? m.target().length : 0);
      times(st, m.seconds(), 0, m.seconds(), 0);
      return;
    }
    MountedFs.InImage in = (MountedFs.InImage) n;
    Entry e = in.entry();
    Entry file = e.isHardLink() ? in.tree().fileOf(e) : e;
    if (file == null) {
      throw new IOException("a later name of " + e.linkTarget() + ", which is no file of the"
          + " image");
    }
    int type = switch (file.type()) {
      case FILE, HARDLINK -> FileStat.S_IFREG;
      case DIRECTORY -> FileStat.S_IFDIR;
      case SYMLINK -> FileStat.S_IFLNK;
      case FIFO -> FileStat.S_IFIFO;
      case CHAR_DEVICE -> FileStat.S_IFCHR;
      case BLOCK_DEVICE -> FileStat.S_IFBLK;
    };
    st.st_mode.set(type | (file.mode() & 07777));
    st.st_ino.set(inode(in.salt(), file.path().bytes()));
    st.st_nlink.set(file.isFile() ? in.tree().linkCount(file) : 1);
    st.st_uid.set(file.uid());
    st.st_gid.set(file.gid());
    long size = switch (file.type()) {
      case FILE -> file.size();
      case SYMLINK -> file.linkTarget() == null ? 0 : file.linkTarget().length();
      default -> 0;
    };
    st.st_size.set(size);
    st.st_blocks.set((size + 511) / 512);
    st.st_blksize.set(in.tree().head().catalog().blockSize());
    if (file.type() == EntryType.CHAR_DEVICE || file.type() == EntryType.BLOCK_DEVICE) {
      st.st_rdev.set(file.meta().rdev());
    }
    times(st, file.mtimeSeconds(), file.mtimeNanos(), file.ctimeSeconds(), file.ctimeNanos());
  }

  private static void times(FileStat st, long mtime, int mtimeNanos, long ctime, int ctimeNanos) {
    st.st_atim.tv_sec.set(mtime);
    st.st_atim.tv_nsec.set(mtimeNanos);
    st.st_mtim.tv_sec.set(mtime);
    st.st_mtim.tv_nsec.set(mtimeNanos);
    st.st_ctim.tv_sec.set(ctime);
    st.st_ctim.tv_nsec.set(ctimeNanos);
  }

  /**
   * A stable inode number for a path of an image (its first name, for a file with several):
   * FNV-1a of the path, salted with the image's number, never 0 or 1 (the root's).
   */
  static long inode(long salt, byte[] path) {
    long h = 0xcbf29ce484222325L ^ (salt * 0x9E3779B97F4A7C15L);
    for (byte b : path) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return (h & Long.MAX_VALUE) < 2 ? 2 : h & Long.MAX_VALUE;
  }
}

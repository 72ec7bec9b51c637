package io.beamsave.transforms.read;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;

/**
 * Writes the files of a restore, keeping the last one and its directory open: into the files
 * the restore created for pieces with a file id, and, for a piece that is its whole file,
 * creating the file, writing it, giving it its metadata and moving it into place.
 */
final class TargetFiles implements AutoCloseable {
  private final RestoreTarget target;
  private final Beneath tree;
  private final boolean asRoot = Dir.effectiveUid() == 0;
  private PathBytes openPath;
  private OpenFile open;
  /** The end of the last bytes written into {@link #open}. */
  private long openEnd;
  /** Files whose mtime the filesystem did not keep as given. */
  long clamped;
  /** This worker's record of damaged files at the target's top, once it has one. */
  private OpenFile damageLog;

  private long damageLogEnd;

  TargetFiles(RestoreTarget target) {
    this.target = target;
    this.tree = new Beneath(target.openRoot());
  }

  void write(ShardReader.FileExtent piece, long offset, byte[] buf, int off, int len) {
    try {
      OpenFile f = openFor(piece);
      // The file was made empty or of its size, a hole: pages of zeros stay holes (sparse
      // files come back sparse), and a file that ends in them is given its size at the end.
      int at = 0;
      while (at < len) {
        int page = (int) Math.min(len - at, PAGE - ((offset + at) % PAGE));
        int start = at;
        while (at < len && !zeros(buf, off + at, page)) {
          at += page;
          page = (int) Math.min(len - at, PAGE);
        }
        if (at > start) {
          f.write(offset + start, buf, off + start, at - start);
          openEnd = Math.max(openEnd, offset + at);
        }
        while (at < len && zeros(buf, off + at, page)) {
          at += page;
          page = (int) Math.min(len - at, PAGE);
        }
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot write", show(piece.path()), e);
    }
  }

  /** The page a hole is made of, at least, on the filesystems beamsave restores to. */
  private static final int PAGE = 4096;

  private static final byte[] ZERO_PAGE = new byte[PAGE];

  private static boolean zeros(byte[] b, int off, int len) {
    return len > 0 && java.util.Arrays.mismatch(b, off, off + len, ZERO_PAGE, 0, len) < 0;
  }

  /** Finishes the file of a piece that is all of it, now that it is written and checked. */
  void pieceDone(ShardReader.FileExtent piece) {
    ShardReader.Whole w = piece.whole();
    if (w == null) {
      return;
    }
    PathBytes path = piece.path();
    try {
      // A file of zero blocks only has had nothing written: it is made here.
      OpenFile f = openFor(piece);
      if (openEnd < w.size()) {
        // Zero blocks at its end were not written: they stay a hole (sparse files).
        f.truncate(w.size());
      }
      FileStat s = target.setMetadata(f, w.uid(), w.gid(), w.mode(),
          w.mtimeSeconds(), w.mtimeNanos(), asRoot);
      if (s.mtimeSeconds() != w.mtimeSeconds() || s.mtimeNanos() != w.mtimeNanos()) {
        clamped++;
      }
      closeFile();
      Dir dir = tree.dir(path.bytes(), Math.max(0, path.lastSlash()));
      dir.rename(target.temporaryName(path), path.fileName());
      FileStat there = dir.stat(path.fileName());
      if (!there.isRegularFile() || !there.sameFile(s)) {
        throw new BeamsaveException("refusing to finish " + show(path) + ": the file written"
            + " for it was replaced during the restore");
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot restore", show(path), e);
    }
  }

  /**
   * Leaves out the file of {@code piece}, whose bytes do not read back as saved: a file this
   * worker makes is removed (it never had its name), and the file is recorded for the driver,
   * which leaves out the files it made too. One line per piece: the path's bytes in hex, a
   * tab, and why.
   */
  void damaged(ShardReader.FileExtent piece, IOException why) throws IOException {
    PathBytes path = piece.path();
    if (path.equals(openPath)) {
      closeFile();
    }
    if (piece.whole() != null) {
      Dir dir = tree.dir(path.bytes(), Math.max(0, path.lastSlash()));
      try {
        dir.delete(target.temporaryName(path));
      } catch (java.nio.file.NoSuchFileException nothingWritten) {
        // Damaged before a byte of it was written.
      }
    }
    if (damageLog == null) {
      damageLog = tree.root().create(target.damageLogName(), 0600);
    }
    String reason = String.valueOf(why.getMessage()).replace('\n', ' ').replace('\t', ' ');
    byte[] line = (java.util.HexFormat.of().formatHex(path.bytes()) + "\t" + reason + "\n")
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    damageLog.write(damageLogEnd, line, 0, line.length);
    damageLogEnd += line.length;
  }

  private OpenFile openFor(ShardReader.FileExtent piece) throws IOException {
    PathBytes path = piece.path();
    if (path.equals(openPath)) {
      return open;
    }
    closeFile();
    Dir dir = tree.dir(path.bytes(), Math.max(0, path.lastSlash()));
    byte[] temp = target.temporaryName(path);
    OpenFile f;
    if (piece.whole() != null) {
      f = createOrReopen(dir, temp, path, piece.whole().uid());
    } else {
      f = dir.openWrite(temp);
      FileStat s = f.stat();
      if (!s.isRegularFile() || s.inode() != piece.fileId()) {
        f.close();
        throw new BeamsaveException("refusing to write " + show(path) + ": the file created"
            + " for it was replaced during the restore");
      }
    }
    open = f;
    openPath = path;
    openEnd = 0;
    return f;
  }

  /**
   * Creates the temporary file of {@code path}. One an earlier run of this task left (a runner
   * may run a task again) is removed first if it is plainly that: a regular file with one link,
   * of this user or, as root, of the owner the file is restored to. Anything else by that name
   * (a hard link to a file elsewhere, someone else's file) is refused and left alone.
   */
  private OpenFile createOrReopen(Dir dir, byte[] temp, PathBytes path, int owner)
      throws IOException {
    try {
      return dir.create(temp, 0600);
    } catch (FileAlreadyExistsException exists) {
      FileStat s = dir.stat(temp);
      boolean ours = s.uid() == Dir.effectiveUid() || asRoot && s.uid() == owner;
      if (!s.isRegularFile() || s.links() != 1 || !ours) {
        throw new BeamsaveException("refusing to write " + show(path) + ": its temporary"
            + " file was made by someone else");
      }
      dir.delete(temp);
      return dir.create(temp, 0600);
    }
  }

  private String show(PathBytes path) {
    return target.path() + "/" + path;
  }

  private void closeFile() throws IOException {
    if (open != null) {
      open.close();
      open = null;
      openPath = null;
    }
  }

  @Override
  public void close() throws IOException {
    try {
      closeFile();
      if (damageLog != null) {
        damageLog.close();
      }
      tree.close();
    } finally {
      tree.root().close();
    }
  }
}

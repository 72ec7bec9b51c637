package io.beamsave.transforms.fs;

import java.io.IOException;
import java.nio.ByteBuffer;
import jnr.constants.platform.Errno;

/**
 * An open regular file: positional reads and writes, its size, a lock. Safe to use from several
 * threads.
 */
public final class OpenFile extends Handle {
  OpenFile(int fd, String name) {
    super(fd, name);
  }

  /**
   * Reads up to {@code len} bytes at {@code pos} into {@code b[off..]}; returns how many, 0 at
   * the end of the file.
   */
  public int read(long pos, byte[] b, int off, int len) throws IOException {
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    while (true) {
      long n = Posix.c().pread(fd(), ByteBuffer.wrap(b, off, len), len, pos);
      if (n >= 0) {
        return (int) n;
      }
      if (Posix.errno() != Errno.EINTR.intValue()) {
        throw fail(null);
      }
    }
  }

  /** Writes all of {@code b[off, off+len)} at {@code pos}. */
  public void write(long pos, byte[] b, int off, int len) throws IOException {
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    while (len > 0) {
      long n = Posix.c().pwrite(fd(), ByteBuffer.wrap(b, off, len), len, pos);
      if (n < 0) {
        if (Posix.errno() == Errno.EINTR.intValue()) {
          continue;
        }
        throw fail(null);
      }
      off += (int) n;
      len -= (int) n;
      pos += n;
    }
  }

  /**
   * Where the next data at or after {@code pos} begins ({@code SEEK_DATA}), or {@code end} when
   * only a hole is left; a filesystem that does not know holes says {@code pos}.
   */
  public long nextData(long pos, long end) throws IOException {
    return seek(pos, end, Posix.SEEK_DATA);
  }

  /** Where the hole after {@code pos} begins ({@code SEEK_HOLE}): the end at the latest. */
  public long nextHole(long pos, long end) throws IOException {
    return seek(pos, end, Posix.SEEK_HOLE);
  }

  /** {@code lseek} to {@code whence} from {@code pos}, no further than {@code end}. */
  private long seek(long pos, long end, int whence) throws IOException {
    long at = Posix.c().lseek(fd(), pos, whence);
    if (at < 0) {
      if (Posix.errno() == Errno.ENXIO.intValue()) {
        return end;
      }
      throw fail(null);
    }
    return Math.min(at, end);
  }

  /** Sets the file's size; growing it leaves a hole. */
  public void truncate(long size) throws IOException {
    if (Posix.c().ftruncate(fd(), size) != 0) {
      throw fail(null);
    }
  }

  /**
   * Takes an exclusive {@code flock} on the file without waiting; returns whether it was had.
   * Unlike the {@code fcntl} locks Java's {@code FileLock} takes, it belongs to this open file
   * and is not dropped when the process closes another descriptor of the same file; like them,
   * the kernel drops it when the process ends, however it ends.
   */
  public boolean tryLock() throws IOException {
    if (Posix.c().flock(fd(), Posix.LOCK_EX | Posix.LOCK_NB) == 0) {
      return true;
    }
    if (Posix.errno() == Errno.EWOULDBLOCK.intValue()) {
      return false;
    }
    throw fail(null);
  }
}

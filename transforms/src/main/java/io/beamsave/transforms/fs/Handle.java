package io.beamsave.transforms.fs;

import java.io.IOException;
import java.nio.file.ClosedFileSystemException;
import java.util.List;
import jnr.constants.platform.Errno;

/**
 * An open file descriptor and the name it was opened by (printable, for errors). Metadata is
 * set through the descriptor, so it reaches the file that was opened whatever happens to its
 * name meanwhile. Safe to use from several threads; closed once, when none uses it.
 */
public abstract class Handle implements AutoCloseable {
  private volatile int fd;
  private final String name;

  Handle(int fd, String name) {
    this.fd = fd;
    this.name = name;
  }

  final int fd() {
    int f = fd;
    if (f < 0) {
      throw new ClosedFileSystemException();
    }
    return f;
  }

  /** The printable name this handle was opened by. */
  public final String name() {
    return name;
  }

  final IOException fail(String child) {
    return Posix.error(Posix.errno(), child == null ? name : child);
  }

  public final FileStat stat() throws IOException {
    byte[] buf = new byte[Posix.STATX_SIZE_BYTES];
    if (Posix.c().statx(fd(), EMPTY, Posix.AT_EMPTY_PATH | Posix.AT_SYMLINK_NOFOLLOW,
        Posix.STATX_WANTED, buf) != 0) {
      throw fail(null);
    }
    return FileStat.fromStatx(buf);
  }

  public final void setOwner(int uid, int gid) throws IOException {
    if (Posix.c().fchown(fd(), uid, gid) != 0) {
      throw fail(null);
    }
  }

  /** Sets the permission bits, set-id and sticky bits ({@code 07777}). */
  public final void setPermissions(int permissions) throws IOException {
    if (Posix.c().fchmod(fd(), permissions & 07777) != 0) {
      throw fail(null);
    }
  }

  /** Sets the modification time, to the nanosecond; the access time is left as it is. */
  public final void setModified(long seconds, int nanos) throws IOException {
    if (Posix.c().futimens(fd(), times(seconds, nanos)) != 0) {
      throw fail(null);
    }
  }

  /** The names of this file's extended attributes the process may see, as bytes. */
  public final List<byte[]> xattrNames() throws IOException {
    long n = Posix.c().flistxattr(fd(), null, 0);
    while (n > 0) {
      byte[] buf = new byte[(int) n];
      long got = Posix.c().flistxattr(fd(), buf, buf.length);
      if (got >= 0) {
        return Xattrs.names(buf, (int) got);
      }
      if (Posix.errno() != Errno.ERANGE.intValue()) {
        throw fail(null);
      }
      n = Posix.c().flistxattr(fd(), null, 0);
    }
    if (n < 0 && !Xattrs.unsupported(Posix.errno())) {
      throw fail(null);
    }
    return List.of();
  }

  /** The value of extended attribute {@code name}, or null where it has gone. */
  public final byte[] xattr(byte[] name) throws IOException {
    byte[] cname = Posix.cString(name);
    while (true) {
      long n = Posix.c().fgetxattr(fd(), cname, null, 0);
      if (n < 0) {
        break;
      }
      byte[] buf = new byte[(int) n];
      long got = Posix.c().fgetxattr(fd(), cname, buf, buf.length);
      if (got >= 0) {
        return got == n ? buf : java.util.Arrays.copyOf(buf, (int) got);
      }
      if (Posix.errno() != Errno.ERANGE.intValue()) {
        break;
      }
    }
    if (Posix.errno() == Errno.ENODATA.intValue()) {
      return null;
    }
    throw fail(null);
  }

  /** Removes extended attribute {@code name}, if the file has it. */
  public final void removeXattr(byte[] name) throws IOException {
    if (Posix.c().fremovexattr(fd(), Posix.cString(name)) != 0) {
      int errno = Posix.errno();
      if (errno != Errno.ENODATA.intValue() && !Xattrs.unsupported(errno)) {
        throw fail(null);
      }
    }
  }

  /** Sets extended attribute {@code name} to {@code value}. */
  public final void setXattr(byte[] name, byte[] value) throws IOException {
    if (Posix.c().fsetxattr(fd(), Posix.cString(name), value, value.length, 0) != 0) {
      throw fail(null);
    }
  }

  static long[] times(long seconds, int nanos) {
    if (nanos < 0 || nanos > 999_999_999) {
      throw new IllegalArgumentException("nanoseconds out of range: " + nanos);
    }
    return new long[] {0, Posix.UTIME_OMIT, seconds, nanos};
  }

  @Override
  public void close() throws IOException {
    int f = fd;
    if (f < 0) {
      return;
    }
    fd = -1;
    if (Posix.c().close(f) != 0) {
      throw fail(null);
    }
  }

  static final byte[] EMPTY = {0};
}

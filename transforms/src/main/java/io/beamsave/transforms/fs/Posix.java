package io.beamsave.transforms.fs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.Arrays;
import jnr.constants.platform.Errno;
import jnr.constants.platform.OpenFlags;
import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Platform;
import jnr.ffi.Pointer;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;

/**
 * The C library calls of this package, bound once per JVM with jnr-ffi, and the translation of
 * their {@code errno} into Java's I/O exceptions. Paths passed to the kernel are NUL-terminated
 * byte arrays ({@link #cString}); structures are read at the offsets of the Linux 64-bit ABI
 * ({@code struct statx} and {@code struct timespec} are the same on every 64-bit
 * architecture). Flag values that differ between architectures come from jnr-constants.
 */
final class Posix {
  private Posix() {}

  /** The calls, as glibc (2.28 or newer, for statx) or musl export them. */
  public interface LibC {
    @SaveError
    int openat(int dirfd, @In byte[] path, int flags, int mode);

    @SaveError
    int close(int fd);

    @SaveError
    int statx(int dirfd, @In byte[] path, int flags, int mask, @Out byte[] statx);

    @SaveError
    Pointer fdopendir(int fd);

    @SaveError
    Pointer readdir(Pointer dir);

    int closedir(Pointer dir);

    @SaveError
    long readlinkat(int dirfd, @In byte[] path, @Out byte[] buf, long size);

    @SaveError
    int mkdirat(int dirfd, @In byte[] path, int mode);

    @SaveError
    int symlinkat(@In byte[] target, int dirfd, @In byte[] path);

    @SaveError
    int unlinkat(int dirfd, @In byte[] path, int flags);

    @SaveError
    int renameat(int olddirfd, @In byte[] oldpath, int newdirfd, @In byte[] newpath);

    @SaveError
    int fchownat(int dirfd, @In byte[] path, int uid, int gid, int flags);

    @SaveError
    int fchown(int fd, int uid, int gid);

    @SaveError
    int fchmod(int fd, int mode);

    @SaveError
    int utimensat(int dirfd, @In byte[] path, @In long[] times, int flags);

    @SaveError
    int futimens(int fd, @In long[] times);

    @SaveError
    int faccessat(int dirfd, @In byte[] path, int mode, int flags);

    @SaveError
    long pread(int fd, @Out ByteBuffer buf, long count, long offset);

    @SaveError
    long pwrite(int fd, @In ByteBuffer buf, long count, long offset);

    @SaveError
    int ftruncate(int fd, long length);

    @SaveError
    long lseek(int fd, long offset, int whence);

    @SaveError
    int flock(int fd, int operation);

    int geteuid();

    /** {@code listxattrat} (Linux 6.13): a child's attribute names, without following it. */
    @SaveError
    long syscall(long number, int dirfd, @In byte[] path, int atFlags, @Out byte[] list,
        long size);

    @SaveError
    long llistxattr(@In byte[] path, @Out byte[] list, long size);

    @SaveError
    long lgetxattr(@In byte[] path, @In byte[] name, @Out byte[] value, long size);

    @SaveError
    long fgetxattr(int fd, @In byte[] name, @Out byte[] value, long size);

    @SaveError
    long flistxattr(int fd, @Out byte[] list, long size);

    @SaveError
    int fsetxattr(int fd, @In byte[] name, @In byte[] value, long size, int flags);

    @SaveError
    int fremovexattr(int fd, @In byte[] name);

    @SaveError
    int lremovexattr(@In byte[] path, @In byte[] name);

    @SaveError
    int lsetxattr(@In byte[] path, @In byte[] name, @In byte[] value, long size, int flags);

    @SaveError
    int mknodat(int dirfd, @In byte[] path, int mode, long dev);

    @SaveError
    int linkat(int olddirfd, @In byte[] oldpath, int newdirfd, @In byte[] newpath, int flags);

    @SaveError
    int fchmodat(int dirfd, @In byte[] path, int mode, int flags);

    @SaveError
    int getpwuid_r(int uid, Pointer pwd, Pointer buf, long buflen, Pointer result);

    @SaveError
    int getgrgid_r(int gid, Pointer grp, Pointer buf, long buflen, Pointer result);

    @SaveError
    int getpwnam_r(@In byte[] name, Pointer pwd, Pointer buf, long buflen, Pointer result);

    @SaveError
    int getgrnam_r(@In byte[] name, Pointer grp, Pointer buf, long buflen, Pointer result);

    String strerror(int errnum);
  }

  static final int AT_FDCWD = -100;
  static final int AT_SYMLINK_NOFOLLOW = 0x100;
  static final int AT_REMOVEDIR = 0x200;
  /** For faccessat: check with the effective ids and capabilities, as open(2) would. */
  static final int AT_EACCESS = 0x200;
  static final int AT_EMPTY_PATH = 0x1000;
  static final int STATX_BASIC_STATS = 0x7ff;
  static final int STATX_MNT_ID = 0x1000;
  static final long STATX_ATTR_MOUNT_ROOT = 0x2000;
  /** What every stat asks for: the basic fields and the mount's id, which removals compare. */
  static final int STATX_WANTED = STATX_BASIC_STATS | STATX_MNT_ID;
  static final int STATX_SIZE = 0x200;
  static final int STATX_SIZE_BYTES = 256;
  static final long UTIME_OMIT = (1L << 30) - 2;
  static final int R_OK = 4;
  static final int LOCK_EX = 2;
  static final int LOCK_NB = 4;
  static final int SEEK_DATA = 3;
  static final int SEEK_HOLE = 4;

  static final int S_IFMT = 0170000;
  static final int S_IFDIR = 0040000;
  static final int S_IFREG = 0100000;
  static final int S_IFLNK = 0120000;
  static final int S_IFIFO = 0010000;
  static final int S_IFCHR = 0020000;
  static final int S_IFBLK = 0060000;
  static final int S_IFSOCK = 0140000;
  /** The syscall number of {@code listxattrat}, the same on every architecture (Linux 6.13). */
  static final long SYS_LISTXATTRAT = 465;

  private static final class Holder {
    static final LibC C;
    static final jnr.ffi.Runtime RUNTIME;
    static final int O_RDONLY;
    static final int O_WRONLY;
    static final int O_CREAT;
    static final int O_EXCL;
    static final int O_DIRECTORY;
    static final int O_NOFOLLOW;
    static final int O_NONBLOCK;
    static final int O_CLOEXEC;

    static {
      Platform p = Platform.getNativePlatform();
      if (p.getOS() != Platform.OS.LINUX || !p.is64Bit()) {
        throw new UnsupportedOperationException(
            "beamsave needs 64-bit Linux; this is " + p.getOSName() + " on " + p.getCPU());
      }
      C = LibraryLoader.create(LibC.class).failImmediately().load(p.getStandardCLibraryName());
      RUNTIME = jnr.ffi.Runtime.getRuntime(C);
      O_RDONLY = OpenFlags.O_RDONLY.intValue();
      O_WRONLY = OpenFlags.O_WRONLY.intValue();
      O_CREAT = OpenFlags.O_CREAT.intValue();
      O_EXCL = OpenFlags.O_EXCL.intValue();
      O_DIRECTORY = OpenFlags.O_DIRECTORY.intValue();
      O_NOFOLLOW = OpenFlags.O_NOFOLLOW.intValue();
      O_NONBLOCK = OpenFlags.O_NONBLOCK.intValue();
      O_CLOEXEC = OpenFlags.O_CLOEXEC.intValue();
    }
  }

  static LibC c() {
    return Holder.C;
  }

  static jnr.ffi.Runtime runtime() {
    return Holder.RUNTIME;
  }

  static int errno() {
    return LastError.getLastError(Holder.RUNTIME);
  }

  static void clearErrno() {
    LastError.setLastError(Holder.RUNTIME, 0);
  }

  /** Flags to open a directory beneath another without following a symlink. */
  static int openDirFlags() {
    return Holder.O_RDONLY | Holder.O_DIRECTORY | Holder.O_NOFOLLOW | Holder.O_CLOEXEC;
  }

  /** Flags to open a directory an operator named, following symlinks on the way. */
  static int openDirFollowingFlags() {
    return Holder.O_RDONLY | Holder.O_DIRECTORY | Holder.O_CLOEXEC;
  }

  /**
   * Flags to open a file for reading without following a symlink, and without blocking should
   * it have become a FIFO (nothing is read from one: the caller checks the type).
   */
  static int readFlags() {
    return Holder.O_RDONLY | Holder.O_NOFOLLOW | Holder.O_NONBLOCK | Holder.O_CLOEXEC;
  }

  static int writeFlags() {
    return Holder.O_WRONLY | Holder.O_NOFOLLOW | Holder.O_NONBLOCK | Holder.O_CLOEXEC;
  }

  static int createFlags() {
    return writeFlags() | Holder.O_CREAT | Holder.O_EXCL;
  }

  static int openOrCreateFlags() {
    return (writeFlags() & ~Holder.O_WRONLY) | OpenFlags.O_RDWR.intValue() | Holder.O_CREAT;
  }

  /** {@code name} with the NUL the kernel expects after it. */
  static byte[] cString(byte[] name) {
    return Arrays.copyOf(name, name.length + 1);
  }

  /**
   * The I/O exception for {@code errno} from an operation on {@code file} (a printable name),
   * of the type Java's own file API would throw, so callers can tell a missing file from a
   * denied one without reading messages.
   */
  static IOException error(int errno, String file) {
    if (errno == Errno.ENOENT.intValue()) {
      return new NoSuchFileException(file);
    }
    if (errno == Errno.EACCES.intValue() || errno == Errno.EPERM.intValue()) {
      return new AccessDeniedException(file, null, "permission denied");
    }
    if (errno == Errno.ENOTDIR.intValue()) {
      return new NotDirectoryException(file);
    }
    if (errno == Errno.EEXIST.intValue()) {
      return new FileAlreadyExistsException(file);
    }
    if (errno == Errno.ENOTEMPTY.intValue()) {
      return new java.nio.file.DirectoryNotEmptyException(file);
    }
    if (errno == Errno.ELOOP.intValue()) {
      return new SymlinkException(file);
    }
    if (errno == Errno.EOPNOTSUPP.intValue() || errno == Errno.ENOTSUP.intValue()) {
      return new NotSupportedException(file);
    }
    return new FileSystemException(file, null, c().strerror(errno));
  }
}

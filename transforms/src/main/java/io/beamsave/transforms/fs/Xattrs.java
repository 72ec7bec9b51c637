package io.beamsave.transforms.fs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jnr.constants.platform.Errno;

/**
 * Extended attributes of a directory's children by name, never following a symlink. The names
 * come from {@code listxattrat} (Linux 6.13) on the directory's handle; values, and where that
 * call is missing the names too, through {@code /proc/self/fd/N/NAME} with the {@code l}
 * calls: the handle's directory, then one component that is not followed, as the {@code *at}
 * calls resolve it. Handles of open files and directories use the {@code f} calls ({@link
 * Handle#xattrNames}).
 */
final class Xattrs {
  private Xattrs() {}

  /** Whether the kernel has {@code listxattrat}; found out on the first call. */
  private static volatile boolean listAt = true;

  /** Whether {@code errno} says the filesystem keeps no extended attributes. */
  static boolean unsupported(int errno) {
    return errno == Errno.EOPNOTSUPP.intValue() || errno == Errno.ENOTSUP.intValue();
  }

  /** The names in a {@code listxattr} buffer: NUL-terminated, one after another. */
  static List<byte[]> names(byte[] buf, int len) {
    List<byte[]> out = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < len; i++) {
      if (buf[i] == 0) {
        if (i > start) {
          out.add(Arrays.copyOfRange(buf, start, i));
        }
        start = i + 1;
      }
    }
    return out;
  }

  /** The path by which {@code name} in the directory open as {@code dirfd} is reached. */
  static byte[] procPath(int dirfd, byte[] name) {
    byte[] dir = ("/proc/self/fd/" + dirfd + "/").getBytes(StandardCharsets.US_ASCII);
    byte[] path = Arrays.copyOf(dir, dir.length + name.length + 1);
    System.arraycopy(name, 0, path, dir.length, name.length);
    return path;
  }

  /** The attribute names of child {@code cname} (a C string) of {@code dirfd}. */
  static List<byte[]> list(int dirfd, byte[] cname, byte[] name,
      java.util.function.Supplier<String> shown) throws IOException {
    while (true) {
      long n = listAt ? Posix.c().syscall(Posix.SYS_LISTXATTRAT, dirfd, cname,
          Posix.AT_SYMLINK_NOFOLLOW, null, 0) : -1;
      if (listAt && n < 0 && (Posix.errno() == Errno.ENOSYS.intValue()
          || Posix.errno() == Errno.EPERM.intValue())) {
        // Missing, or refused by a seccomp filter that does not know it (containers answer
        // unknown calls with EPERM): listxattr never says EPERM of a file, so the path way
        // is taken from then on if it answers.
        long viaProc = Posix.c().llistxattr(procPath(dirfd, name), null, 0);
        if (viaProc >= 0 || Posix.errno() != Errno.EPERM.intValue()) {
          listAt = false;
        }
      }
      if (!listAt) {
        n = Posix.c().llistxattr(procPath(dirfd, name), null, 0);
      }
      if (n == 0) {
        return List.of();
      }
      if (n < 0) {
        int errno = Posix.errno();
        if (unsupported(errno)) {
          return List.of();
        }
        throw Posix.error(errno, shown.get());
      }
      byte[] buf = new byte[(int) n];
      long got = listAt
          ? Posix.c().syscall(Posix.SYS_LISTXATTRAT, dirfd, cname, Posix.AT_SYMLINK_NOFOLLOW,
              buf, buf.length)
          : Posix.c().llistxattr(procPath(dirfd, name), buf, buf.length);
      if (got >= 0) {
        return names(buf, (int) got);
      }
      if (Posix.errno() != Errno.ERANGE.intValue()) {
        throw Posix.error(Posix.errno(), shown.get());
      }
      // Grown since it was sized: ask again.
    }
  }

  /** The value of attribute {@code attr} of child {@code name}, or null where it has gone. */
  static byte[] get(int dirfd, byte[] name, byte[] attr, String shown) throws IOException {
    byte[] path = procPath(dirfd, name);
    byte[] cattr = Posix.cString(attr);
    while (true) {
      long n = Posix.c().lgetxattr(path, cattr, null, 0);
      if (n < 0) {
        break;
      }
      byte[] buf = new byte[(int) n];
      long got = Posix.c().lgetxattr(path, cattr, buf, buf.length);
      if (got >= 0) {
        return got == n ? buf : Arrays.copyOf(buf, (int) got);
      }
      if (Posix.errno() != Errno.ERANGE.intValue()) {
        break;
      }
    }
    if (Posix.errno() == Errno.ENODATA.intValue()) {
      return null;
    }
    throw Posix.error(Posix.errno(), shown);
  }

  /** Removes attribute {@code attr} of child {@code name}, if it has it. */
  static void remove(int dirfd, byte[] name, byte[] attr, String shown) throws IOException {
    if (Posix.c().lremovexattr(procPath(dirfd, name), Posix.cString(attr)) != 0) {
      int errno = Posix.errno();
      if (errno != Errno.ENODATA.intValue() && !unsupported(errno)) {
        throw Posix.error(errno, shown);
      }
    }
  }

  /** Sets attribute {@code attr} of child {@code name} without following it. */
  static void set(int dirfd, byte[] name, byte[] attr, byte[] value, String shown)
      throws IOException {
    if (Posix.c().lsetxattr(procPath(dirfd, name), Posix.cString(attr), value, value.length,
        0) != 0) {
      throw Posix.error(Posix.errno(), shown);
    }
  }
}

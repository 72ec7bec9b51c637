package io.beamsave.transforms.fs;

import io.beamsave.transforms.Printable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jnr.constants.platform.Errno;
import jnr.ffi.Pointer;

/**
 * An open directory, and the operations on its children by name. A name is one path
 * component as bytes (neither empty, {@code .}, {@code ..}, nor holding {@code /} or NUL).
 * Nothing here follows a symbolic link: a child that is one is opened, changed or listed as the
 * link itself, or refused with {@link SymlinkException}. A directory opened beneath another
 * stays the same directory even if its name is meanwhile swapped for a link, so a tree walked
 * through handles is never left. Safe to use from several threads.
 */
public final class Dir extends Handle {
  private static final byte[] DOT = {'.', 0};
  private static final byte[] ROOT = {'/', 0};
  private static final int NAME_OFFSET = 19;

  private Dir(int fd, String name) {
    super(fd, name);
  }

  /**
   * Opens the directory at {@code dir}, following symbolic links in the path as {@code cd}
   * would: how a path an operator gives is taken.
   */
  public static Dir open(Path dir) throws IOException {
    return open(dir, dir);
  }

  /**
   * Like {@link #open(Path)}, named {@code shownAs} in messages: a snapshot's directory as the
   * library it was taken of.
   */
  public static Dir open(Path dir, Path shownAs) throws IOException {
    String name = shownAs.toString();
    int fd = Posix.c().openat(Posix.AT_FDCWD, Posix.cString(bytesOf(dir)),
        Posix.openDirFollowingFlags(), 0);
    if (fd < 0) {
      throw Posix.error(Posix.errno(), dir.toString());
    }
    return new Dir(fd, name);
  }

  /**
   * Opens the absolute path {@code dir} one component at a time from {@code /}, following no
   * symbolic link: how a worker reopens a directory the launcher resolved, so that a link put in
   * its way meanwhile fails the open instead of leading elsewhere.
   */
  public static Dir openNoFollow(Path dir) throws IOException {
    byte[] path = bytesOf(dir);
    if (path.length == 0 || path[0] != '/') {
      throw new IllegalArgumentException("not an absolute path: " + dir);
    }
    int fd = Posix.c().openat(Posix.AT_FDCWD, ROOT, Posix.openDirFlags(), 0);
    if (fd < 0) {
      throw Posix.error(Posix.errno(), "/");
    }
    Dir at = new Dir(fd, "/");
    try {
      for (byte[] component : components(path)) {
        if (isDotOrDotDot(component)) {
          throw new IllegalArgumentException("not a resolved path: " + dir);
        }
        Dir next = at.openDir(component);
        at.close();
        at = next;
      }
      return at;
    } catch (IOException | RuntimeException e) {
      at.close();
      throw e;
    }
  }

  /** The printable path of child {@code name}, for messages. */
  public String child(byte[] name) {
    String n = Printable.bytes(name);
    return name().endsWith("/") ? name() + n : name() + "/" + n;
  }

  /** Opens subdirectory {@code name}; a symlink there fails with {@link SymlinkException}. */
  public Dir openDir(byte[] name) throws IOException {
    int fd = Posix.c().openat(fd(), checked(name), Posix.openDirFlags(), 0);
    if (fd < 0) {
      int errno = Posix.errno();
      // O_NOFOLLOW with O_DIRECTORY reports a link as ENOTDIR on some kernels: say which.
      if (errno == Errno.ENOTDIR.intValue() && isSymlink(name)) {
        throw new SymlinkException(child(name));
      }
      throw Posix.error(errno, child(name));
    }
    return new Dir(fd, child(name));
  }

  private boolean isSymlink(byte[] name) {
    try {
      return stat(name).isSymlink();
    } catch (IOException e) {
      return false;
    }
  }

  /** What {@code name} is, without following it if it is a symlink. */
  public FileStat stat(byte[] name) throws IOException {
    byte[] buf = new byte[Posix.STATX_SIZE_BYTES];
    if (Posix.c().statx(fd(), checked(name), Posix.AT_SYMLINK_NOFOLLOW,
        Posix.STATX_WANTED, buf) != 0) {
      throw fail(child(name));
    }
    return FileStat.fromStatx(buf);
  }

  /** The names in this directory, but {@code .} and {@code ..}, in the order the kernel gives. */
  public List<byte[]> list() throws IOException {
    int fd = Posix.c().openat(fd(), DOT, Posix.openDirFlags(), 0);
    if (fd < 0) {
      throw fail(null);
    }
    Pointer dir = Posix.c().fdopendir(fd);
    if (dir == null) {
      IOException e = fail(null);
      Posix.c().close(fd);
      throw e;
    }
    List<byte[]> names = new ArrayList<>();
    try {
      while (true) {
        Posix.clearErrno();
        Pointer e = Posix.c().readdir(dir);
        if (e == null) {
          int errno = Posix.errno();
          if (errno != 0) {
            throw Posix.error(errno, name());
          }
          return names;
        }
        int len = e.indexOf(NAME_OFFSET, (byte) 0, 256);
        if (len <= 0) {
          throw new IOException(name() + ": the kernel listed an empty or overlong name");
        }
        byte[] n = new byte[len];
        e.get(NAME_OFFSET, n, 0, len);
        if (!isDotOrDotDot(n)) {
          names.add(n);
        }
      }
    } finally {
      Posix.c().closedir(dir);
    }
  }

  /** The target of symlink {@code name}, as bytes. */
  public byte[] readLink(byte[] name) throws IOException {
    byte[] buf = new byte[4097];
    long n = Posix.c().readlinkat(fd(), checked(name), buf, buf.length);
    if (n < 0) {
      throw fail(child(name));
    }
    if (n >= buf.length) {
      throw new IOException(child(name) + ": symlink target longer than 4096 bytes");
    }
    byte[] target = new byte[(int) n];
    System.arraycopy(buf, 0, target, 0, target.length);
    return target;
  }

  /**
   * Whether this process may read {@code name} as open(2) would judge it: by its effective ids
   * and capabilities. Plain access(2) judges by the real ids and drops the capabilities, which
   * refused a service that reads through CAP_DAC_READ_SEARCH every file a save then read well.
   */
  public boolean canRead(byte[] name) {
    return Posix.c().faccessat(fd(), checked(name), Posix.R_OK, Posix.AT_EACCESS) == 0;
  }

  /** Opens file {@code name} to read; a symlink there fails, a FIFO does not block. */
  public OpenFile openRead(byte[] name) throws IOException {
    return open(name, Posix.readFlags(), 0);
  }

  /** Opens existing file {@code name} to write into; a symlink there fails. */
  public OpenFile openWrite(byte[] name) throws IOException {
    return open(name, Posix.writeFlags(), 0);
  }

  /** Creates file {@code name}, which must not exist (not even as a dangling symlink). */
  public OpenFile create(byte[] name, int permissions) throws IOException {
    return open(name, Posix.createFlags(), permissions & 07777);
  }

  /** Opens file {@code name} to read and write, creating it if missing; a symlink there fails. */
  public OpenFile openOrCreate(byte[] name, int permissions) throws IOException {
    return open(name, Posix.openOrCreateFlags(), permissions & 07777);
  }

  private OpenFile open(byte[] name, int flags, int mode) throws IOException {
    int fd = Posix.c().openat(fd(), checked(name), flags, mode);
    if (fd < 0) {
      throw fail(child(name));
    }
    return new OpenFile(fd, child(name));
  }

  public void mkdir(byte[] name, int permissions) throws IOException {
    if (Posix.c().mkdirat(fd(), checked(name), permissions & 07777) != 0) {
      throw fail(child(name));
    }
  }

  /** Creates symlink {@code name} pointing at {@code target} (any bytes but NUL). */
  public void symlink(byte[] target, byte[] name) throws IOException {
    for (byte b : target) {
      if (b == 0) {
        throw new IllegalArgumentException("symlink target holds NUL");
      }
    }
    if (Posix.c().symlinkat(Posix.cString(target), fd(), checked(name)) != 0) {
      throw fail(child(name));
    }
  }

  /** Renames {@code from} to {@code to} in this directory, replacing a file or link there. */
  public void rename(byte[] from, byte[] to) throws IOException {
    if (Posix.c().renameat(fd(), checked(from), fd(), checked(to)) != 0) {
      throw fail(child(to));
    }
  }

  /** Moves {@code from} in this directory to {@code to} in {@code dir}, replacing a file there. */
  public void renameTo(byte[] from, Dir dir, byte[] to) throws IOException {
    if (Posix.c().renameat(fd(), checked(from), dir.fd(), checked(to)) != 0) {
      throw fail(dir.child(to));
    }
  }

  /** Removes file or symlink {@code name}. */
  public void delete(byte[] name) throws IOException {
    if (Posix.c().unlinkat(fd(), checked(name), 0) != 0) {
      throw fail(child(name));
    }
  }

  /** Removes empty directory {@code name}. */
  public void deleteDirectory(byte[] name) throws IOException {
    if (Posix.c().unlinkat(fd(), checked(name), Posix.AT_REMOVEDIR) != 0) {
      throw fail(child(name));
    }
  }

  /** Sets the owner of {@code name} without following it: how a symlink's owner is set. */
  public void setLinkOwner(byte[] name, int uid, int gid) throws IOException {
    if (Posix.c().fchownat(fd(), checked(name), uid, gid, Posix.AT_SYMLINK_NOFOLLOW) != 0) {
      throw fail(child(name));
    }
  }

  /** Sets the modification time of {@code name} without following it: how a symlink's is set. */
  public void setLinkModified(byte[] name, long seconds, int nanos) throws IOException {
    if (Posix.c().utimensat(fd(), checked(name), times(seconds, nanos),
        Posix.AT_SYMLINK_NOFOLLOW) != 0) {
      throw fail(child(name));
    }
  }

  /**
   * The names of child {@code name}'s extended attributes that this process may see, without
   * following it; none where its filesystem keeps none.
   */
  public List<byte[]> xattrNames(byte[] name) throws IOException {
    // The printable name only for an error: a walk asks this of every entry.
    return Xattrs.list(fd(), checked(name), name, () -> child(name));
  }

  /** The value of child {@code name}'s extended attribute {@code attr}; null if it has gone. */
  public byte[] xattr(byte[] name, byte[] attr) throws IOException {
    checked(name);
    return Xattrs.get(fd(), name, attr, child(name));
  }

  /** Sets child {@code name}'s extended attribute {@code attr}, not following it. */
  public void setXattr(byte[] name, byte[] attr, byte[] value) throws IOException {
    checked(name);
    Xattrs.set(fd(), name, attr, value, child(name));
  }

  /** Removes child {@code name}'s extended attribute {@code attr}, if it has it. */
  public void removeXattr(byte[] name, byte[] attr) throws IOException {
    checked(name);
    Xattrs.remove(fd(), name, attr, child(name));
  }

  /**
   * Creates {@code name} as a FIFO or device node: {@code mode} holds its type ({@code
   * S_IFIFO}, {@code S_IFCHR} or {@code S_IFBLK}) and permission bits, {@code rdev} the device.
   */
  public void mknod(byte[] name, int mode, long rdev) throws IOException {
    if (Posix.c().mknodat(fd(), checked(name), mode, rdev) != 0) {
      throw fail(child(name));
    }
  }

  /** Makes {@code to} in {@code dir} another name of regular file {@code from} here. */
  public void link(byte[] from, Dir dir, byte[] to) throws IOException {
    // No AT_SYMLINK_FOLLOW: a symlink put at from is linked as the link, never followed.
    if (Posix.c().linkat(fd(), checked(from), dir.fd(), checked(to), 0) != 0) {
      throw fail(dir.child(to));
    }
  }

  /**
   * Sets the permission bits of {@code name} by name: for nodes, which are never opened (a
   * device's open can act on it), made where only this process's user can reach them.
   */
  public void setPermissions(byte[] name, int permissions) throws IOException {
    if (Posix.c().fchmodat(fd(), checked(name), permissions & 07777, 0) != 0) {
      throw fail(child(name));
    }
  }

  /** The effective user id of this process. */
  public static int effectiveUid() {
    return Posix.c().geteuid();
  }

  /** {@code name} as a C string, refusing what is not one path component. */
  private static byte[] checked(byte[] name) {
    if (name.length == 0 || isDotOrDotDot(name)) {
      throw new IllegalArgumentException("not a file name: '" + Printable.bytes(name) + "'");
    }
    for (byte b : name) {
      if (b == '/' || b == 0) {
        throw new IllegalArgumentException("not a file name: '" + Printable.bytes(name) + "'");
      }
    }
    return Posix.cString(name);
  }

  static boolean isDotOrDotDot(byte[] n) {
    return (n.length == 1 && n[0] == '.') || (n.length == 2 && n[0] == '.' && n[1] == '.');
  }

  /** The non-empty components of a {@code /}-separated path. */
  static List<byte[]> components(byte[] path) {
    List<byte[]> out = new ArrayList<>();
    int start = 0;
    for (int i = 0; i <= path.length; i++) {
      if (i == path.length || path[i] == '/') {
        if (i > start) {
          byte[] c = new byte[i - start];
          System.arraycopy(path, start, c, 0, c.length);
          out.add(c);
        }
        start = i + 1;
      }
    }
    return out;
  }

  /**
   * The bytes of {@code path} as the kernel knows them. Java keeps a path's bytes as it got
   * them but decodes them for {@code toString()}, which loses any that are not valid UTF-8;
   * {@code toUri()} escapes every such byte as {@code %XX} instead, the one public way back.
   */
  public static byte[] bytesOf(Path path) {
    String s = path.toString();
    boolean ascii = true;
    for (int i = 0; i < s.length() && ascii; i++) {
      ascii = s.charAt(i) < 0x80 && s.charAt(i) != 0xfffd;
    }
    if (ascii) {
      return s.getBytes(StandardCharsets.US_ASCII);
    }
    String raw = path.toAbsolutePath().toUri().getRawPath();
    byte[] out = new byte[raw.length()];
    int n = 0;
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '%' && i + 2 < raw.length()) {
        out[n++] = (byte) Integer.parseInt(raw.substring(i + 1, i + 3), 16);
        i += 2;
      } else {
        out[n++] = (byte) c;
      }
    }
    if (n > 1 && out[n - 1] == '/') {
      n--;
    }
    byte[] exact = new byte[n];
    System.arraycopy(out, 0, exact, 0, n);
    return exact;
  }
}

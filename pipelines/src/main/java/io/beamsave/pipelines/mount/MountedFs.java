package io.beamsave.pipelines.mount;

import io.beamsave.transforms.Printable;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Meta;
import io.beamsave.transforms.image.catalog.PosixAcl;
import io.beamsave.transforms.read.FileReads;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.provider.jffi.ClosureHelper;
import ru.serce.jnrfuse.ErrorCodes;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.Statvfs;

/**
 * A read-only FUSE file system over a {@link View}: libfuse calls these operations with the
 * path's bytes, which the view resolves to a node. What fails in the image (a damaged block, a
 * base that cannot be read) is an EIO for the call, and one line on stderr.
 *
 * <p>Permissions are the kernel's to check ({@code default_permissions}) or, given an {@link
 * AccessCheck}, this file system's: then the calls that open a file or directory, read a link,
 * answer {@code access} or read an attribute pass it first. Reads and listings need an open
 * file or directory, which the kernel always asks for first and keeps what it was granted, as
 * with any file system; {@code getattr} (and so a lookup) is never refused, as the kernel
 * caches its answer for a day across callers.
 */
final class MountedFs {
  /** What the file system shows: nodes by path. */
  interface View {
    /** The node at {@code path} (bytes after the mount point, without the leading '/'). */
    Node resolve(byte[] path) throws IOException;

    /** The names and nodes in directory {@code dir}. */
    List<Named> list(Node dir) throws IOException;

    /** Entries and raw bytes, for {@code statfs}. */
    long[] totals();

    /**
     * Whether every node's mode bits say all about who may use it (no access ACL beyond them),
     * known now: false where that is not known.
     */
    boolean modesSayAll();
  }

  /** A node: an entry of an image's tree, or a directory or link the view makes up. */
  sealed interface Node permits InImage, Made {}

  /** An entry of {@code tree}; {@code salt} tells its inode numbers from another image's. */
  record InImage(ImageTree tree, Entry entry, long salt) implements Node {}

  /**
   * A directory ({@code target} null) or symbolic link the view shows (a library, a time, a
   * {@code latest}), with its time in seconds.
   */
  record Made(byte[] path, byte[] target, long seconds) implements Node {}

  record Named(byte[] name, Node node) {}

  private static final int S_IFMT = 0170000;
  private static final int O_ACCMODE = 3;
  private static final int FMODE_EXEC = 0x20;

  private final View view;
  private final PrintWriter err;
  private final AccessCheck access;
  private volatile FuseLib.Native fuse;
  private final FuseLib.Operations ops;
  private final Map<Long, Open> open = new ConcurrentHashMap<>();
  private final AtomicLong handles = new AtomicLong();

  /** A file opened for reading: what it reads, and where its reads stand. */
  private record Open(ImageTree tree, Entry file, FileReads.Cursor cursor) {}

  /**
   * Serves {@code view}, checking permissions itself if {@code ownChecks} (else the mount must
   * have the kernel check them); {@code onMounted} runs once the mount is in place.
   */
  MountedFs(View view, PrintWriter err, boolean ownChecks, Runnable onMounted) {
    this.view = view;
    this.err = err;
    this.access = ownChecks ? new AccessCheck(view, () -> FuseLib.caller(fuse)) : null;
    this.ops = new FuseLib.Operations(Runtime.getSystemRuntime());
    ops.getattr.set(this::getattr);
    ops.readlink.set(this::readlink);
    ops.open.set(this::open);
    ops.read.set(this::read);
    ops.release.set(this::release);
    ops.statfs.set(this::statfs);
    ops.getxattr.set(this::getxattr);
    ops.listxattr.set(this::listxattr);
    ops.opendir.set(this::opendir);
    ops.readdir.set(this::readdir);
    ops.releasedir.set((path, fi) -> 0);
    ops.access.set(this::access);
    ops.init.set(conn -> {
      onMounted.run();
      return null;
    });
    ops.destroy.set(data -> { });
  }

  /** Mounts at {@code args}' mount point and serves until unmounted; libfuse's status. */
  int serve(String[] args) {
    fuse = FuseLib.load();
    return fuse.fuse_main_real(args.length, args, ops, jnr.ffi.Struct.size(ops), null);
  }

  /** 0 if the caller may have {@code want} of {@code n} at {@code path}, else an error. */
  private int allowed(byte[] path, Node n, int want) throws IOException {
    return access == null ? 0 : access.check(path, n, want);
  }

  private int access(Pointer path, int mask) {
    return guarded(path, p -> {
      Node n = view.resolve(p);
      return n == null ? -ErrorCodes.ENOENT() : allowed(p, n, mask & 7);
    });
  }

  private static byte[] path(Pointer p) {
    int len = p.indexOf(0, (byte) 0);
    byte[] b = new byte[Math.max(0, len)];
    p.get(0, b, 0, b.length);
    int skip = 0;
    while (skip < b.length && b[skip] == '/') {
      skip++;
    }
    return Arrays.copyOfRange(b, skip, b.length);
  }

  /** Runs {@code op}; a failure is EIO and a line naming the path. */
  private int guarded(Pointer path, Op op) {
    try {
      return op.run(path(path));
    } catch (IOException | RuntimeException e) {
      err.println("beamsave: mount: " + Printable.bytes(path(path)) + ": " + e.getMessage());
      err.flush();
      return -ErrorCodes.EIO();
    }
  }

  @FunctionalInterface
  private interface Op {
    int run(byte[] path) throws IOException;
  }

  private int getattr(Pointer path, Pointer buf) {
    return guarded(path, p -> {
      Node n = view.resolve(p);
      if (n == null) {
        return -ErrorCodes.ENOENT();
      }
      NodeStat.fill(FileStat.of(buf), n);
      return 0;
    });
  }

  private int readlink(Pointer path, Pointer buf, long size) {
    return guarded(path, p -> {
      Node n = view.resolve(p);
      int denied = n == null ? 0 : allowed(p, n, 0);
      if (denied != 0) {
        return denied;
      }
      byte[] target;
      if (n instanceof Made m && m.target() != null) {
        target = m.target();
      } else if (n instanceof InImage in && in.entry().type() == EntryType.SYMLINK
          && in.entry().linkTarget() != null) {
        target = in.entry().linkTarget().bytes();
      } else {
        return n == null ? -ErrorCodes.ENOENT() : -ErrorCodes.EINVAL();
      }
      if (size <= 0) {
        return -ErrorCodes.EINVAL();
      }
      int len = (int) Math.min(target.length, size - 1);
      buf.put(0, target, 0, len);
      buf.putByte(len, (byte) 0);
      return 0;
    });
  }

  private int open(Pointer path, Pointer fi) {
    return guarded(path, p -> {
      FuseFileInfo info = FuseFileInfo.of(fi);
      if ((info.flags.get() & O_ACCMODE) != 0) {
        return -ErrorCodes.EROFS();
      }
      Node n = view.resolve(p);
      if (!(n instanceof InImage in)) {
        return n == null ? -ErrorCodes.ENOENT() : -ErrorCodes.EISDIR();
      }
      Entry file = in.tree().fileOf(in.entry());
      if (file == null) {
        return in.entry().type() == EntryType.DIRECTORY ? -ErrorCodes.EISDIR()
            : -ErrorCodes.EIO();
      }
      // An exec's open asks execute, not read (the kernel marks it __FMODE_EXEC).
      int denied = allowed(p, n, (info.flags.get() & FMODE_EXEC) != 0 ? PosixAcl.EXECUTE
          : PosixAcl.READ);
      if (denied != 0) {
        return denied;
      }
      if (file.unreadable()) {
        // Its bytes could not be read when it was saved: what the image holds is not the file.
        return -ErrorCodes.EIO();
      }
      long h = handles.incrementAndGet();
      open.put(h, new Open(in.tree(), file, new FileReads.Cursor()));
      info.fh.set(h);
      return 0;
    });
  }

  private int read(Pointer path, Pointer buf, long size, long offset, Pointer fi) {
    Open o = open.get(FuseFileInfo.of(fi).fh.get());
    if (o == null) {
      return -ErrorCodes.EBADF();
    }
    return guarded(path, p -> {
      byte[] b = new byte[(int) Math.min(size, 1 << 20)];
      int n;
      synchronized (o) {
        n = o.tree().read(o.file(), offset, b, b.length, o.cursor());
      }
      buf.put(0, b, 0, n);
      return n;
    });
  }

  private int release(Pointer path, Pointer fi) {
    Open o = open.remove(FuseFileInfo.of(fi).fh.get());
    if (o != null) {
      synchronized (o) {
        o.cursor().close();
      }
    }
    return 0;
  }

  private int statfs(Pointer path, Pointer buf) {
    Statvfs st = Statvfs.of(buf);
    long[] totals = view.totals();
    st.f_bsize.set(4096);
    st.f_frsize.set(4096);
    st.f_blocks.set((totals[1] + 4095) / 4096);
    st.f_bfree.set(0);
    st.f_bavail.set(0);
    st.f_files.set(totals[0]);
    st.f_ffree.set(0);
    st.f_namemax.set(255);
    st.f_flag.set(Statvfs.ST_RDONLY | Statvfs.ST_NOSUID | Statvfs.ST_NODEV);
    return 0;
  }

  private static byte[] name(Pointer p) {
    int len = p.indexOf(0, (byte) 0);
    byte[] b = new byte[Math.max(0, len)];
    p.get(0, b, 0, b.length);
    return b;
  }

  private int getxattr(Pointer path, Pointer name, Pointer value, long size) {
    return guarded(path, p -> {
      Node n = view.resolve(p);
      if (n == null) {
        return -ErrorCodes.ENOENT();
      }
      byte[] wanted = name(name);
      int denied = allowed(p, n, needs(wanted));
      if (denied != 0) {
        return denied;
      }
      for (Meta.Xattr x : xattrs(n)) {
        if (Arrays.equals(x.name(), wanted)) {
          return copyOut(x.value(), value, size);
        }
      }
      return -ErrorCodes.ENODATA();
    });
  }

  private int listxattr(Pointer path, Pointer list, long size) {
    return guarded(path, p -> {
      Node n = view.resolve(p);
      if (n == null) {
        return -ErrorCodes.ENOENT();
      }
      int denied = allowed(p, n, 0);
      if (denied != 0) {
        return denied;
      }
      java.io.ByteArrayOutputStream names = new java.io.ByteArrayOutputStream();
      for (Meta.Xattr x : xattrs(n)) {
        names.write(x.name());
        names.write(0);
      }
      return copyOut(names.toByteArray(), list, size);
    });
  }

  /**
   * What reading attribute {@code name} needs of its file (the kernel's xattr_permission):
   * nothing in the namespaces it leaves to the file system and the security modules, or
   * {@code trusted.}, which it keeps to root itself; reading otherwise.
   */
  private static int needs(byte[] name) {
    String n = new String(name, java.nio.charset.StandardCharsets.ISO_8859_1);
    return n.startsWith("system.") || n.startsWith("security.") || n.startsWith("trusted.")
        ? 0 : PosixAcl.READ;
  }

  private List<Meta.Xattr> xattrs(Node n) throws IOException {
    if (!(n instanceof InImage in)) {
      return List.of();
    }
    Entry e = in.entry().isHardLink() ? in.tree().fileOf(in.entry()) : in.entry();
    return e == null ? List.of() : e.meta().xattrs();
  }

  /** The xattr calls' protocol: the length when asked with size 0, ERANGE if it is short. */
  private static int copyOut(byte[] bytes, Pointer to, long size) {
    if (size == 0) {
      return bytes.length;
    }
    if (size < bytes.length) {
      return -ErrorCodes.ERANGE();
    }
    to.put(0, bytes, 0, bytes.length);
    return bytes.length;
  }

  private int opendir(Pointer path, Pointer fi) {
    return guarded(path, p -> {
      Node n = view.resolve(p);
      if (n == null) {
        return -ErrorCodes.ENOENT();
      }
      boolean dir = n instanceof Made m ? m.target() == null
          : ((InImage) n).entry().type() == EntryType.DIRECTORY;
      return dir ? allowed(p, n, PosixAcl.READ) : -ErrorCodes.ENOTDIR();
    });
  }

  private int readdir(Pointer path, Pointer buf, Pointer filler, long offset, Pointer fi) {
    return guarded(path, p -> {
      Node n = view.resolve(p);
      if (n == null) {
        return -ErrorCodes.ENOENT();
      }
      FuseFillDir fill = ClosureHelper.getInstance().getNativeConveter(FuseFillDir.class)
          .fromNative(filler, ClosureHelper.getInstance().getFromNativeContext());
      fill.apply(buf, terminated(new byte[] {'.'}), null, 0);
      fill.apply(buf, terminated(new byte[] {'.', '.'}), null, 0);
      for (Named c : view.list(n)) {
        if (fill.apply(buf, terminated(c.name()), null, 0) != 0) {
          break;
        }
      }
      return 0;
    });
  }

  private static ByteBuffer terminated(byte[] name) {
    return ByteBuffer.wrap(Arrays.copyOf(name, name.length + 1));
  }
}

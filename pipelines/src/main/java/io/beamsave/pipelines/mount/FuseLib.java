package io.beamsave.pipelines.mount;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.Struct;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;

/**
 * libfuse 2's high-level interface, with every path and name passed as a pointer to its bytes.
 * jnr-fuse (whose structures for {@code struct stat}, {@code struct statvfs} and {@code struct
 * fuse_file_info} are used) passes them as Java strings decoded in the JVM's charset, which would
 * turn a name that is not valid UTF-8 into another name: names are bytes, so the table of
 * operations is declared here.
 */
final class FuseLib {
  private FuseLib() {}

  /** What is called in libfuse. */
  public interface Native {
    int fuse_main_real(int argc, String[] argv, Operations op, int opSize, Pointer userData);

    /** The calling process of the request this thread serves; valid during the call. */
    Pointer fuse_get_context();
  }

  /**
   * {@code struct fuse_context} of libfuse 2: who made the request being served, as the kernel
   * tells it (fs uid and fs gid, and the thread's id in the mount's pid namespace, 0 where the
   * caller is in none of its descendants).
   */
  static final class Context extends Struct {
    final Pointer fuse = new Pointer();
    final Unsigned32 uid = new Unsigned32();
    final Unsigned32 gid = new Unsigned32();
    final Signed32 pid = new Signed32();
    final Pointer privateData = new Pointer();
    final Unsigned32 umask = new Unsigned32();

    Context(Runtime runtime) {
      super(runtime);
    }
  }

  /** The caller of the request this thread is serving. */
  static AccessCheck.Caller caller(Native fuse) {
    Context c = new Context(Runtime.getSystemRuntime());
    c.useMemory(fuse.fuse_get_context());
    return new AccessCheck.Caller((int) c.uid.get(), (int) c.gid.get(), c.pid.get());
  }

  static Native load() {
    try {
      return LibraryLoader.create(Native.class).failImmediately().load("fuse");
    } catch (LinkageError | RuntimeException e) {
      try {
        return LibraryLoader.create(Native.class).failImmediately().load("libfuse.so.2");
      } catch (LinkageError | RuntimeException again) {
        throw new io.beamsave.transforms.BeamsaveException("mount needs libfuse 2, which is not"
            + " installed (Debian and Ubuntu: apt-get install fuse libfuse2)");
      }
    }
  }

  /** {@code getattr}, {@code statfs}: a path and a structure to fill. */
  public interface PathBuf {
    @Delegate
    int call(Pointer path, Pointer buf);
  }

  /** {@code readlink}, {@code listxattr}: a path, a buffer and its size. */
  public interface PathBufSize {
    @Delegate
    int call(Pointer path, Pointer buf, @size_t long size);
  }

  /** {@code open}, {@code release}, {@code opendir}, {@code releasedir}. */
  public interface PathInfo {
    @Delegate
    int call(Pointer path, Pointer fi);
  }

  /** {@code read}. */
  public interface Read {
    @Delegate
    int call(Pointer path, Pointer buf, @size_t long size, @off_t long offset, Pointer fi);
  }

  /** {@code getxattr}. */
  public interface GetXattr {
    @Delegate
    int call(Pointer path, Pointer name, Pointer value, @size_t long size);
  }

  /** {@code readdir}. */
  public interface ReadDir {
    @Delegate
    int call(Pointer path, Pointer buf, Pointer filler, @off_t long offset, Pointer fi);
  }

  /** {@code access}. */
  public interface Access {
    @Delegate
    int call(Pointer path, int mask);
  }

  /** {@code init}. */
  public interface Init {
    @Delegate
    Pointer call(Pointer conn);
  }

  /** {@code destroy}. */
  public interface Destroy {
    @Delegate
    void call(Pointer data);
  }

  /**
   * {@code struct fuse_operations} of libfuse 2.9 on Linux, in order: the operations a
   * read-only file system has are set, the others left null (libfuse answers ENOSYS).
   */
  public static final class Operations extends Struct {
    public final Function<PathBuf> getattr = function(PathBuf.class);
    public final Function<PathBufSize> readlink = function(PathBufSize.class);
    final Pointer getdir = new Pointer();
    final Pointer mknod = new Pointer();
    final Pointer mkdir = new Pointer();
    final Pointer unlink = new Pointer();
    final Pointer rmdir = new Pointer();
    final Pointer symlink = new Pointer();
    final Pointer rename = new Pointer();
    final Pointer link = new Pointer();
    final Pointer chmod = new Pointer();
    final Pointer chown = new Pointer();
    final Pointer truncate = new Pointer();
    final Pointer utime = new Pointer();
    public final Function<PathInfo> open = function(PathInfo.class);
    public final Function<Read> read = function(Read.class);
    final Pointer write = new Pointer();
    public final Function<PathBuf> statfs = function(PathBuf.class);
    final Pointer flush = new Pointer();
    public final Function<PathInfo> release = function(PathInfo.class);
    final Pointer fsync = new Pointer();
    final Pointer setxattr = new Pointer();
    public final Function<GetXattr> getxattr = function(GetXattr.class);
    public final Function<PathBufSize> listxattr = function(PathBufSize.class);
    final Pointer removexattr = new Pointer();
    public final Function<PathInfo> opendir = function(PathInfo.class);
    public final Function<ReadDir> readdir = function(ReadDir.class);
    public final Function<PathInfo> releasedir = function(PathInfo.class);
    final Pointer fsyncdir = new Pointer();
    public final Function<Init> init = function(Init.class);
    public final Function<Destroy> destroy = function(Destroy.class);
    public final Function<Access> access = function(Access.class);
    final Pointer create = new Pointer();
    final Pointer ftruncate = new Pointer();
    final Pointer fgetattr = new Pointer();
    final Pointer lock = new Pointer();
    final Pointer utimens = new Pointer();
    final Pointer bmap = new Pointer();
    /** flag_nullpath_ok, flag_nopath, flag_utime_omit_ok and the reserved bits: all 0. */
    final Unsigned32 flags = new Unsigned32();
    final Pointer ioctl = new Pointer();
    final Pointer poll = new Pointer();
    final Pointer writeBuf = new Pointer();
    final Pointer readBuf = new Pointer();
    final Pointer flock = new Pointer();
    final Pointer fallocate = new Pointer();

    Operations(Runtime runtime) {
      super(runtime);
    }
  }
}

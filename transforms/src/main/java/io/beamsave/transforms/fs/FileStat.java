package io.beamsave.transforms.fs;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * What {@code statx} says of a file, to the nanosecond: its type and permission bits ({@code
 * st_mode}), owner, size, modification and status-change times, inode, device, link count,
 * 512-byte blocks allocated, for a device node the device it is ({@code makedev}), and the id of
 * the mount it is reached through ({@code stx_mnt_id}, 0 where the kernel gives none: before
 * Linux 5.8), and whether it is the root of that mount ({@code STATX_ATTR_MOUNT_ROOT}; false
 * where the kernel does not say).
 */
public record FileStat(
    int mode,
    int uid,
    int gid,
    long size,
    long mtimeSeconds,
    int mtimeNanos,
    long ctimeSeconds,
    int ctimeNanos,
    long inode,
    long device,
    int links,
    long blocks,
    long rdev,
    long mountId,
    boolean mountRoot) {

  public boolean isFifo() {
    return (mode & Posix.S_IFMT) == Posix.S_IFIFO;
  }

  public boolean isCharDevice() {
    return (mode & Posix.S_IFMT) == Posix.S_IFCHR;
  }

  public boolean isBlockDevice() {
    return (mode & Posix.S_IFMT) == Posix.S_IFBLK;
  }

  public boolean isSocket() {
    return (mode & Posix.S_IFMT) == Posix.S_IFSOCK;
  }

  public boolean isDirectory() {
    return (mode & Posix.S_IFMT) == Posix.S_IFDIR;
  }

  public boolean isRegularFile() {
    return (mode & Posix.S_IFMT) == Posix.S_IFREG;
  }

  public boolean isSymlink() {
    return (mode & Posix.S_IFMT) == Posix.S_IFLNK;
  }

  /** The permission bits, set-id and sticky bits ({@code 07777}). */
  public int permissions() {
    return mode & 07777;
  }

  /** Whether this is the same file as {@code other}: the same inode on the same device. */
  public boolean sameFile(FileStat other) {
    return inode == other.inode && device == other.device;
  }

  /**
   * Whether this is on the same mount as {@code other}: the same mount id where the kernel gives
   * them, which tells a bind mount of a file system from that file system itself, else the same
   * device.
   */
  public boolean sameMount(FileStat other) {
    return mountId != 0 && other.mountId != 0 ? mountId == other.mountId
        : device == other.device;
  }

  /** Reads {@code struct statx}, laid out the same on every 64-bit Linux architecture. */
  static FileStat fromStatx(byte[] raw) {
    ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.nativeOrder());
    int links = b.getInt(16);
    int uid = b.getInt(20);
    int gid = b.getInt(24);
    int mode = Short.toUnsignedInt(b.getShort(28));
    long inode = b.getLong(32);
    long size = b.getLong(40);
    long blocks = b.getLong(48);
    long rdev = DeviceNumber.of(Integer.toUnsignedLong(b.getInt(128)),
        Integer.toUnsignedLong(b.getInt(132)));
    long ctime = b.getLong(96);
    int ctimeNanos = b.getInt(104);
    long mtime = b.getLong(112);
    int mtimeNanos = b.getInt(120);
    long device = ((long) b.getInt(136) << 32) | Integer.toUnsignedLong(b.getInt(140));
    long mountId = (b.getInt(0) & Posix.STATX_MNT_ID) != 0 ? b.getLong(144) : 0;
    boolean mountRoot = (b.getLong(56) & b.getLong(8) & Posix.STATX_ATTR_MOUNT_ROOT) != 0;
    return new FileStat(mode, uid, gid, size, mtime, mtimeNanos, ctime, ctimeNanos, inode,
        device, links, blocks, rdev, mountId, mountRoot);
  }

}

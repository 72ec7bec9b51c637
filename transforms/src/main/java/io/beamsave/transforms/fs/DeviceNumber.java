package io.beamsave.transforms.fs;

/**
 * A device number as the C library encodes it ({@code makedev}): what {@code stat} gives a
 * device node, {@code mknod} takes, FUSE shows and the catalog stores as its major and minor
 * numbers. The one place the encoding is written down.
 */
public final class DeviceNumber {
  private DeviceNumber() {}

  /** The device number of {@code major} and {@code minor} ({@code gnu_dev_makedev}). */
  public static long of(long major, long minor) {
    return ((major & 0xfffff000L) << 32) | ((major & 0xfffL) << 8)
        | ((minor & 0xffffff00L) << 12) | (minor & 0xffL);
  }

  /** The device's major number ({@code gnu_dev_major}). */
  public static int major(long rdev) {
    return (int) (((rdev >>> 32) & 0xfffff000L) | ((rdev >>> 8) & 0xfffL));
  }

  /** The device's minor number ({@code gnu_dev_minor}). */
  public static int minor(long rdev) {
    return (int) (((rdev >>> 12) & 0xffffff00L) | (rdev & 0xffL));
  }
}

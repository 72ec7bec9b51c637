package io.beamsave.transforms.image;

import java.util.List;

/**
 * One file, directory or symlink of a library, by its path relative to the library root
 * ({@code /}-separated). Files carry their extents once planned; {@link #FLAG_CHANGED} marks a
 * file that changed while it was being saved (kept only with {@code --allow-changing}).
 */
public record Entry(
    String path,
    EntryType type,
    int flags,
    int mode,
    int uid,
    int gid,
    long mtimeSeconds,
    int mtimeNanos,
    long size,
    String linkTarget,
    List<Extent> extents) {

  public static final int FLAG_CHANGED = 1;

  public boolean isFile() {
    return type == EntryType.FILE;
  }

  public boolean changed() {
    return (flags & FLAG_CHANGED) != 0;
  }

  public Entry withExtents(List<Extent> newExtents) {
    return new Entry(
        path, type, flags, mode, uid, gid, mtimeSeconds, mtimeNanos, size, linkTarget, newExtents);
  }

  public Entry withFlags(int newFlags) {
    return new Entry(
        path, type, newFlags, mode, uid, gid, mtimeSeconds, mtimeNanos, size, linkTarget, extents);
  }
}

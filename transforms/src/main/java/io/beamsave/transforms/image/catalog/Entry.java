package io.beamsave.transforms.image.catalog;

import java.util.List;

/**
 * One file, directory, symlink, hard link, FIFO or device of a library, by its path relative
 * to the library root, with
 * what {@code statx} said of it: permission bits, owner, modification and status-change times
 * to the nanosecond, inode and size. Files carry their extents once planned; {@link
 * #FLAG_CHANGED} marks a file that changed while it was being saved (kept only with {@code
 * --allow-changing}), {@link #FLAG_UNREADABLE} an entry the save could not read (kept only with
 * {@code --skip-unreadable}). The library root itself is an entry with an empty path ({@link
 * Catalog#root()}). {@link #meta} holds owner names, extended attributes and device numbers
 * (format version 9 on); a hard link's {@link #linkTarget} is the path of the file it is a
 * link to, which comes before it in the catalog.
 */
public record Entry(
    PathBytes path,
    EntryType type,
    int flags,
    int mode,
    int uid,
    int gid,
    long mtimeSeconds,
    int mtimeNanos,
    long ctimeSeconds,
    int ctimeNanos,
    long inode,
    long size,
    PathBytes linkTarget,
    List<Extent> extents,
    Meta meta,
    Ranges ranges)
    implements java.io.Serializable {

  public Entry {
    meta = meta == null ? Meta.NONE : meta;
    ranges = ranges == null ? Ranges.NONE : ranges;
  }

  /** An entry without {@link Ranges}. */
  public Entry(PathBytes path, EntryType type, int flags, int mode, int uid, int gid,
      long mtimeSeconds, int mtimeNanos, long ctimeSeconds, int ctimeNanos, long inode,
      long size, PathBytes linkTarget, List<Extent> extents, Meta meta) {
    this(path, type, flags, mode, uid, gid, mtimeSeconds, mtimeNanos, ctimeSeconds, ctimeNanos,
        inode, size, linkTarget, extents, meta, Ranges.NONE);
  }

  /** An entry with nothing beyond what {@code statx} says ({@link Meta#NONE}). */
  public Entry(PathBytes path, EntryType type, int flags, int mode, int uid, int gid,
      long mtimeSeconds, int mtimeNanos, long ctimeSeconds, int ctimeNanos, long inode,
      long size, PathBytes linkTarget, List<Extent> extents) {
    this(path, type, flags, mode, uid, gid, mtimeSeconds, mtimeNanos, ctimeSeconds, ctimeNanos,
        inode, size, linkTarget, extents, Meta.NONE, Ranges.NONE);
  }

  public static final int FLAG_CHANGED = 1;
  /**
   * The save could not read this entry: for a file, its bytes (its extents hold zeros where
   * reading failed, and restore leaves it out); for a directory, some or all of its entries
   * (what could be read is saved, and restore makes the directory).
   */
  public static final int FLAG_UNREADABLE = 2;
  /** Every flag a reader knows. */
  public static final int FLAGS = FLAG_CHANGED | FLAG_UNREADABLE;

  public boolean isFile() {
    return type == EntryType.FILE;
  }

  public boolean changed() {
    return (flags & FLAG_CHANGED) != 0;
  }

  public boolean unreadable() {
    return (flags & FLAG_UNREADABLE) != 0;
  }

  public Entry withExtents(List<Extent> newExtents) {
    return new Entry(path, type, flags, mode, uid, gid, mtimeSeconds, mtimeNanos, ctimeSeconds,
        ctimeNanos, inode, size, linkTarget, newExtents, meta, ranges);
  }

  public Entry withMeta(Meta newMeta) {
    return new Entry(path, type, flags, mode, uid, gid, mtimeSeconds, mtimeNanos, ctimeSeconds,
        ctimeNanos, inode, size, linkTarget, extents, newMeta, ranges);
  }

  public Entry withMode(int newMode) {
    return new Entry(path, type, flags, newMode, uid, gid, mtimeSeconds, mtimeNanos,
        ctimeSeconds, ctimeNanos, inode, size, linkTarget, extents, meta, ranges);
  }

  public Entry withOwner(int newUid, int newGid) {
    return new Entry(path, type, flags, mode, newUid, newGid, mtimeSeconds, mtimeNanos,
        ctimeSeconds, ctimeNanos, inode, size, linkTarget, extents, meta, ranges);
  }

  public Entry withRanges(Ranges newRanges) {
    return new Entry(path, type, flags, mode, uid, gid, mtimeSeconds, mtimeNanos, ctimeSeconds,
        ctimeNanos, inode, size, linkTarget, extents, meta, newRanges);
  }

  /** A later link to a file saved before it in the image ({@link #linkTarget}). */
  public boolean isHardLink() {
    return type == EntryType.HARDLINK;
  }

  public Entry withFlags(int newFlags) {
    return new Entry(path, type, newFlags, mode, uid, gid, mtimeSeconds, mtimeNanos,
        ctimeSeconds, ctimeNanos, inode, size, linkTarget, extents, meta, ranges);
  }
}

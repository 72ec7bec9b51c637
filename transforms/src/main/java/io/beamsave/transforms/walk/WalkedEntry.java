package io.beamsave.transforms.walk;

import io.beamsave.transforms.fs.Accounts;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Meta;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The catalog entry a walk makes of what it found: from {@code statx}'s fields, then what the
 * directory's handle says beyond them (extended attributes, owner names), bounded as an image
 * may hold it, so that a save never writes what a reader refuses.
 */
public final class WalkedEntry {
  private WalkedEntry() {}

  /**
   * {@code e} flagged unreadable: a file keeps no bytes (none were read, and none are planned),
   * a directory keeps what could be listed.
   */
  static Entry unreadable(Entry e) {
    Entry flagged = e.withFlags(e.flags() | Entry.FLAG_UNREADABLE);
    if (!e.isFile()) {
      return flagged;
    }
    return new Entry(e.path(), e.type(), flagged.flags(), e.mode(), e.uid(), e.gid(),
        e.mtimeSeconds(), e.mtimeNanos(), e.ctimeSeconds(), e.ctimeNanos(), e.inode(), 0,
        e.linkTarget(), List.of(), e.meta());
  }

  /** Reads one extended attribute's value by its name; null when it has gone meanwhile. */
  @FunctionalInterface
  public interface XattrReader {
    byte[] read(byte[] name) throws IOException;
  }

  /**
   * {@code m} with the owner's and group's names as this host knows them, and the extended
   * attributes named {@code names}, sorted by name, as {@code values} reads them.
   */
  public static Meta meta(FileStat s, Meta m, List<byte[]> names, XattrReader values)
      throws IOException {
    List<Meta.Xattr> xattrs = List.of();
    if (names.size() > Meta.MAX_XATTRS) {
      throw new IOException("it has " + names.size() + " extended attributes; an image holds at"
          + " most " + Meta.MAX_XATTRS + " an entry");
    }
    if (!names.isEmpty()) {
      List<byte[]> sorted = new ArrayList<>(names);
      sorted.sort(Arrays::compareUnsigned);
      xattrs = new ArrayList<>(sorted.size());
      for (byte[] n : sorted) {
        byte[] v = values.read(n);
        if (v != null && Meta.xattrNameProblem(n) == null) {
          xattrs.add(new Meta.Xattr(n, v));
        }
      }
    }
    Meta out = new Meta(name(Accounts.userName(s.uid())), name(Accounts.groupName(s.gid())),
        xattrs, m.rdev());
    if (out.xattrBytes() > Meta.MAX_XATTR_BYTES) {
      throw new IOException("its extended attributes hold " + out.xattrBytes() + " bytes; an"
          + " image holds at most " + Meta.MAX_XATTR_BYTES + " an entry");
    }
    return out;
  }

  /** An owner's name as an image may hold it, or null (the number alone) for one it may not. */
  private static byte[] name(byte[] n) {
    return n == null || Meta.nameProblem(n) != null ? null : n;
  }

  /**
   * The catalog entry for what {@code s} describes, at {@code rel}, or {@code null} for a
   * socket, which images do not hold.
   */
  public static Entry of(FileStat s, PathBytes rel, byte[] linkTarget) {
    EntryType type;
    if (s.isDirectory()) {
      type = EntryType.DIRECTORY;
    } else if (s.isRegularFile()) {
      type = EntryType.FILE;
    } else if (s.isSymlink()) {
      type = EntryType.SYMLINK;
    } else if (s.isFifo()) {
      type = EntryType.FIFO;
    } else if (s.isCharDevice()) {
      type = EntryType.CHAR_DEVICE;
    } else if (s.isBlockDevice()) {
      type = EntryType.BLOCK_DEVICE;
    } else {
      return null;
    }
    return new Entry(
        rel,
        type,
        0,
        s.permissions(),
        s.uid(),
        s.gid(),
        s.mtimeSeconds(),
        s.mtimeNanos(),
        s.ctimeSeconds(),
        s.ctimeNanos(),
        s.inode(),
        type == EntryType.FILE ? s.size() : 0,
        linkTarget == null ? null : PathBytes.of(linkTarget),
        List.of(),
        type.isNode() ? Meta.NONE.withRdev(s.rdev()) : Meta.NONE);
  }
}

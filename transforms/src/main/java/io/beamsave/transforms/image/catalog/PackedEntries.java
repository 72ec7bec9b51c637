package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.DeviceNumber;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The entries of a version 7 catalog page (docs/image-format.md, "Packed entries"): each
 * written against the one before it in the page, so that what neighbours share costs nothing
 * before compression does its part. A path is the bytes it shares with the path before and the
 * rest; times, inodes and extents' offsets are differences, small numbers are varints. What
 * stays is what is new about an entry: its name's end, its digest, the odd time. A page starts
 * afresh, so each decodes alone. One writer or reader per page; not thread-safe.
 */
final class PackedEntries {
  private PackedEntries() {}

  /**
   * Bytes of the smallest packed entry (a directory: shared and new length, one byte of name,
   * type, flags, then a byte for each of mode, uid, gid, four times, inode and size), which
   * bounds how many entries a page of some length may claim.
   */
  static final int MIN_ENTRY = 3 + 2 + 3 + 4 + 2;

  /** Bits of an entry's metadata byte (version 9 on): what follows it. */
  static final int META_USER = 1;

  static final int META_GROUP = 2;
  static final int META_XATTRS = 4;

  /** The smallest packed extent: image, shard, offset, length, then the digest. */
  static final int MIN_EXTENT = 4 + ImageFormat.DIGEST_SIZE;

  /** What an entry is written against: the entry before it in the page. */
  private static class Previous {
    byte[] path = new byte[0];
    byte[] user;
    byte[] group;
    long mtimeSeconds;
    int mtimeNanos;
    long inode;
    int image = -1;
    int shard = -1;
    long end;

    /** The offset an extent of {@code image}'s {@code shard} is expected at. */
    long expected(int xImage, int xShard) {
      return xImage == image && xShard == shard ? end : 0;
    }
  }

  /** Writes a page's entries, each after the last. */
  static final class Writer extends Previous {
    private final DataOutputStream out;

    Writer(DataOutputStream out) {
      this.out = out;
    }

    /** Forgets what came before: the next entry starts a page. */
    void restart() {
      path = new byte[0];
      user = null;
      group = null;
      mtimeSeconds = 0;
      mtimeNanos = 0;
      inode = 0;
      image = -1;
      shard = -1;
      end = 0;
    }

    void write(Entry e) throws IOException {
      byte[] p = e.path().bytes();
      int shared = 0;
      int max = Math.min(p.length, path.length);
      while (shared < max && p[shared] == path[shared]) {
        shared++;
      }
      varint(shared);
      varint(p.length - shared);
      out.write(p, shared, p.length - shared);
      out.writeByte(e.type().code());
      out.writeByte(e.flags());
      varint(e.mode());
      varint(Integer.toUnsignedLong(e.uid()));
      varint(Integer.toUnsignedLong(e.gid()));
      signed(e.mtimeSeconds() - mtimeSeconds);
      signed(e.mtimeNanos() - mtimeNanos);
      signed(e.ctimeSeconds() - e.mtimeSeconds());
      signed(e.ctimeNanos() - e.mtimeNanos());
      signed(e.inode() - inode);
      varint(e.size());
      if (e.type() == EntryType.SYMLINK || e.isHardLink()) {
        byte[] t = e.linkTarget().bytes();
        varint(t.length);
        out.write(t);
      }
      if (e.type() == EntryType.CHAR_DEVICE || e.type() == EntryType.BLOCK_DEVICE) {
        varint(Integer.toUnsignedLong(DeviceNumber.major(e.meta().rdev())));
        varint(Integer.toUnsignedLong(DeviceNumber.minor(e.meta().rdev())));
      }
      if (e.isFile()) {
        varint(e.extents().size());
        long left = e.size();
        for (Extent x : e.extents()) {
          varint(x.image());
          varint(x.shard());
          signed(x.offset() - expected(x.image(), x.shard()));
          signed(left - x.length());
          out.write(x.digest());
          left -= x.length();
          image = x.image();
          shard = x.shard();
          end = x.offset() + x.length();
        }
      }
      writeMeta(e.meta());
      if (e.isFile()) {
        writeRanges(e.ranges());
      }
      path = p;
      mtimeSeconds = e.mtimeSeconds();
      mtimeNanos = e.mtimeNanos();
      inode = e.inode();
    }

    /** A file's range digests (version 13 on): their count, their size's shift, themselves. */
    void writeRanges(Ranges r) throws IOException {
      varint(r.count());
      if (!r.isNone()) {
        out.writeByte(r.shift());
        out.write(r.digests());
      }
    }

    /** The names where they differ from the entry before's, and the extended attributes. */
    void writeMeta(Meta m) throws IOException {
      boolean newUser = !java.util.Arrays.equals(m.user(), user);
      boolean newGroup = !java.util.Arrays.equals(m.group(), group);
      out.writeByte((newUser ? META_USER : 0) | (newGroup ? META_GROUP : 0)
          | (m.xattrs().isEmpty() ? 0 : META_XATTRS));
      if (newUser) {
        name(m.user());
      }
      if (newGroup) {
        name(m.group());
      }
      if (!m.xattrs().isEmpty()) {
        varint(m.xattrs().size());
        for (Meta.Xattr x : m.xattrs()) {
          varint(x.name().length);
          out.write(x.name());
          varint(x.value().length);
          out.write(x.value());
        }
      }
      user = m.user();
      group = m.group();
    }

    private void name(byte[] n) throws IOException {
      varint(n == null ? 0 : n.length);
      if (n != null) {
        out.write(n);
      }
    }

    private void signed(long v) throws IOException {
      varint((v << 1) ^ (v >> 63));
    }

    private void varint(long v) throws IOException {
      while ((v & ~0x7fL) != 0) {
        out.writeByte((int) (v & 0x7f) | 0x80);
        v >>>= 7;
      }
      out.writeByte((int) v);
    }
  }

  /** Reads a page's entries, each checked as a whole catalog's are. */
  static final class Reader extends Previous {
    private final CatalogInput in;
    private final int baseCount;
    /** Whether entries carry their metadata (version 9 on). */
    private final boolean meta;
    /** Whether files carry their range digests (version 13 on). */
    private final boolean ranges;
    /** The bytes of the page's paths read so far, whole. */
    private long pathBytes;

    Reader(CatalogInput in, int baseCount, boolean meta, boolean ranges) {
      this.in = in;
      this.baseCount = baseCount;
      this.meta = meta;
      this.ranges = ranges;
    }

    /** Reads the next entry, entry {@code index} of the catalog. */
    Entry read(long index) throws ImageException {
      byte[] p;
      try {
        p = path();
      } catch (ImageException e) {
        throw CatalogReader.named(e, index, null);
      }
      PathBytes named = PathBytes.wrap(p);
      try {
        Entry e = read(named);
        path = p;
        mtimeSeconds = e.mtimeSeconds();
        mtimeNanos = e.mtimeNanos();
        inode = e.inode();
        user = e.meta().user();
        group = e.meta().group();
        return e;
      } catch (ImageException e) {
        throw CatalogReader.named(e, index, named);
      }
    }

    /** The next path, from what it shares with the one before and the rest. */
    private byte[] path() throws ImageException {
      String where = CatalogReader.ENTRY + " path";
      long shared = in.varint(where, path.length);
      long rest = in.varint(where, CatalogPaths.MAX_NAME_BYTES - shared);
      if (rest == 0) {
        // A path is after the one before it in path order, so never a prefix of it.
        throw in.fail(where + " is the path before it, or a part of it");
      }
      pathBytes += shared + rest;
      if (pathBytes > ImageFormat.MAX_PAGE_PATHS) {
        // Shared bytes cost nothing in the page: what its paths take whole is bounded apart.
        throw in.fail(where + " takes the page's paths past " + ImageFormat.MAX_PAGE_PATHS
            + " bytes");
      }
      byte[] p = new byte[(int) (shared + rest)];
      System.arraycopy(path, 0, p, 0, (int) shared);
      in.need((int) rest, where);
      in.b.get(p, (int) shared, (int) rest);
      return p;
    }

    private Entry read(PathBytes p) throws ImageException {
      String where = CatalogReader.ENTRY;
      EntryType type = EntryType.fromCode(in.uint8(where + " type"));
      if (type == null || (!meta && !type.before9())) {
        throw in.fail(where + ": unknown type");
      }
      int flags = in.uint8(where + " flags");
      int mode = (int) in.varint(where + " mode", 0xffff_ffffL);
      int uid = (int) in.varint(where + " uid", 0xffff_ffffL);
      int gid = (int) in.varint(where + " gid", 0xffff_ffffL);
      long mtime = mtimeSeconds + in.signedVarint(where + " mtime");
      long nanos = mtimeNanos + in.signedVarint(where + " mtime");
      long ctime = mtime + in.signedVarint(where + " ctime");
      long cnanos = nanos + in.signedVarint(where + " ctime");
      if (nanos != (int) nanos || cnanos != (int) cnanos) {
        throw in.fail(where + ": invalid time");
      }
      long ino = inode + in.signedVarint(where + " inode");
      long size = in.varint(where + " size", Long.MAX_VALUE);
      CatalogReader.checkFields(in, type, flags, mode, uid, gid, (int) nanos, (int) cnanos, size);
      PathBytes target = null;
      List<Extent> extents = List.of();
      if (type == EntryType.SYMLINK) {
        long n = in.varint(where + " symlink target", CatalogPaths.MAX_NAME_BYTES);
        target = CatalogReader.checkTarget(in,
            PathBytes.wrap(in.bytes((int) n, where + " symlink target")));
      }
      if (type == EntryType.HARDLINK) {
        long n = in.varint(where + " link target", CatalogPaths.MAX_NAME_BYTES);
        target = PathBytes.wrap(in.bytes((int) n, where + " link target"));
        String problem = CatalogPaths.problem(target);
        if (problem != null || PathOrder.compare(target, p) >= 0) {
          // A link's file comes first: a restore in path order has made it by then.
          throw in.fail(where + ": hard link to '" + target + "', "
              + (problem != null ? problem : "not an entry before it"));
        }
      }
      long rdev = 0;
      if (type == EntryType.CHAR_DEVICE || type == EntryType.BLOCK_DEVICE) {
        long major = in.varint(where + " device major", 0xffff_ffffL);
        long minor = in.varint(where + " device minor", 0xffff_ffffL);
        rdev = DeviceNumber.of(major, minor);
      }
      if (type == EntryType.FILE) {
        long n = in.varint(where + " extent count", in.b.remaining() / MIN_EXTENT);
        extents = new ArrayList<>((int) n);
        long left = size;
        for (int k = 0; k < n; k++) {
          int source = (int) in.varint(where + " extent", baseCount);
          int xShard = (int) in.varint(where + " extent", Integer.MAX_VALUE);
          long offset = expected(source, xShard) + in.signedVarint(where + " extent");
          long length = left - in.signedVarint(where + " extent");
          if (offset < 0 || length < 0) {
            throw in.fail(where + " extent is out of range");
          }
          byte[] digest = in.bytes(ImageFormat.DIGEST_SIZE, where + " digest");
          extents.add(new Extent(source, xShard, offset, length, digest));
          left -= length;
          image = source;
          shard = xShard;
          end = offset + length;
        }
      }
      Meta m = meta ? readMeta(rdev, where + " metadata") : Meta.NONE;
      Ranges r = ranges && type == EntryType.FILE ? readRanges(size, where + " ranges")
          : Ranges.NONE;
      return new Entry(p, type, flags, mode, uid, gid, mtime, (int) nanos, ctime, (int) cnanos,
          ino, size, target, extents, m, r);
    }

    /**
     * A file's range digests: none, or exactly one per range of its size, of a size between the
     * smallest and the largest block, for a file of more than one range.
     */
    Ranges readRanges(long size, String where) throws ImageException {
      long n = in.varint(where, in.b.remaining() / Ranges.DIGEST_SIZE);
      if (n == 0) {
        return Ranges.NONE;
      }
      int shift = in.uint8(where + " size");
      if (shift < Ranges.MIN_SHIFT || shift > Ranges.MAX_SHIFT) {
        throw in.fail(where + ": ranges of 2^" + shift + " bytes");
      }
      if (!Ranges.recordedFor(size, shift) || n != Ranges.countFor(size, shift)) {
        throw in.fail(where + ": " + n + " ranges of 2^" + shift + " bytes for a file of "
            + size + " bytes");
      }
      return new Ranges(shift, in.bytes((int) n * Ranges.DIGEST_SIZE, where));
    }

    /** An entry's metadata byte and what follows it; {@code where} names it in errors. */
    Meta readMeta(long rdev, String where) throws ImageException {
      int bits = in.uint8(where);
      if ((bits & ~(META_USER | META_GROUP | META_XATTRS)) != 0) {
        throw in.fail(where + ": unknown bits " + Integer.toHexString(bits));
      }
      byte[] u = (bits & META_USER) != 0 ? name(where + " user name") : user;
      byte[] g = (bits & META_GROUP) != 0 ? name(where + " group name") : group;
      List<Meta.Xattr> xattrs = List.of();
      if ((bits & META_XATTRS) != 0) {
        long n = in.varint(where + " xattr count", Meta.MAX_XATTRS);
        if (n == 0 || n > in.b.remaining() / 3) {
          throw in.fail(where + ": " + n + " extended attributes");
        }
        xattrs = new ArrayList<>((int) n);
        byte[] last = null;
        long bytes = 0;
        for (int k = 0; k < n; k++) {
          long nl = in.varint(where + " xattr name", Meta.MAX_XATTR_NAME);
          byte[] name = in.bytes((int) nl, where + " xattr name");
          String problem = Meta.xattrNameProblem(name);
          if (problem == null && last != null
              && java.util.Arrays.compareUnsigned(last, name) >= 0) {
            problem = "it is not after the one before";
          }
          if (problem != null) {
            throw in.fail(where + ": extended attribute name "
                + io.beamsave.transforms.Printable.bytes(name) + ": " + problem);
          }
          long vl = in.varint(where + " xattr value", Meta.MAX_XATTR_VALUE);
          bytes += vl;
          if (bytes > Meta.MAX_XATTR_BYTES) {
            throw in.fail(where + ": extended attributes of more than " + Meta.MAX_XATTR_BYTES
                + " bytes");
          }
          xattrs.add(new Meta.Xattr(name, in.bytes((int) vl, where + " xattr value")));
          last = name;
        }
      }
      return new Meta(u, g, xattrs, rdev);
    }

    /** An owner's or group's name, or null for none. */
    private byte[] name(String where) throws ImageException {
      long n = in.varint(where, Meta.MAX_NAME);
      if (n == 0) {
        return null;
      }
      byte[] name = in.bytes((int) n, where);
      String problem = Meta.nameProblem(name);
      if (problem != null) {
        throw in.fail(where + " " + io.beamsave.transforms.Printable.bytes(name) + ": " + problem);
      }
      return name;
    }
  }
}

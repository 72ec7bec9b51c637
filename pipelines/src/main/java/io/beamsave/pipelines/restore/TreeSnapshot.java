package io.beamsave.pipelines.restore;

import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.IOException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * A comparable description of a directory tree: per relative path (printable, {@code .} for the
 * top) its type, permission bits, mtime to the nanosecond, owner when run as root, size and
 * content digest (files), target (symlinks) or device number (devices), its extended attributes
 * (ACLs and capabilities among them), and for a file of several names in the tree, those names.
 * Names are read as bytes, nothing is followed.
 * Two trees are identical, for a restore, when their snapshots are equal; {@link #diff} says
 * where they are not.
 */
public record TreeSnapshot(Map<String, String> entries) {

  public static TreeSnapshot of(Path root) throws IOException {
    Map<String, String> out = new TreeMap<>();
    boolean owners = Dir.effectiveUid() == 0;
    Map<String, java.util.TreeSet<String>> names = new TreeMap<>();
    try (Dir dir = Dir.open(root)) {
      out.put(".", describe(dir.stat(), owners, xattrs(dir.xattrNames(), dir::xattr)));
      walk(dir, PathBytes.of(new byte[0]), owners, out, names);
    }
    for (java.util.TreeSet<String> group : names.values()) {
      if (group.size() > 1) {
        for (String p : group) {
          out.put(p, out.get(p) + " names=" + group);
        }
      }
    }
    return new TreeSnapshot(out);
  }

  /** Reads one extended attribute's value by name. */
  private interface Value {
    byte[] of(byte[] name) throws IOException;
  }

  private static String xattrs(java.util.List<byte[]> names, Value values) throws IOException {
    java.util.TreeMap<String, String> all = new java.util.TreeMap<>();
    for (byte[] n : names) {
      byte[] v = values.of(n);
      all.put(PathBytes.of(n).toString(), v == null ? "gone" : HexFormat.of().formatHex(v));
    }
    return all.isEmpty() ? "" : " xattrs=" + all;
  }

  private static void walk(Dir dir, PathBytes rel, boolean owners, Map<String, String> out,
      Map<String, java.util.TreeSet<String>> names) throws IOException {
    for (byte[] name : dir.list()) {
      PathBytes path = rel.child(name);
      FileStat s = dir.stat(name);
      String extra = "";
      if (s.isRegularFile()) {
        try (OpenFile f = dir.openRead(name)) {
          extra = " size=" + s.size() + " sha256=" + sha(f);
        }
        names.computeIfAbsent(s.device() + ":" + s.inode(), k -> new java.util.TreeSet<>())
            .add(path.toString());
      } else if (s.isSymlink()) {
        extra = " -> " + PathBytes.of(dir.readLink(name));
      } else if (s.isCharDevice() || s.isBlockDevice()) {
        extra = " rdev=" + Long.toHexString(s.rdev());
      }
      out.put(path.toString(), describe(s, owners,
          extra + xattrs(dir.xattrNames(name), n -> dir.xattr(name, n))));
      if (s.isDirectory()) {
        try (Dir sub = dir.openDir(name)) {
          walk(sub, path, owners, out, names);
        }
      }
    }
  }

  private static String describe(FileStat s, boolean owners, String extra) {
    String type = s.isDirectory() ? "dir" : s.isSymlink() ? "link" : s.isRegularFile() ? "file"
        : s.isFifo() ? "fifo" : s.isCharDevice() ? "chardev" : s.isBlockDevice() ? "blockdev"
        : "special";
    return type
        + (s.isSymlink() ? "" : " mode=" + Integer.toOctalString(s.permissions()))
        + (owners ? " owner=" + s.uid() + ":" + s.gid() : "")
        + " mtime=" + s.mtimeSeconds() + "." + String.format("%09d", s.mtimeNanos())
        + extra;
  }

  private static String sha(OpenFile f) throws IOException {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      byte[] buf = new byte[1 << 16];
      long pos = 0;
      for (int n; (n = f.read(pos, buf, 0, buf.length)) > 0; pos += n) {
        md.update(buf, 0, n);
      }
      return HexFormat.of().formatHex(md.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The first difference from {@code other}, or {@code null} if the trees are identical. */
  public String diff(TreeSnapshot other) {
    for (Map.Entry<String, String> e : entries.entrySet()) {
      String theirs = other.entries.get(e.getKey());
      if (!e.getValue().equals(theirs)) {
        return e.getKey() + ": " + e.getValue() + " vs " + (theirs == null ? "missing" : theirs);
      }
    }
    for (String k : other.entries.keySet()) {
      if (!entries.containsKey(k)) {
        return k + ": missing vs " + other.entries.get(k);
      }
    }
    return null;
  }
}

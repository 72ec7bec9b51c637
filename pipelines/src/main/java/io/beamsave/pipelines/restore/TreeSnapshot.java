package io.beamsave.pipelines.restore;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * A comparable description of a directory tree: per relative path its type, permission bits,
 * size, mtime and content digest (or symlink target). Two trees are identical, for a restore,
 * when their snapshots are equal; {@link #diff} says where they are not.
 */
public record TreeSnapshot(Map<String, String> entries) {

  public static TreeSnapshot of(Path root) throws IOException {
    Map<String, String> out = new TreeMap<>();
    Files.walkFileTree(
        root,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes a)
              throws IOException {
            if (!dir.equals(root)) {
              out.put(rel(dir), "dir " + meta(dir, a));
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
            if (a.isSymbolicLink()) {
              out.put(rel(f), "link -> " + Files.readSymbolicLink(f));
            } else if (a.isRegularFile()) {
              out.put(rel(f), "file " + meta(f, a) + " size=" + a.size() + " sha256=" + sha(f));
            }
            return FileVisitResult.CONTINUE;
          }

          private String rel(Path p) {
            return root.relativize(p).toString();
          }
        });
    return new TreeSnapshot(out);
  }

  private static String meta(Path p, BasicFileAttributes a) throws IOException {
    int mode = (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
    return "mode=" + Integer.toOctalString(mode) + " mtime=" + a.lastModifiedTime().toInstant();
  }

  private static String sha(Path f) throws IOException {
    try (InputStream in = Files.newInputStream(f)) {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      byte[] buf = new byte[1 << 16];
      for (int n; (n = in.read(buf)) > 0; ) {
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

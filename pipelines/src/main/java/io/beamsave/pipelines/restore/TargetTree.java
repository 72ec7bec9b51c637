package io.beamsave.pipelines.restore;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.EntryType;
import io.beamsave.transforms.image.CatalogCodec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The restore's target directory: before the data is written, creates every directory and an
 * empty file of the right size for every file (checking on the way that nothing is written
 * through a symbolic link, whether from the image or already on disk); afterwards creates the
 * symlinks and sets modes, owners (when running as root) and mtimes, directories last.
 */
final class TargetTree {
  private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
  private final Path root;
  private final boolean overwrite;

  private TargetTree(Path root, boolean overwrite) {
    this.root = root;
    this.overwrite = overwrite;
  }

  static TargetTree prepare(Path target, List<Entry> entries, boolean overwrite) {
    try {
      if (Files.exists(target)) {
        if (!Files.isDirectory(target)) {
          throw new BeamsaveException("target " + target + " is not a directory");
        }
        if (!overwrite && !isEmpty(target)) {
          throw new BeamsaveException(
              "target " + target + " is not empty; use --overwrite to restore into it");
        }
      } else {
        Files.createDirectories(target);
      }
      TargetTree tree = new TargetTree(target.toRealPath(), overwrite);
      List<Entry> sorted = new ArrayList<>(entries);
      sorted.sort(Comparator.comparing(Entry::path));
      for (Entry e : sorted) {
        tree.create(e);
      }
      return tree;
    } catch (IOException e) {
      throw BeamsaveException.io("cannot prepare target", target, e);
    }
  }

  Path root() {
    return root;
  }

  private Path resolve(Entry e) throws IOException {
    String problem = CatalogCodec.pathProblem(e.path());
    if (problem != null) {
      throw new BeamsaveException("refusing to restore '" + e.path() + "': path " + problem);
    }
    Path p = root.resolve(e.path()).normalize();
    if (!p.startsWith(root) || p.equals(root)) {
      throw new BeamsaveException("refusing to restore '" + e.path() + "': outside the target");
    }
    for (Path dir = p.getParent(); !dir.equals(root); dir = dir.getParent()) {
      if (!Files.isDirectory(dir, NOFOLLOW)) {
        throw new BeamsaveException(
            "refusing to restore " + p + ": " + dir + " is not a directory (a symlink?)");
      }
    }
    return p;
  }

  private void create(Entry e) throws IOException {
    Path p = resolve(e);
    boolean exists = Files.exists(p, NOFOLLOW);
    boolean isDir = exists && Files.isDirectory(p, NOFOLLOW);
    if (e.type() == EntryType.DIRECTORY) {
      if (isDir) {
        return;
      }
      removeExisting(p, exists);
      Files.createDirectory(p);
      return;
    }
    if (isDir) {
      throw new BeamsaveException("cannot restore " + p + ": a directory is in the way");
    }
    removeExisting(p, exists);
    if (e.type() == EntryType.FILE) {
      try (FileChannel ch =
          FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, NOFOLLOW)) {
        if (e.size() > 0) {
          // Sets the size and leaves a hole; zero blocks are never written (sparse files).
          ch.write(ByteBuffer.wrap(new byte[1]), e.size() - 1);
        }
      }
    }
  }

  private void removeExisting(Path p, boolean exists) throws IOException {
    if (!exists) {
      return;
    }
    if (!overwrite) {
      throw new BeamsaveException(p + " already exists; use --overwrite to replace it");
    }
    Files.delete(p);
  }

  /** Creates the symlinks and sets metadata; directories last, deepest first. */
  void finish(List<Entry> entries) {
    boolean root = isRoot();
    List<Entry> dirs = new ArrayList<>();
    for (Entry e : entries) {
      Path p = this.root.resolve(e.path());
      try {
        switch (e.type()) {
          case SYMLINK:
            resolve(e);
            Files.createSymbolicLink(p, Path.of(e.linkTarget()));
            if (root) {
              setOwner(p, e);
            }
            break;
          case FILE:
            setMetadata(p, e, root);
            break;
          default:
            dirs.add(e);
        }
      } catch (IOException x) {
        throw BeamsaveException.io("cannot restore", p, x);
      }
    }
    dirs.sort(Comparator.comparing(Entry::path).reversed());
    for (Entry e : dirs) {
      Path p = this.root.resolve(e.path());
      try {
        setMetadata(p, e, root);
      } catch (IOException x) {
        throw BeamsaveException.io("cannot set metadata of", p, x);
      }
    }
  }

  private static void setMetadata(Path p, Entry e, boolean root) throws IOException {
    if (root) {
      setOwner(p, e);
    }
    Files.setAttribute(p, "unix:mode", e.mode(), NOFOLLOW);
    Files.setLastModifiedTime(
        p, FileTime.from(Instant.ofEpochSecond(e.mtimeSeconds(), e.mtimeNanos())));
  }

  private static void setOwner(Path p, Entry e) throws IOException {
    Files.setAttribute(p, "unix:uid", e.uid(), NOFOLLOW);
    Files.setAttribute(p, "unix:gid", e.gid(), NOFOLLOW);
  }

  private static boolean isRoot() {
    try {
      return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return false;
    }
  }

  private static boolean isEmpty(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.findAny().isEmpty();
    }
  }
}

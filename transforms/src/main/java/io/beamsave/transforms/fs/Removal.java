package io.beamsave.transforms.fs;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The one way beamsave removes a tree: beneath an open directory handle, one name at a time
 * ({@code unlinkat} relative to the handle of the directory that holds it), never following a
 * link and never leaving the mount the removal began on. A directory is opened without following
 * a link, emptied through that handle and then removed by its name in its parent; one swapped
 * for a link meanwhile is removed as the link, and one renamed away meanwhile was emptied where
 * it was, inside the tree. A directory on another mount (a mount point, bind mounts included:
 * the mount ids are compared) is neither entered nor removed: it is noted in {@link
 * #mountsLeft}, and whatever holds it stays. A path is never resolved again once the removal
 * holds its directory's handle, so whoever may rename or swap things inside the tree cannot
 * point the removal anywhere else. Not thread-safe: one removal at a time.
 */
public final class Removal {
  /** Told of each entry as it is removed (or, in a dry run, would be), deepest first. */
  @FunctionalInterface
  public interface Listener {
    /** {@code path} is relative to where the removal was asked to begin, as bytes. */
    void removing(byte[] path, boolean directory);
  }

  /** Attempts at one name that keeps changing under the removal. */
  private static final int ATTEMPTS = 5;
  /** Directories deeper than this are refused: each level holds a descriptor while emptied. */
  static final int MAX_DEPTH = 4096;

  private final FileStat top;
  private final boolean dryRun;
  private final Listener listener;
  private final List<String> mountsLeft = new ArrayList<>();
  private long removed;
  /** Where the removal under way began, for a message about what lies deep beneath it. */
  private String begun;

  private Removal(FileStat top, boolean dryRun, Listener listener) {
    this.top = top;
    this.dryRun = dryRun;
    this.listener = listener;
  }

  /** A removal that stays on the mount of {@code dir}, the directory it will work beneath. */
  public static Removal within(Dir dir) throws IOException {
    return new Removal(dir.stat(), false, null);
  }

  /** This removal, telling {@code l} of each entry it removes. */
  public Removal listening(Listener l) {
    return new Removal(top, dryRun, l);
  }

  /** This removal as a dry run: it looks, counts and tells, and removes nothing. */
  public Removal dryRun() {
    return new Removal(top, true, listener);
  }

  /** Entries removed so far (or, in a dry run, that would be). */
  public long removed() {
    return removed;
  }

  /** The mount points met and left, as printable paths. */
  public List<String> mountsLeft() {
    return List.copyOf(mountsLeft);
  }

  /**
   * Removes {@code name} in {@code parent}: a file, link or other entry, or a directory with
   * everything beneath it that is on this removal's mount. {@code path} is how the listener is
   * told of it (its path relative to where the caller began). Whether anything was there.
   */
  public boolean tree(Dir parent, byte[] name, byte[] path) throws IOException {
    begun = parent.child(name);
    return Deep.run(() -> remove(parent, name, path, 0));
  }

  /** Removes everything in {@code dir} (on this removal's mount), leaving {@code dir} itself. */
  public void contents(Dir dir) throws IOException {
    FileStat s = dir.stat();
    if (!s.sameMount(top)) {
      mountsLeft.add(dir.name());
      return;
    }
    begun = dir.name();
    Deep.run(() -> {
      for (byte[] c : dir.list()) {
        remove(dir, c, c, 1);
      }
      return null;
    });
  }

  private boolean remove(Dir parent, byte[] name, byte[] path, int depth) throws IOException {
    IOException last = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      FileStat s;
      try {
        s = parent.stat(name);
      } catch (NoSuchFileException gone) {
        return false;
      }
      try {
        if (!s.isDirectory()) {
          if (!dryRun) {
            parent.delete(name);
          }
          counted(path, false);
          return true;
        }
        if (depth >= MAX_DEPTH) {
          throw new Failed("cannot remove " + begun + ": directories in it nest more than "
              + MAX_DEPTH + " deep", null);
        }
        int mountsBefore = mountsLeft.size();
        if (!s.sameMount(top)) {
          mountsLeft.add(parent.child(name));
          return false;
        }
        try (Dir sub = parent.openDir(name)) {
          if (!sub.stat().sameMount(top)) {
            // Swapped for a directory on another mount between the stat and the open.
            mountsLeft.add(parent.child(name));
            return false;
          }
          // In byte order: what a dry run lists, and what a removal tells, is the same each time.
          List<byte[]> names = new ArrayList<>(sub.list());
          names.sort(Arrays::compareUnsigned);
          for (byte[] c : names) {
            remove(sub, c, child(path, c), depth + 1);
          }
        }
        if (mountsLeft.size() > mountsBefore) {
          return false; // What holds a mount point stays.
        }
        if (!dryRun) {
          parent.deleteDirectory(name);
        }
        counted(path, true);
        return true;
      } catch (Failed | java.nio.file.AccessDeniedException given) {
        throw given;
      } catch (IOException changed) {
        // Swapped for a link or another kind of entry, gone, or filled again while it was
        // removed: the next attempt looks at what is there now.
        last = changed;
      }
    }
    throw new Failed("cannot remove " + parent.child(name) + ": it keeps changing ("
        + last.getMessage() + ")", last);
  }

  /** A removal that failed beneath where it was: not tried again by the directories above. */
  private static final class Failed extends IOException {
    Failed(String message, IOException cause) {
      super(message, cause);
    }
  }

  private void counted(byte[] path, boolean directory) {
    removed++;
    if (listener != null) {
      listener.removing(path, directory);
    }
  }

  private static byte[] child(byte[] path, byte[] name) {
    byte[] out = Arrays.copyOf(path, path.length + 1 + name.length);
    out[path.length] = '/';
    System.arraycopy(name, 0, out, path.length + 1, name.length);
    return out;
  }

  /**
   * Removes {@code path}, a directory with everything beneath it or any other entry, if it is
   * there. The directories leading to it are taken as {@code cd} would take them, as paths the
   * program made or the operator gave are; from its parent's handle on nothing is followed. A
   * mount point beneath it fails the removal, naming it, after the rest is removed.
   */
  public static void tree(Path path) throws IOException {
    Path abs = path.toAbsolutePath();
    Path parent = abs.getParent();
    if (parent == null) {
      throw new IOException("refusing to remove " + abs);
    }
    byte[] name = lastName(abs);
    try (Dir p = Dir.open(parent)) {
      Removal r = within(p);
      r.tree(p, name, name);
      if (!r.mountsLeft.isEmpty()) {
        throw new IOException("cannot remove " + abs + ": " + r.mountsLeft.get(0)
            + " beneath it is a mount point, left as it is");
      }
    } catch (NoSuchFileException nothing) {
      // Nothing there to remove.
    }
  }

  /**
   * Removes {@code path} if it is there and is not a directory (a file, link or node, never
   * followed); the directories leading to it are taken as {@code cd} would. Whether it was
   * there.
   */
  public static boolean file(Path path) throws IOException {
    Path abs = path.toAbsolutePath();
    Path parent = abs.getParent();
    if (parent == null) {
      throw new IOException("refusing to remove " + abs);
    }
    try (Dir p = Dir.open(parent)) {
      byte[] name = lastName(abs);
      if (p.stat(name).isDirectory()) {
        throw new IOException("cannot remove " + abs + ": it is a directory");
      }
      p.delete(name);
      return true;
    } catch (NoSuchFileException nothing) {
      return false;
    }
  }

  /**
   * Removes {@code path} if it is an empty directory (never a link to one); whether it did. One
   * that holds something, or is not there, is left.
   */
  public static boolean emptyDirectory(Path path) throws IOException {
    Path abs = path.toAbsolutePath();
    Path parent = abs.getParent();
    if (parent == null) {
      return false;
    }
    try (Dir p = Dir.open(parent)) {
      p.deleteDirectory(lastName(abs));
      return true;
    } catch (NoSuchFileException | java.nio.file.DirectoryNotEmptyException
        | java.nio.file.NotDirectoryException left) {
      return false;
    }
  }

  /** The last component of absolute {@code path}, as the kernel knows it. */
  static byte[] lastName(Path abs) {
    byte[] all = Dir.bytesOf(abs);
    int slash = all.length - 1;
    while (slash >= 0 && all[slash] != '/') {
      slash--;
    }
    byte[] name = Arrays.copyOfRange(all, slash + 1, all.length);
    if (name.length == 0 || Dir.isDotOrDotDot(name)) {
      throw new IllegalArgumentException("not a file name: " + abs);
    }
    return name;
  }
}

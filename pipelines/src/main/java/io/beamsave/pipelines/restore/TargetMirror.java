package io.beamsave.pipelines.restore;

import io.beamsave.pipelines.transfer.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.SymlinkException;
import io.beamsave.transforms.image.CatalogCursor;
import io.beamsave.transforms.image.CatalogHead;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.EntryType;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.image.PathOrder;
import io.beamsave.transforms.read.ImageSources;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code restore --delete}: removes from the target what the image does not hold, so that the
 * target ends up the image's tree. The target is walked through directory handles opened
 * without following links, side by side with the catalog (both in {@link PathOrder}, a page of
 * entries held at a time): a name the image lacks is removed, a directory with all beneath it;
 * a symbolic link is removed as a link, never followed, and a directory swapped for a link
 * while it is being emptied is removed as the link. Nothing outside the target is touched.
 */
public final class TargetMirror {
  /** Attempts at one name that keeps changing under the removal. */
  private static final int ATTEMPTS = 5;

  private final boolean remove;
  private long removed;
  private PathBytes first;
  private CatalogCursor cursor;
  private Entry next;

  private TargetMirror(boolean remove) {
    this.remove = remove;
  }

  /** What was (or, in a dry run, would be) removed: entries, the first of them. */
  public record Removed(long entries, PathBytes first) {}

  /**
   * Removes from {@code target} every entry {@code image}'s tree lacks; with {@code remove}
   * false only counts them.
   */
  public static Removed run(ImageRef image, Path target, boolean remove) {
    TargetMirror m = new TargetMirror(remove);
    try (ImageSource src = ImageSources.open(image.location(), image.s3())) {
      CatalogHead head = ImageReader.readHead(src, image.keys(), false);
      m.cursor = new CatalogCursor(src, head);
      m.next = m.cursor.next();
      boolean changed = false;
      try (Dir top = Dir.open(target)) {
        changed = m.walk(top, PathBytes.of(new byte[0]));
      } catch (NoSuchFileException nothingYet) {
        // A dry run into a target that does not exist removes nothing.
      }
      Entry root = head.catalog().root();
      Path parent = target.toAbsolutePath().getParent();
      if (changed && remove && root != null && parent != null) {
        // Removing names changed the top's mtime, which the restore had set as saved.
        try (Dir up = Dir.open(parent)) {
          up.setLinkModified(Dir.bytesOf(target.toAbsolutePath().getFileName()),
              root.mtimeSeconds(), root.mtimeNanos());
        }
      }
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
    return new Removed(m.removed, m.first);
  }

  /** Walks {@code dir}; whether anything directly in it was removed (its mtime changed). */
  private boolean walk(Dir dir, PathBytes rel) throws IOException {
    boolean changed = false;
    List<byte[]> names = new ArrayList<>(dir.list());
    names.sort(Arrays::compareUnsigned);
    for (byte[] name : names) {
      PathBytes p = rel.child(name);
      while (next != null && PathOrder.compare(next.path(), p) < 0) {
        next = cursor.next();
      }
      boolean held = next != null && next.path().equals(p);
      if (!held) {
        changed |= clear(dir, name, p);
        continue;
      }
      Entry e = next;
      boolean imageDir = e.type() == EntryType.DIRECTORY;
      next = cursor.next();
      if (!imageDir) {
        continue;
      }
      FileStat s = stat(dir, name);
      if (s == null || !s.isDirectory()) {
        continue;
      }
      boolean inside = false;
      try (Dir sub = dir.openDir(name)) {
        inside = walk(sub, p);
      } catch (SymlinkException | NoSuchFileException swapped) {
        // Replaced while we looked: not a directory of the image's any more; left as found.
      }
      if (inside && remove) {
        dir.setLinkModified(name, e.mtimeSeconds(), e.mtimeNanos());
      }
    }
    return changed;
  }

  private static FileStat stat(Dir dir, byte[] name) throws IOException {
    try {
      return dir.stat(name);
    } catch (NoSuchFileException gone) {
      return null;
    }
  }

  /**
   * Removes {@code name} (a directory with all beneath it), or counts it in a dry run; whether
   * there was anything to remove.
   */
  private boolean clear(Dir dir, byte[] name, PathBytes p) throws IOException {
    for (int attempt = 1; ; attempt++) {
      FileStat s = stat(dir, name);
      if (s == null) {
        return false;
      }
      try {
        if (s.isDirectory()) {
          try (Dir sub = dir.openDir(name)) {
            for (byte[] c : sub.list()) {
              clear(sub, c, p.child(c));
            }
          }
          if (remove) {
            dir.deleteDirectory(name);
          }
        } else if (remove) {
          dir.delete(name);
        }
        if (removed++ == 0) {
          first = p;
        }
        return true;
      } catch (SymlinkException | NoSuchFileException changed) {
        // Swapped for a link, or gone, while it was emptied: looked at again.
      } catch (IOException e) {
        if (stat(dir, name) == null) {
          return true;
        }
        if (attempt >= ATTEMPTS) {
          throw BeamsaveException.io("cannot remove", dir.child(name), e);
        }
      }
      if (attempt >= ATTEMPTS) {
        throw new BeamsaveException("cannot remove " + dir.child(name) + ": it keeps changing");
      }
    }
  }
}

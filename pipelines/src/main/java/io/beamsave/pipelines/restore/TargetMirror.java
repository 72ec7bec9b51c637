package io.beamsave.pipelines.restore;

import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.fs.SymlinkException;
import io.beamsave.transforms.image.CatalogCursor;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.read.ImageSources;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * {@code restore --delete}: removes from the target what the image does not hold, so that the
 * target ends up the image's tree. It works beneath the handle of the target that the restore
 * itself resolved, opened and wrote (never the target's path again, which whoever owns a
 * directory on it could have pointed elsewhere since), walking it side by side with the catalog
 * (both in {@link PathOrder}, a page of entries held at a time), and removes through {@link
 * Removal}: links as links, nothing on another mount. It never removes beneath a directory the
 * save could not wholly list ({@code d?}: what the image lacks there may be what the save could
 * not read), and a mount point the image records as a directory is left as it is: both are
 * told. Not thread-safe: the driver's, once the restore is done.
 */
public final class TargetMirror {
  private final boolean remove;
  private final Consumer<PathBytes> told;
  private Removal removal;
  private long removed;
  private PathBytes first;
  private final List<String> mountsLeft = new ArrayList<>();
  private long kept;
  private PathBytes firstKept;
  private CatalogCursor cursor;
  private Entry next;

  private TargetMirror(boolean remove, Consumer<PathBytes> told) {
    this.remove = remove;
    this.told = told;
  }

  /**
   * What was (or, in a dry run, would be) removed: entries and the first of them; the mount
   * points left as they are; what was kept beneath directories the save could not wholly list.
   */
  public record Removed(long entries, PathBytes first, List<String> mountsLeft, long kept,
      PathBytes firstKept) {}

  /**
   * Refuses a {@code --delete} that could empty more than a restore's tree: into {@code /}, or
   * into the root of a mounted file system reached through a link ({@code given} does not name
   * {@code real}, where the links led): a link someone re-pointed, or a typo, must not empty a
   * file system. {@code noPreserveRoot}: the operator asked for it in so many words.
   */
  static void refuseUnsafe(Path given, Path real, FileStat top, boolean noPreserveRoot) {
    if (noPreserveRoot) {
      return;
    }
    refuseRoot(given, real, false);
    if (top.mountRoot() && !given.toAbsolutePath().normalize().equals(real)) {
      throw new BeamsaveException("refusing --delete into " + given + ": it leads through a"
          + " link to " + real + ", the root of a mounted file system; name " + real
          + " itself, or add --no-preserve-root");
    }
  }

  /**
   * Refuses a {@code --delete} into {@code /} ({@code real}, where {@code given} leads), unless
   * {@code noPreserveRoot}: checked before anything else a restore would say of the target.
   */
  static void refuseRoot(Path given, Path real, boolean noPreserveRoot) {
    if (!noPreserveRoot && real.getParent() == null) {
      throw new BeamsaveException("refusing --delete into " + given + ": it would remove from"
          + " the whole system what the image does not hold; add --no-preserve-root if that is"
          + " what you mean");
    }
  }

  /**
   * Removes from the target whose handle is {@code root} every entry {@code image}'s tree lacks;
   * {@code told} hears of each as it goes.
   */
  static Removed run(ImageRef image, Dir root, Consumer<PathBytes> told) {
    return new TargetMirror(true, told).walkTop(image, root);
  }

  /**
   * What {@link #run} would remove from {@code target} ({@code --dry-run}): nothing is removed,
   * and the refusals a restore makes first are made. {@code told} hears of each entry.
   */
  public static Removed dryRun(ImageRef image, Path target, boolean noPreserveRoot,
      Consumer<PathBytes> told) {
    try (Dir top = Dir.open(target)) {
      refuseUnsafe(target, target.toRealPath(), top.stat(), noPreserveRoot);
      return new TargetMirror(false, told).walkTop(image, top);
    } catch (NoSuchFileException nothingYet) {
      return new Removed(0, null, List.of(), 0, null);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read restore target", target, e);
    }
  }

  private Removed walkTop(ImageRef image, Dir top) {
    try (ImageSource src = ImageSources.open(image.location(), image.s3())) {
      CatalogHead head = ImageReader.readHead(src, image.keys(), false);
      cursor = new CatalogCursor(src, head);
      next = cursor.next();
      removal = Removal.within(top).listening(this::removing);
      if (!remove) {
        removal = removal.dryRun();
      }
      Entry root = head.catalog().root();
      // On a stack deep enough for what the target holds: one removal there may go 4,096 deep.
      boolean changed = io.beamsave.transforms.fs.Deep.run(() ->
          walk(top, PathBytes.of(new byte[0]), root == null || !root.unreadable()));
      mountsLeft.addAll(removal.mountsLeft());
      if (changed && remove && root != null) {
        // Removing names changed the top's mtime, which the restore had set as saved.
        top.setModified(root.mtimeSeconds(), root.mtimeNanos());
      }
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
    return new Removed(removed, first, List.copyOf(mountsLeft), kept, firstKept);
  }

  private void removing(byte[] path, boolean directory) {
    PathBytes p = PathBytes.of(path);
    if (removed++ == 0) {
      first = p;
    }
    if (told != null) {
      told.accept(p);
    }
  }

  /**
   * Walks {@code dir} at {@code rel}, which the save listed {@code wholly} or not; whether
   * anything directly in it was removed (its mtime changed).
   */
  private boolean walk(Dir dir, PathBytes rel, boolean wholly) throws IOException {
    boolean changed = false;
    List<byte[]> names = new ArrayList<>(dir.list());
    names.sort(Arrays::compareUnsigned);
    FileStat here = dir.stat();
    for (byte[] name : names) {
      PathBytes p = rel.child(name);
      while (next != null && PathOrder.compare(next.path(), p) < 0) {
        next = cursor.next();
      }
      boolean held = next != null && next.path().equals(p);
      if (!held) {
        if (!wholly) {
          if (kept++ == 0) {
            firstKept = p;
          }
        } else {
          changed |= removal.tree(dir, name, p.bytes());
        }
        continue;
      }
      Entry e = next;
      next = cursor.next();
      if (e.type() != EntryType.DIRECTORY) {
        continue;
      }
      FileStat s = stat(dir, name);
      if (s == null || !s.isDirectory()) {
        continue;
      }
      if (!s.sameMount(here)) {
        // A mount point the save recorded as a directory (save -x): what is mounted there is
        // another file system's, never the image's to remove.
        mountsLeft.add(dir.child(name));
        continue;
      }
      boolean inside = false;
      try (Dir sub = dir.openDir(name)) {
        if (!sub.stat().sameMount(here)) {
          mountsLeft.add(dir.child(name));
          continue;
        }
        inside = walk(sub, p, !e.unreadable());
      } catch (SymlinkException | NoSuchFileException | NotDirectoryException swapped) {
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
}

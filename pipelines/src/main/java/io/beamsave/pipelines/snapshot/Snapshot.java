package io.beamsave.pipelines.snapshot;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.image.catalog.Notes;
import io.beamsave.transforms.run.RunId;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A read-only snapshot of the file system a library is on, taken for one save and removed after
 * it. A btrfs snapshot is of the subvolume that holds the library, made in a directory {@value
 * #DIR} beside that subvolume (in it, when the subvolume is the mount's root), named after the
 * run, with a lock file the save holds while the snapshot lives: {@code cleanup} removes a
 * snapshot whose lock no run holds, the snapshot of a save that was killed.
 */
public final class Snapshot implements AutoCloseable {
  /** Which snapshot {@code save --snapshot} takes. */
  public enum Kind {
    BTRFS,
    AUTO;

    public static Kind parse(String s) {
      for (Kind k : values()) {
        if (k.name().toLowerCase(Locale.ROOT).equals(s)) {
          return k;
        }
      }
      throw new IllegalArgumentException("--snapshot " + s + ": give btrfs or auto (lvm and zfs"
          + " snapshots are not supported yet)");
    }

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** The directory snapshots are made in, beside (or at the top of) the library's subvolume. */
  public static final String DIR = ".beamsave-snapshots";

  private static final String LOCK_SUFFIX = ".lock";
  /**
   * A snapshot's name: its run's id ({@link RunId}), and for a second snapshot of the run in one
   * place, its number.
   */
  private static final java.util.regex.Pattern RUN_NAME =
      java.util.regex.Pattern.compile("\\d{8}T\\d{6}-\\d+-[0-9a-f]{6}(-\\d+)?");

  private final Kind kind;
  private final Path library;
  private final Path subvolume;
  private final Path root;
  private final Instant taken;
  private final OpenFile lock;
  private final Path lockFile;
  private boolean removed;

  private Snapshot(Kind kind, Path library, Path subvolume, Path root, Instant taken,
      OpenFile lock, Path lockFile) {
    this.kind = kind;
    this.library = library;
    this.subvolume = subvolume;
    this.root = root;
    this.taken = taken;
    this.lock = lock;
    this.lockFile = lockFile;
  }

  /**
   * Takes a snapshot of what holds {@code library} (a real path), of {@code kind}: {@code auto}
   * takes what its file system supports and refuses in one line where none is. Refuses a
   * library with another file system or subvolume beneath it, which the snapshot would not
   * hold, unless {@code oneFileSystem} leaves those out anyway. {@code name}: the run's id, with
   * a number after it for the run's second snapshot and on.
   */
  public static Snapshot take(Kind kind, Path library, boolean oneFileSystem, String name) {
    return takeBtrfs(library, checked(kind, library, oneFileSystem), name);
  }

  /**
   * What {@link #take} checks before it takes anything: that a snapshot of {@code kind} can be
   * taken of {@code library} and would hold all of it (a dry run's check).
   */
  public static void check(Kind kind, Path library, boolean oneFileSystem) {
    checked(kind, library, oneFileSystem);
  }

  private static Mounts.Mount checked(Kind kind, Path library, boolean oneFileSystem) {
    Mounts.Mount mount;
    Mounts mounts;
    try {
      mounts = Mounts.read();
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read the mounts to snapshot", library, e);
    }
    mount = mounts.of(library);
    if (!mount.type().equals("btrfs")) {
      throw new BeamsaveException("--snapshot " + kind + ": " + shown(library) + " is on "
          + mount.type() + " (" + mount.source() + " at " + shown(mount.point()) + "), which"
          + " has no snapshot beamsave can take (btrfs); drop --snapshot to save without one");
    }
    if (!oneFileSystem) {
      List<Path> inside = mounts.beneath(library);
      if (!inside.isEmpty()) {
        throw new BeamsaveException("--snapshot: " + shown(inside.get(0)) + " is mounted in the"
            + " library, and a snapshot of " + shown(library) + " does not hold it: give"
            + " --one-file-system (-x) to leave it out, or save it as a library of its own");
      }
    }
    Path subvolume = Btrfs.subvolumeOf(library);
    try {
      if (!Btrfs.isSubvolumeRoot(subvolume)) {
        throw new BeamsaveException("--snapshot " + kind + ": " + shown(library) + " is on a"
            + " mount of part of a btrfs subvolume (a bind mount); give the library by its"
            + " path under the mount of the whole subvolume");
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot stat", subvolume, e);
    }
    if (!oneFileSystem) {
      for (Path nested : Btrfs.nested(subvolume)) {
        if (nested.startsWith(library)) {
          throw new BeamsaveException("--snapshot: " + shown(nested) + " is a btrfs subvolume"
              + " of its own in the library, and a snapshot of " + shown(subvolume)
              + " does not hold it: give --one-file-system (-x) to leave it out, or save it"
              + " as a library of its own");
        }
      }
    }
    return mount;
  }

  /** What the image records of this snapshot. */
  public Map<String, String> notes() {
    Map<String, String> n = new LinkedHashMap<>();
    n.put(Notes.SNAPSHOT, kind.toString());
    n.put(Notes.SNAPSHOT_TAKEN, taken.toString());
    n.put(Notes.SNAPSHOT_PATH, Printable.text(root.toString()));
    return n;
  }

  /** The directory the snapshot is in. */
  public Path place() {
    return root.getParent();
  }

  /** Where {@code dir} (a real path this snapshot {@link #holds}) is in the snapshot. */
  public Path view(Path dir) {
    return root.resolve(subvolume.relativize(dir));
  }

  /** Whether {@code dir} (a real path) is in what this snapshot was taken of. */
  public boolean holds(Path dir) {
    return dir.startsWith(subvolume) && Btrfs.subvolumeOf(dir).equals(subvolume);
  }

  /** The library it was taken for. */
  public Path library() {
    return library;
  }


  public Instant taken() {
    return taken;
  }

  public Kind kind() {
    return kind;
  }

  /** Removes the snapshot and its lock; a second call does nothing. */
  @Override
  public synchronized void close() {
    if (removed) {
      return;
    }
    removed = true;
    try {
      Btrfs.delete(root);
      Removal.file(lockFile);
      removeIfEmpty(root.getParent());
    } catch (IOException e) {
      throw BeamsaveException.io("cannot remove the snapshot", root, e);
    } finally {
      try {
        lock.close();
      } catch (IOException ignored) {
        // The lock goes with the process anyway.
      }
    }
  }

  /** The snapshot directory, once no snapshot is in it: a later save would take it in. */
  private static void removeIfEmpty(Path dir) {
    try {
      Removal.emptyDirectory(dir);
    } catch (IOException notEmpty) {
      // Another save's snapshot, or its lock: the last to finish removes the directory.
    }
  }

  /** A snapshot no run holds: what a killed save left. */
  public record Leftover(Path snapshot, Instant made) {}

  /**
   * The snapshots under {@code dir}'s snapshot directory, if it is one, or in the one a save of
   * {@code dir} would use, whose run has ended.
   */
  public static List<Leftover> leftovers(Path snapshots) {
    return found(snapshots, false);
  }

  /** The snapshots in {@code snapshots} whose save still runs. */
  public static List<Leftover> inUse(Path snapshots) {
    return found(snapshots, true);
  }

  private static List<Leftover> found(Path snapshots, boolean live) {
    List<Leftover> out = new ArrayList<>();
    if (!Files.isDirectory(snapshots, LinkOption.NOFOLLOW_LINKS)) {
      return out;
    }
    try (var names = Files.list(snapshots)) {
      for (Path p : names.sorted().toList()) {
        String n = p.getFileName().toString();
        // Only what a save made: a subvolume named after its run (a user's directory of this
        // name is theirs).
        if (!RUN_NAME.matcher(n).matches() || !Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)
            || !Btrfs.isSubvolumeRoot(p)) {
          continue;
        }
        if (held(snapshots.resolve(n + LOCK_SUFFIX)) == live) {
          out.add(new Leftover(p, Files.getLastModifiedTime(p).toInstant()));
        }
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot look for snapshots in", snapshots, e);
    }
    return out;
  }

  /** The snapshot directory a save of {@code library} would use, or null if none. */
  public static Path placeFor(Path library) {
    try {
      Path real = library.toRealPath();
      Mounts.Mount mount = Mounts.read().of(real);
      return mount.type().equals("btrfs") ? Btrfs.place(real, mount) : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Removes a leftover, unless a run has taken its lock meanwhile. */
  public static void remove(Leftover leftover) {
    Path lockFile = leftover.snapshot().resolveSibling(
        leftover.snapshot().getFileName() + LOCK_SUFFIX);
    try (Dir d = Dir.open(lockFile.getParent());
        OpenFile f = d.openOrCreate(name(lockFile), 0600)) {
      if (!f.tryLock()) {
        return;
      }
      Btrfs.delete(leftover.snapshot());
      Removal.file(lockFile);
      removeIfEmpty(lockFile.getParent());
    } catch (IOException e) {
      throw BeamsaveException.io("cannot remove the snapshot", leftover.snapshot(), e);
    }
  }

  private static boolean held(Path lockFile) {
    if (!Files.exists(lockFile, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    try (Dir d = Dir.open(lockFile.getParent()); OpenFile f = d.openRead(name(lockFile))) {
      return !f.tryLock();
    } catch (IOException e) {
      return false;
    }
  }

  private static byte[] name(Path p) {
    return p.getFileName().toString().getBytes(StandardCharsets.UTF_8);
  }

  static String shown(Path p) {
    return Printable.text(p.toString());
  }

  /** Takes a btrfs snapshot of the subvolume holding {@code library}, under its lock. */
  private static Snapshot takeBtrfs(Path library, Mounts.Mount mount, String run) {
    Path subvolume = Btrfs.subvolumeOf(library);
    Path place = Btrfs.place(library, mount);
    Path root = place.resolve(run);
    Path lockFile = place.resolve(run + LOCK_SUFFIX);
    OpenFile lock = null;
    try {
      for (int attempt = 0; lock == null; attempt++) {
        Files.createDirectories(place);
        if (Files.isSymbolicLink(place) || !Files.isDirectory(place, LinkOption.NOFOLLOW_LINKS)) {
          throw new BeamsaveException("--snapshot btrfs: " + shown(place) + " is there and is"
              + " not a directory beamsave made; move it away");
        }
        try (Dir d = Dir.openNoFollow(place)) {
          lock = d.openOrCreate(name(lockFile), 0600);
        } catch (java.nio.file.NoSuchFileException gone) {
          // Another save removed the empty directory meanwhile: make it again, once.
          if (attempt > 0) {
            throw gone;
          }
        }
      }
      if (!lock.tryLock()) {
        throw new IOException("its lock is held");
      }
      Btrfs.run("btrfs", "subvolume", "snapshot", "-r", subvolume.toString(), root.toString());
      return new Snapshot(Kind.BTRFS, library, subvolume, root, Instant.now(), lock, lockFile);
    } catch (IOException | RuntimeException e) {
      try {
        if (lock != null) {
          lock.close();
        }
        Removal.file(lockFile);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      if (e instanceof BeamsaveException b) {
        throw b;
      }
      throw new BeamsaveException("--snapshot btrfs: cannot snapshot " + shown(subvolume)
          + " in " + shown(place) + ": " + e.getMessage());
    }
  }
}

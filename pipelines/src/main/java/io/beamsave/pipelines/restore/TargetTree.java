package io.beamsave.pipelines.restore;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.Handle;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.CatalogPaths;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.EntryType;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.read.RestoreTarget;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The restore's target directory. {@code --target} is resolved once, when the restore starts,
 * following symlinks in the path given (as {@code cd} would); from then on everything happens
 * beneath that directory through handles, one component at a time, never following a link, so
 * nothing is written, chowned, chmodded or touched outside it, whatever is swapped for a link
 * inside it meanwhile.
 *
 * <p>Before the data is written, {@link #prepare} leaves a marker at the top, and {@link #create}
 * makes every directory (owner-only) and, for every file that no worker makes whole (see {@link
 * ReadTask#madeByWorker}), an empty file of the right size under a temporary name in its
 * directory, remembering its inode. Afterwards {@link #finish} sets those files' owner (as
 * root), mode and mtime through their handles and renames them into place, creates the
 * symlinks the same way, sets the directories' metadata deepest first, then the top's, and
 * removes the marker. A restore that is killed or fails once the workers ran leaves the marker;
 * the files at their own names are whole, the others keep temporary names; one rerun with
 * {@code --overwrite} clears them and completes the restore.
 */
final class TargetTree implements AutoCloseable {
  private final Path given;
  private final Dir root;
  private final RestoreTarget target;
  private final boolean overwrite;
  private final boolean asRoot = Dir.effectiveUid() == 0;
  private final Beneath tree;
  private boolean markerLeft;
  /** Entries whose mtime the target's filesystem could not hold: how many, and the first. */
  private long clamped;
  private String firstClamped;

  private TargetTree(Path given, Dir root, RestoreTarget target, boolean overwrite) {
    this.given = given;
    this.root = root;
    this.target = target;
    this.overwrite = overwrite;
    this.tree = new Beneath(root);
  }

  /**
   * Resolves and opens the target, completes or refuses an unfinished restore found there,
   * checks it is empty unless {@code overwrite}, and leaves this restore's marker.
   */
  static TargetTree prepare(Path target, String image, boolean overwrite, PrintWriter notes) {
    Path real = resolve(target);
    Dir root = open(target, real);
    TargetTree t;
    try {
      FileStat s = root.stat();
      t = new TargetTree(target, root, new RestoreTarget(real.toUri().toString(), s.device(),
          s.inode(), token()), overwrite);
    } catch (IOException e) {
      closeQuietly(root);
      throw BeamsaveException.io("cannot open restore target", target, e);
    }
    try {
      t.clearUnfinished(notes);
      if (!overwrite && !root.list().isEmpty()) {
        throw new BeamsaveException(
            "target " + target + " is not empty; use --overwrite to restore into it");
      }
      t.leaveMarker(image);
      return t;
    } catch (IOException e) {
      t.closeQuietly();
      throw BeamsaveException.io("cannot prepare target", target, e);
    } catch (RuntimeException e) {
      t.closeQuietly();
      throw e;
    }
  }

  /**
   * Creates {@code entries} (sorted by path): the directories, and under their temporary names
   * the files a worker does not make ({@link ReadTask#madeByWorker}); returns, for each file in
   * order, the inode of the file created, or 0 for one a worker makes.
   */
  long[] create(List<Entry> entries) {
    long[] ids = new long[entries.size()];
    int n = 0;
    for (Entry e : entries) {
      try {
        long id = create(e);
        if (id != NO_FILE) {
          ids[n++] = id;
        }
      } catch (IOException x) {
        throw BeamsaveException.io("cannot restore", show(e.path()), x);
      }
    }
    return Arrays.copyOf(ids, n);
  }

  /** The target, created if need be, with the links in the path given followed. */
  private static Path resolve(Path target) {
    try {
      if (Files.exists(target) && !Files.isDirectory(target)) {
        throw new BeamsaveException("target " + target + " is not a directory");
      }
      Files.createDirectories(target);
      return target.toRealPath();
    } catch (IOException e) {
      throw BeamsaveException.io("cannot prepare target", target, e);
    }
  }

  private static Dir open(Path target, Path real) {
    try {
      // Opened without following anything: a link swapped in since it was resolved fails.
      return Dir.openNoFollow(real);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot prepare target", target, e);
    }
  }

  private static String token() {
    return String.format("%08x", new SecureRandom().nextInt());
  }

  RestoreTarget target() {
    return target;
  }

  private String show(PathBytes rel) {
    return given + "/" + rel;
  }

  /**
   * Finds markers of restores that did not finish. Without {@code --overwrite} that is an
   * error; with it, their temporary files are removed (the rest is overwritten as usual).
   */
  private void clearUnfinished(PrintWriter notes) throws IOException {
    for (byte[] name : root.list()) {
      String n = new String(name, StandardCharsets.ISO_8859_1);
      if (!n.startsWith(RestoreTarget.MARKER_PREFIX)) {
        continue;
      }
      if (n.endsWith(MARKER_WRITING) && ownMarkerText(name, true) != null) {
        // A restore killed while it wrote its marker had not yet written anything else.
        root.delete(name);
        continue;
      }
      String what = marker(name);
      if (what == null) {
        continue;
      }
      String token = n.substring(RestoreTarget.MARKER_PREFIX.length());
      if (!overwrite) {
        throw new BeamsaveException("target " + given + " holds an unfinished restore (" + what
            + "); use --overwrite to complete it");
      }
      if (notes != null) {
        notes.println("completing an unfinished restore in " + given + " (" + what + ")");
        notes.flush();
      }
      removeTemporaries(token);
      root.delete(name);
    }
  }

  private static final String MARKER_TEXT = "beamsave restore of ";
  /** The suffix of a marker's name while it is written, before it is renamed into place. */
  private static final String MARKER_WRITING = ".new";

  /**
   * What the marker {@code name} says, or null if it is not one of beamsave's: a regular file,
   * with one link, of this user, starting as beamsave writes it. Anything else by that name
   * (a library's own file, a hard link to a file elsewhere) is left alone and never read out.
   */
  private String marker(byte[] name) {
    String text = ownMarkerText(name, false);
    return text == null ? null : io.beamsave.transforms.Printable.text(text);
  }

  /**
   * The text of {@code name} if it is a regular file of this user with one link holding one
   * line as beamsave writes a marker, else null; with {@code partial}, any beginning of such a
   * line (empty too) counts, as a marker still being written holds.
   */
  private String ownMarkerText(byte[] name, boolean partial) {
    try (OpenFile f = root.openRead(name)) {
      FileStat s = f.stat();
      if (!s.isRegularFile() || s.links() != 1 || s.uid() != Dir.effectiveUid()
          || s.size() > 4096) {
        return null;
      }
      byte[] b = new byte[(int) s.size()];
      int n = f.read(0, b, 0, b.length);
      String text = new String(b, 0, n, StandardCharsets.UTF_8).strip();
      boolean begins = text.startsWith(MARKER_TEXT)
          || partial && MARKER_TEXT.startsWith(text);
      return begins && text.lines().count() <= 1 ? text : null;
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * Removes the temporary files of the restore whose token is {@code token} everywhere in the
   * target, walking it through bounded handles and no deeper than a catalog may nest: a tree
   * planted in the target nesting 30,000 deep overflowed a recursive walk.
   */
  private void removeTemporaries(String token) throws IOException {
    java.util.ArrayDeque<PathBytes> todo = new java.util.ArrayDeque<>();
    todo.push(PathBytes.of(new byte[0]));
    try (Beneath walk = new Beneath(root)) {
      while (!todo.isEmpty()) {
        PathBytes rel = todo.pop();
        Dir dir = walk.dir(rel.bytes(), rel.length());
        for (byte[] name : dir.list()) {
          FileStat s = dir.stat(name);
          if (s.isDirectory()) {
            if (CatalogPaths.depth(rel) < ImageFormat.MAX_DEPTH) {
              todo.push(rel.child(name));
            }
          } else if (RestoreTarget.isTemporaryOf(name, token)) {
            dir.delete(name);
          }
        }
      }
    }
  }

  private void leaveMarker(String image) throws IOException {
    String text = MARKER_TEXT + image + " into " + given + ", started "
        + Instant.now() + " by pid " + ProcessHandle.current().pid() + "\n";
    // Written whole under another name, then renamed: a marker is never seen half-written.
    byte[] name = target.markerName();
    byte[] writing = (new String(name, StandardCharsets.US_ASCII) + MARKER_WRITING)
        .getBytes(StandardCharsets.US_ASCII);
    try (OpenFile f = root.create(writing, 0644)) {
      byte[] b = text.getBytes(StandardCharsets.UTF_8);
      f.write(0, b, 0, b.length);
    }
    root.rename(writing, name);
    markerLeft = true;
  }

  /** What {@link #create(Entry)} returns for an entry that is not a file. */
  private static final long NO_FILE = -1;

  /** Creates {@code e}; returns the inode of the file created for a file, else NO_FILE. */
  private long create(Entry e) throws IOException {
    String problem = CatalogPaths.problem(e.path());
    if (problem != null) {
      throw new BeamsaveException("refusing to restore '" + e.path() + "': path " + problem);
    }
    Dir dir = tree.dir(e.path().bytes(), Math.max(0, e.path().lastSlash()));
    byte[] name = e.path().fileName();
    // A target that is not overwritten was empty when the restore began: a directory that
    // appears since fails mkdir; a file is created exclusively under its temporary name, and
    // renamed over whatever took its name.
    FileStat existing = overwrite ? statOrNull(dir, name) : null;
    if (e.type() == EntryType.DIRECTORY) {
      if (existing != null && existing.isDirectory()) {
        return NO_FILE;
      }
      if (existing != null) {
        refuseUnlessOverwrite(e);
        dir.delete(name);
      }
      // Owner-only until finish() sets its mode, so no one else can use it meanwhile.
      try {
        dir.mkdir(name, 0700);
      } catch (java.nio.file.FileAlreadyExistsException appeared) {
        refuseUnlessOverwrite(e);
        throw appeared;
      }
      return NO_FILE;
    }
    if (existing != null && existing.isDirectory()) {
      throw new BeamsaveException("cannot restore " + show(e.path()) + ": a directory is in the"
          + " way");
    }
    if (existing != null) {
      refuseUnlessOverwrite(e);
    }
    if (e.type() != EntryType.FILE) {
      return NO_FILE;
    }
    if (ReadTask.madeByWorker(e)) {
      return 0;
    }
    try (OpenFile f = dir.create(target.temporaryName(e.path()), 0600)) {
      if (e.size() > 0) {
        // Sets the size and leaves a hole; zero blocks are never written (sparse files).
        f.truncate(e.size());
      }
      return f.stat().inode();
    }
  }

  private void refuseUnlessOverwrite(Entry e) {
    if (!overwrite) {
      throw new BeamsaveException(show(e.path()) + " already exists; use --overwrite to replace"
          + " it");
    }
  }

  private static FileStat statOrNull(Dir dir, byte[] name) throws IOException {
    try {
      return dir.stat(name);
    } catch (NoSuchFileException absent) {
      return null;
    }
  }

  /**
   * Moves the written files into place with their metadata, creates the symlinks, sets the
   * directories' metadata deepest first and then the top's ({@code top}, null to leave the top
   * as it is), and removes the marker. {@code ids} are the inodes {@link #create} returned.
   */
  void finish(List<Entry> entries, long[] ids, Entry top) {
    List<Entry> dirs = new ArrayList<>();
    int file = 0;
    for (Entry e : entries) {
      try {
        switch (e.type()) {
          case FILE -> {
            long id = ids[file++];
            if (!ReadTask.madeByWorker(e)) {
              place(e, id);
            }
          }
          case SYMLINK -> link(e);
          case DIRECTORY -> dirs.add(e);
        }
      } catch (IOException x) {
        throw BeamsaveException.io("cannot restore", show(e.path()), x);
      }
    }
    for (int i = dirs.size() - 1; i >= 0; i--) {
      Entry e = dirs.get(i);
      try {
        setMetadata(tree.dir(e.path().bytes(), e.path().length()), e);
      } catch (IOException x) {
        throw BeamsaveException.io("cannot set metadata of", show(e.path()), x);
      }
    }
    try {
      tree.close();
      root.delete(target.markerName());
      markerLeft = false;
      if (top != null) {
        setMetadata(root, top);
      }
    } catch (IOException x) {
      throw BeamsaveException.io("cannot set metadata of", given, x);
    }
  }

  private void place(Entry e, long id) throws IOException {
    Dir dir = tree.dir(e.path().bytes(), Math.max(0, e.path().lastSlash()));
    byte[] temp = target.temporaryName(e.path());
    try (OpenFile f = dir.openRead(temp)) {
      FileStat s = f.stat();
      if (!s.isRegularFile() || s.inode() != id) {
        throw new BeamsaveException("refusing to restore " + show(e.path()) + ": the file"
            + " written for it was replaced during the restore");
      }
      setMetadata(f, e);
    }
    dir.rename(temp, e.path().fileName());
  }

  /**
   * Creates a symlink with its owner and mtime. A symlink cannot be opened to set them through
   * a handle, and by name someone who can write in its directory could swap it for a hard link
   * to a file elsewhere between creating it and chowning it (nofollow does not stop a hard
   * link): so it is made in a directory of its own that only this process's user may enter,
   * and renamed into place from there.
   */
  private void link(Entry e) throws IOException {
    Dir dir = tree.dir(e.path().bytes(), Math.max(0, e.path().lastSlash()));
    byte[] temp = target.temporaryName(e.path());
    dir.mkdir(temp, 0700);
    try (Dir own = dir.openDir(temp)) {
      FileStat s = own.stat();
      if (s.uid() != Dir.effectiveUid() || (s.permissions() & 077) != 0) {
        throw new BeamsaveException("refusing to restore " + show(e.path()) + ": the directory"
            + " made for it was replaced during the restore");
      }
      byte[] name = e.path().fileName();
      own.symlink(e.linkTarget().bytes(), name);
      if (asRoot) {
        own.setLinkOwner(name, e.uid(), e.gid());
      }
      own.setLinkModified(name, e.mtimeSeconds(), e.mtimeNanos());
      checkTime(own.stat(name), e);
      own.renameTo(name, dir, name);
    } finally {
      dir.deleteDirectory(temp);
    }
  }

  private void setMetadata(Handle h, Entry e) throws IOException {
    checkTime(RestoreTarget.setMetadata(
        h, e.uid(), e.gid(), e.mode(), e.mtimeSeconds(), e.mtimeNanos(), asRoot), e);
  }

  /**
   * Notes an mtime the filesystem did not keep as given: the kernel clamps what a filesystem
   * cannot hold (ext4 ends in 2446, some keep no nanoseconds), and the operator should know.
   */
  private void checkTime(FileStat s, Entry e) {
    if (s.mtimeSeconds() != e.mtimeSeconds() || s.mtimeNanos() != e.mtimeNanos()) {
      if (clamped++ == 0) {
        firstClamped = (e.path().isEmpty() ? given.toString() : show(e.path())) + ": saved "
            + e.mtimeSeconds() + "." + String.format("%09d", e.mtimeNanos()) + " s, restored "
            + s.mtimeSeconds() + "." + String.format("%09d", s.mtimeNanos()) + " s";
      }
    }
  }

  /**
   * A warning if the target could not hold some mtime exactly, else null; {@code byWorkers}
   * more files were so, as the restore's workers counted them.
   */
  String clampedTimes(long byWorkers, List<Entry> chosen) {
    long all = clamped + byWorkers;
    if (byWorkers > 0 && firstClamped == null) {
      // The workers only count theirs; the first one is looked for here, to name it.
      for (Entry e : chosen) {
        if (firstClamped != null) {
          break;
        }
        if (ReadTask.madeByWorker(e)) {
          try {
            Dir dir = tree.dir(e.path().bytes(), Math.max(0, e.path().lastSlash()));
            FileStat s = dir.stat(e.path().fileName());
            long before = clamped;
            checkTime(s, e);
            clamped = before;
          } catch (IOException gone) {
            // Removed or replaced since: another may name the loss.
          }
        }
      }
    }
    return all == 0 ? null : "the target's filesystem could not hold the exact mtime of "
        + all + " entr" + (all == 1 ? "y" : "ies")
        + (firstClamped != null ? " (" + firstClamped + ")" : "");
  }

  /**
   * Ends a restore that failed before {@link #finish}: removes its temporary files, so that
   * nothing half-written is left (directories created stay). The marker goes too unless
   * {@code filesPlaced}: once the workers have run, files they finished may be in place, whole,
   * and the marker says the tree is not (a rerun with {@code --overwrite} completes it).
   */
  void abandon(boolean filesPlaced) {
    try {
      tree.close();
      if (markerLeft) {
        removeTemporaries(target.token());
        if (!filesPlaced) {
          root.delete(target.markerName());
          markerLeft = false;
        }
      }
    } catch (IOException | RuntimeException e) {
      System.err.println("beamsave: warning: cannot remove the unfinished restore's files in "
          + given + ": " + e.getMessage());
    }
  }

  private void closeQuietly() {
    try {
      close();
    } catch (IOException ignored) {
      // Failing already.
    }
  }

  private static void closeQuietly(Dir d) {
    try {
      d.close();
    } catch (IOException ignored) {
      // Failing already.
    }
  }

  @Override
  public void close() throws IOException {
    try {
      tree.close();
    } finally {
      root.close();
    }
  }
}

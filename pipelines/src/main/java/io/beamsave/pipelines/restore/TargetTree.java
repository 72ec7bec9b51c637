package io.beamsave.pipelines.restore;

import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.catalog.CatalogPaths;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.read.RestoreTarget;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.SecureRandom;
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
 *
 * <p>This class opens the target and creates the tree; {@link TargetMarkers} keeps the markers,
 * {@link TemporaryFiles} clears temporary files, and {@link TargetFinish} does the last pass.
 */
final class TargetTree implements AutoCloseable {
  private final Path given;
  private final Dir root;
  private final RestoreTarget target;
  private final boolean overwrite;
  private final Beneath tree;
  private final TargetMarkers markers;
  private final TargetFinish finish;
  private final DamagedFiles damaged = new DamagedFiles();

  private TargetTree(Path given, Dir root, RestoreTarget target, boolean overwrite) {
    this.given = given;
    this.root = root;
    this.target = target;
    this.overwrite = overwrite;
    this.tree = new Beneath(root);
    this.markers = new TargetMarkers(given, root, target, overwrite);
    this.finish = new TargetFinish(given, root, tree, target, markers, damaged);
  }

  /**
   * Resolves and opens the target, completes or refuses an unfinished restore found there,
   * checks it is empty unless {@code overwrite}, and leaves this restore's marker.
   */
  static TargetTree prepare(RestoreRequest request, String image, PrintWriter notes) {
    Path target = request.target();
    boolean overwrite = request.overwrite();
    Path real = resolve(target);
    Dir root = open(target, real);
    TargetTree t;
    try {
      FileStat s = root.stat();
      if (request.delete()) {
        TargetMirror.refuseUnsafe(target, real, s, request.noPreserveRoot());
      }
      t = new TargetTree(target, root, new RestoreTarget(real.toUri().toString(), s.device(),
          s.inode(), token(), overwrite || hasDefaultAcl(root)), overwrite);
    } catch (IOException e) {
      closeQuietly(root);
      throw BeamsaveException.io("cannot open restore target", target, e);
    } catch (RuntimeException e) {
      closeQuietly(root);
      throw e;
    }
    try {
      t.markers.clearUnfinished(notes);
      if (!overwrite && !root.list().isEmpty()) {
        throw new BeamsaveException(
            "target " + target + " is not empty; use --overwrite to restore into it");
      }
      t.markers.leave(image);
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

  /**
   * Whether what is made beneath {@code dir} inherits an ACL: a default ACL on the target's top
   * passes down to every directory and file the restore makes.
   */
  private static boolean hasDefaultAcl(Dir dir) throws IOException {
    try {
      return dir.xattr(io.beamsave.transforms.image.catalog.Meta.ACL_DEFAULT
          .getBytes(java.nio.charset.StandardCharsets.US_ASCII)) != null;
    } catch (io.beamsave.transforms.fs.NotSupportedException none) {
      return false;
    }
  }

  private static String token() {
    return String.format("%08x", new SecureRandom().nextInt());
  }

  RestoreTarget target() {
    return target;
  }

  /** How messages name the entry at {@code rel} of the target given as {@code given}. */
  static String show(Path given, PathBytes rel) {
    return given + "/" + rel;
  }

  private String show(PathBytes rel) {
    return show(given, rel);
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
      } catch (FileAlreadyExistsException appeared) {
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
   * Places the files, links and directories' metadata once the workers have run, then the
   * top's ({@code top}, null to leave the top as it is), and removes the marker: {@link
   * TargetFinish#run}. {@code ids} are the inodes {@link #create} returned.
   */
  void finish(List<Entry> entries, long[] ids, Entry top) {
    finish.run(entries, ids, top);
  }

  /**
   * For a restore in batches: places the files and links of one batch once its workers have
   * run. Its directories wait: {@link #directories} sets their metadata once all beneath them is
   * placed, which the caller, walking in path order, knows.
   */
  void place(List<Entry> entries, long[] ids) {
    finish.place(entries, ids);
  }

  /** Sets the metadata of {@code dirs}, in the order given (deepest first). */
  void directories(List<Entry> dirs) {
    finish.directories(dirs);
  }

  /** Ends a restore in batches: the top's metadata ({@code top}, null to leave it), the marker. */
  void done(Entry top) {
    finish.done(top);
  }

  /**
   * {@code --delete}, once the tree is finished: removes what {@code image} lacks beneath the
   * handle this restore opened and wrote through, never the target's path again.
   */
  TargetMirror.Removed mirror(ImageRef image, java.util.function.Consumer<PathBytes> told) {
    return TargetMirror.run(image, root, told);
  }

  /**
   * Takes the workers' records of the files they found damaged ({@code --skip-damaged}) so far:
   * those files are left out when the others are placed.
   */
  void collectDamaged() {
    try {
      damaged.collect(root, target);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read the damaged files' records in", given, e);
    }
  }

  /** The files left out as damaged, and their hard links: path → why. */
  java.util.Map<PathBytes, String> damaged() {
    return damaged.all();
  }

  /** Of {@link #damaged}, the files. */
  long damagedFiles() {
    return damaged.fileCount();
  }

  /** See {@link ClampedTimes#find}. */
  void findClamped(List<Entry> batch) {
    finish.times().find(batch);
  }

  /** See {@link TargetFinish#lostMetadata}. */
  void lostMetadata(List<String> out) {
    finish.lostMetadata(out);
  }

  /** See {@link ClampedTimes#warning(long)}. */
  String clampedTimes(long byWorkers) {
    return finish.times().warning(byWorkers);
  }

  /** See {@link ClampedTimes#warning(long, List)}. */
  String clampedTimes(long byWorkers, List<Entry> chosen) {
    return finish.times().warning(byWorkers, chosen);
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
      markers.abandon(filesPlaced);
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

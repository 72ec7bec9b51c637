package io.beamsave.pipelines.runs;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.store.Location;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;

/**
 * The locks a run that writes images (a save, a consolidation) holds for its whole life, one per
 * image: {@code <image>.lock} beside a local image (its directory resolved, so every spelling of
 * the path meets the same file), and for an {@code s3://} image a file in the temporary directory
 * named by a hash of its URI (so runs on one host meet). Each is locked with {@code flock}, which the kernel drops however the
 * process ends and which, unlike Java's {@code fcntl}-based {@code FileLock}, no other descriptor
 * of the file can drop by closing; each names the run's pid, host, start and staging directory.
 *
 * <p>A lock that is held names a running save: a second save of that image refuses with one
 * line naming it. A lock file that is there but free was left by a run that was killed: the
 * next save beside it removes that run's {@code .partial} (the one beside the lock, never one
 * named elsewhere) and its staging directory (only if it is a beamsave staging directory of that
 * very run), and says so.
 */
public final class ImageLock implements AutoCloseable {
  public static final String SUFFIX = ".lock";
  public static final String TEMP_PREFIX = ".beamsave-lock-";
  /** In a staging directory: the run's id, which its lock names too. */
  static final String RUN_FILE = "run";

  private record Held(Dir dir, byte[] name, OpenFile file) {}

  private final String run;
  private final List<Held> held;
  /**
   * The directory holding the run's local staging directory, and the staging's name there: the
   * lock removes it through that handle when the run ends. Null: none.
   */
  private Dir stagingParent;

  private byte[] stagingName;

  private ImageLock(String run, List<Held> held) {
    this.run = run;
    this.held = held;
  }

  /** The run's id: its lock files, staging and leases name it. */
  public String run() {
    return run;
  }

  /**
   * Clears what killed runs left beside each of {@code images}, refuses if a live run writes one
   * of them (naming it: {@code what} runs), locks them all, and creates the run's local staging
   * directory {@code staging} (null: none, or one in object storage).
   */
  public static ImageLock acquire(String what, List<String> images, String staging,
      PrintWriter notes) {
    String run = RunNames.newRun();
    boolean localStaging = staging != null && !Location.inStore(staging);
    String stagingDir = localStaging ? Path.of(staging).toString() : "";
    List<Held> held = new ArrayList<>();
    ImageLock lock = new ImageLock(run, held);
    try {
      java.util.Set<Path> cleared = new java.util.HashSet<>();
      for (String image : images) {
        Path file = lockFile(image);
        if (cleared.add(file.getParent())) {
          clearLeftovers(file.getParent(), notes);
        }
        held.add(take(file, what, image, stagingDir, run));
      }
      if (localStaging) {
        lock.makeStaging(Path.of(staging).toAbsolutePath());
      }
      return lock;
    } catch (IOException e) {
      lock.close();
      throw BeamsaveException.io("cannot lock", images.get(0), e);
    } catch (RuntimeException e) {
      lock.close();
      throw e;
    }
  }

  /**
   * Makes the run's staging directory {@code dir}, which must not exist, owner-only, with the
   * run's id in it; kept by its parent's handle, through which it is removed at the end.
   */
  private void makeStaging(Path dir) throws IOException {
    Files.createDirectories(dir.getParent());
    Dir parent = Dir.open(dir.getParent());
    byte[] name = dir.getFileName().toString().getBytes(StandardCharsets.UTF_8);
    try {
      parent.mkdir(name, 0700);
    } catch (IOException | RuntimeException e) {
      parent.close();
      throw e;
    }
    stagingParent = parent;
    stagingName = name;
    try (Dir d = parent.openDir(name);
        OpenFile f = d.create(RUN_FILE.getBytes(StandardCharsets.US_ASCII), 0600)) {
      byte[] b = run.getBytes(StandardCharsets.US_ASCII);
      f.write(0, b, 0, b.length);
    }
  }

  /** Where the lock of the image at {@code to} lives. */
  public static Path lockFile(String to) throws IOException {
    if (Location.inStore(to)) {
      return Path.of(System.getProperty("java.io.tmpdir"), TEMP_PREFIX + sha256(to));
    }
    Path image = Path.of(to).toAbsolutePath();
    return image.getParent().toRealPath().resolve(image.getFileName() + SUFFIX);
  }

  private static String sha256(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(s.getBytes(StandardCharsets.UTF_8)), 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static byte[] utf8(Path name) {
    return name.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** Locks {@code file} for this run, or refuses naming the run that holds it. */
  private static Held take(Path file, String what, String image, String staging, String run)
      throws IOException {
    byte[] ours = content(what, image, staging, run);
    byte[] name = utf8(file.getFileName());
    Dir dir = Dir.open(file.getParent());
    try {
      for (int attempt = 0; attempt < 5; attempt++) {
        OpenFile f;
        try {
          f = dir.openOrCreate(name, 0644);
        } catch (io.beamsave.transforms.fs.SymlinkException link) {
          // A link put where the lock goes: never followed; its name is replaced by a lock.
          dir.delete(name);
          continue;
        }
        if (!f.tryLock()) {
          Properties p = read(f);
          // Locked a moment ago: its run is still writing who it is.
          for (int wait = 0; wait < 50 && p.getProperty("pid") == null; wait++) {
            sleep(10);
            p = read(f);
          }
          f.close();
          throw new BeamsaveException("another " + p.getProperty("kind", "save") + " of "
              + image + " is running (pid " + p.getProperty("pid", "?") + " on "
              + p.getProperty("host", "?") + ", started " + p.getProperty("started", "?")
              + "); wait for it to end");
        }
        FileStat held = f.stat();
        if (!held.isRegularFile() || held.links() != 1 || held.uid() != Dir.effectiveUid()) {
          // Not a lock file this user made: another user's, or a hard link someone put there
          // to a file elsewhere, which truncating would empty. Its name goes (nobody holds it),
          // and the next attempt makes a file of this user's.
          f.close();
          try {
            dir.delete(name);
          } catch (NoSuchFileException gone) {
            // Replaced meanwhile: looked at again.
          }
          continue;
        }
        f.truncate(0);
        f.write(0, ours, 0, ours.length);
        // A run that ended just now may have removed the file after it was opened here: then
        // this lock is on a file no one else will find, and must be taken again.
        FileStat there = statOrNull(dir, name);
        if (there != null && there.sameFile(f.stat())) {
          return new Held(dir, name, f);
        }
        f.close();
      }
      throw new BeamsaveException("cannot lock " + file + ": it keeps being replaced");
    } catch (IOException | RuntimeException e) {
      dir.close();
      throw e;
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static FileStat statOrNull(Dir dir, byte[] name) throws IOException {
    try {
      return dir.stat(name);
    } catch (NoSuchFileException gone) {
      return null;
    }
  }

  private static byte[] content(String what, String image, String staging, String run)
      throws IOException {
    Properties p = new Properties();
    p.setProperty("kind", what);
    p.setProperty("pid", Long.toString(ProcessHandle.current().pid()));
    p.setProperty("host", host());
    p.setProperty("started", Instant.now().toString());
    p.setProperty("image", image);
    p.setProperty("staging", staging);
    p.setProperty("run", run);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    p.store(out, "beamsave " + what + "; removed when it ends");
    return out.toByteArray();
  }

  /**
   * Removes what killed runs left in {@code dir}: each lock file there that nobody holds, its
   * partial image, and its staging directory; and leases nobody holds.
   */
  public static void clearLeftovers(Path dir, PrintWriter notes) throws IOException {
    byte[] suffix = (ImageFormat.EXTENSION + SUFFIX).getBytes(StandardCharsets.US_ASCII);
    byte[] prefix = TEMP_PREFIX.getBytes(StandardCharsets.US_ASCII);
    byte[] lease = RunNames.LEASE_PREFIX.getBytes(StandardCharsets.US_ASCII);
    try (Dir d = Dir.open(dir)) {
      for (byte[] name : d.list()) {
        boolean local = endsWith(name, suffix);
        if (local || startsWith(name, prefix)) {
          clear(d, name, local, notes);
        } else if (startsWith(name, lease)) {
          clearLease(d, name);
        }
      }
    }
  }

  /** Removes a lease whose run has ended (nobody holds its lock). */
  private static void clearLease(Dir d, byte[] name) throws IOException {
    try (OpenFile f = d.openRead(name)) {
      if (d.stat(name).isRegularFile() && f.tryLock()) {
        d.delete(name);
      }
    } catch (NoSuchFileException raced) {
      // Its run, or another, removed it meanwhile.
    } catch (java.nio.file.AccessDeniedException notOurs) {
      // Another user's: theirs to clear.
    }
  }

  private static void clear(Dir d, byte[] name, boolean local, PrintWriter notes)
      throws IOException {
    try {
      if (!d.stat(name).isRegularFile()) {
        return;
      }
      try (OpenFile f = d.openRead(name)) {
        FileStat s = f.stat();
        if (!s.isRegularFile() || s.uid() != Dir.effectiveUid() || s.links() != 1) {
          // Another user's lock (or a link to one): what it names is theirs to clear, and a
          // user who may write beside the images must not choose what this one removes.
          return;
        }
        if (!f.tryLock()) {
          return; // A live run's.
        }
        Properties p = read(f);
        List<String> removed = new ArrayList<>();
        if (local) {
          byte[] partial = (new String(name, 0, name.length - SUFFIX.length(),
              StandardCharsets.ISO_8859_1) + ImageFormat.PARTIAL_SUFFIX)
              .getBytes(StandardCharsets.ISO_8859_1);
          if (statOrNull(d, partial) != null) {
            d.delete(partial);
            removed.add(d.child(partial));
          }
        }
        byte[] staging = stagingOf(d, p, notes);
        if (staging != null) {
          Removal r = Removal.within(d);
          r.tree(d, staging, staging);
          removed.add(d.child(staging));
          if (!r.mountsLeft().isEmpty()) {
            warn(notes, "left " + r.mountsLeft().get(0) + ", a mount point in a killed run's"
                + " staging " + d.child(staging));
          }
        }
        d.delete(name);
        if (notes != null && !removed.isEmpty()) {
          notes.println("beamsave: removed what a killed " + p.getProperty("kind", "save")
              + " (pid "
              + p.getProperty("pid", "?") + ", started " + p.getProperty("started", "?")
              + ") left: " + String.join(", ", removed));
          notes.flush();
        }
      }
    } catch (NoSuchFileException raced) {
      // Another save cleared it meanwhile.
    } catch (java.nio.file.AccessDeniedException notOurs) {
      // Another user's (the temporary directory is shared): theirs to clear.
    }
  }

  /**
   * The name, in the lock's own directory {@code d}, of the staging directory a killed run's
   * lock names, if it is one: a directory beside the lock, named as a run's staging is, holding
   * that very run's id. A lock file says what it likes (whoever may write beside images may
   * write one): a staging directory it names anywhere else is left, with a warning, and only
   * what is a dead run's own staging beside it is removed on its word.
   */
  private static byte[] stagingOf(Dir d, Properties p, PrintWriter notes) throws IOException {
    String s = p.getProperty("staging", "");
    String run = p.getProperty("run", "");
    if (s.isEmpty() || run.isEmpty()) {
      return null;
    }
    Path dir = Path.of(s);
    String n = dir.getFileName() == null ? "" : dir.getFileName().toString();
    if (!(n.startsWith(RunNames.STAGING_PREFIX) || n.startsWith(RunNames.RUN_PREFIX))) {
      return null;
    }
    if (!dir.isAbsolute() || !isDirectory(d, dir.getParent())) {
      warn(notes, "a killed run's lock in " + d.name() + " names staging " + dir + ", which is"
          + " not beside it: left as it is (remove it once no save uses it)");
      return null;
    }
    byte[] name = n.getBytes(StandardCharsets.UTF_8);
    try (Dir staging = d.openDir(name);
        OpenFile id = staging.openRead(RUN_FILE.getBytes(StandardCharsets.US_ASCII))) {
      FileStat st = id.stat();
      if (!st.isRegularFile() || st.size() > 256
          || staging.stat().uid() != Dir.effectiveUid()) {
        return null;
      }
      byte[] b = new byte[(int) st.size()];
      int got = id.read(0, b, 0, b.length);
      return new String(b, 0, Math.max(got, 0), StandardCharsets.UTF_8).strip().equals(run)
          ? name : null;
    } catch (NoSuchFileException | io.beamsave.transforms.fs.SymlinkException
        | java.nio.file.NotDirectoryException notStaging) {
      return null;
    }
  }

  /**
   * Whether {@code path} is the directory {@code d} is, in any spelling. Only compared: what is
   * removed is removed beneath {@code d}, whatever {@code path} leads to by then.
   */
  private static boolean isDirectory(Dir d, Path path) {
    try (Dir named = Dir.open(path)) {
      return named.stat().sameFile(d.stat());
    } catch (IOException e) {
      return false;
    }
  }

  private static void warn(PrintWriter notes, String what) {
    if (notes != null) {
      notes.println("beamsave: warning: " + what);
      notes.flush();
    }
  }

  static Properties read(OpenFile f) throws IOException {
    byte[] b = new byte[(int) Math.min(f.stat().size(), 1 << 16)];
    int n = f.read(0, b, 0, b.length);
    Properties p = new Properties();
    p.load(new ByteArrayInputStream(b, 0, n));
    return p;
  }

  private static boolean endsWith(byte[] b, byte[] suffix) {
    if (b.length < suffix.length) {
      return false;
    }
    for (int i = 0; i < suffix.length; i++) {
      if (b[b.length - suffix.length + i] != suffix[i]) {
        return false;
      }
    }
    return true;
  }

  private static boolean startsWith(byte[] b, byte[] prefix) {
    if (b.length < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (b[i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  static String host() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "this host";
    }
  }

  /** Removes the run's local staging, then the lock files, and releases them. Idempotent. */
  @Override
  public synchronized void close() {
    if (stagingParent != null) {
      try {
        Removal r = Removal.within(stagingParent);
        r.tree(stagingParent, stagingName, stagingName);
        if (!r.mountsLeft().isEmpty()) {
          throw new IOException(r.mountsLeft().get(0) + " in it is a mount point, left");
        }
      } catch (IOException e) {
        System.err.println("beamsave: warning: cannot remove staging "
            + stagingParent.child(stagingName) + ": " + e.getMessage());
      }
      try {
        stagingParent.close();
      } catch (IOException ignored) {
        // Only read through.
      }
      stagingParent = null;
    }
    for (Held h : held) {
      try {
        FileStat there = statOrNull(h.dir(), h.name());
        if (there != null && there.sameFile(h.file().stat())) {
          h.dir().delete(h.name());
        }
      } catch (IOException ignored) {
        // The lock goes with the descriptor below; a file left is cleared by the next save.
      }
      try {
        h.file().close();
        h.dir().close();
      } catch (IOException ignored) {
        // Nothing was left unwritten.
      }
    }
    held.clear();
  }
}

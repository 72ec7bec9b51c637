package io.beamsave.pipelines.locks;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.run.RunId;
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
import java.time.Instant;
import java.util.ArrayList;
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
   * of them (naming it: {@code what} runs), locks them all for run {@code runId}, and creates
   * the run's local staging directory {@code staging} (null: none, or one in object storage).
   */
  public static ImageLock acquire(RunId runId, String what, List<String> images, String staging,
      PrintWriter notes) {
    String run = runId.value();
    // A staging with a path on this host is made here; one in a bucket needs no making.
    Path localStaging = staging == null ? null : Location.of(staging).localPath().orElse(null);
    String stagingDir = localStaging != null ? localStaging.toString() : "";
    List<Held> held = new ArrayList<>();
    ImageLock lock = new ImageLock(run, held);
    try {
      java.util.Set<Path> cleared = new java.util.HashSet<>();
      for (String image : images) {
        Path file = lockFile(image);
        if (cleared.add(file.getParent())) {
          StaleRuns.clear(file.getParent(), notes);
        }
        held.add(take(file, what, image, stagingDir, run));
      }
      if (localStaging != null) {
        lock.makeStaging(localStaging.toAbsolutePath());
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
    return Location.of(to).onThisHost(SUFFIX, TEMP_PREFIX);
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
          Properties p = holder(f);
          if (p != null) {
            f.close();
            throw new BeamsaveException("another " + p.getProperty("kind", "save") + " of "
                + image + " is running (pid " + p.getProperty("pid", "?") + " on "
                + p.getProperty("host", "?") + ", started " + p.getProperty("started", "?")
                + "); wait for it to end");
          }
        }
        FileStat held = f.stat();
        if (!held.isRegularFile() || held.links() != 1 || held.uid() != Dir.effectiveUid()) {
          // Not a lock file this user made: another user's, or a hard link someone put there
          // to a file elsewhere, which truncating would empty; or one already removed (its
          // run ended, or a clearing of stale locks took it), whose name may by now be another
          // run's new lock. The name goes only while it is still this very file (nobody holds
          // it), and the next attempt makes a file of this user's.
          f.close();
          FileStat there = statOrNull(dir, name);
          if (held.links() > 0 && there != null && there.sameFile(held)) {
            try {
              dir.delete(name);
            } catch (NoSuchFileException gone) {
              // Replaced meanwhile: looked at again.
            }
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

  /**
   * Who holds the lock on {@code f}, or null once this run holds it. A file that says nobody
   * was locked a moment ago: by a run still writing who it is, or by another run's clearing of
   * stale locks, which takes an empty file it finds for a killed run's, removes it and lets go.
   */
  private static Properties holder(OpenFile f) throws IOException {
    Properties p = read(f);
    for (int wait = 0; wait < 50 && p.getProperty("pid") == null; wait++) {
      sleep(10);
      if (f.tryLock()) {
        return null;
      }
      p = read(f);
    }
    return p;
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static FileStat statOrNull(Dir dir, byte[] name) throws IOException {
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

  static Properties read(OpenFile f) throws IOException {
    byte[] b = new byte[(int) Math.min(f.stat().size(), 1 << 16)];
    int n = f.read(0, b, 0, b.length);
    Properties p = new Properties();
    p.load(new ByteArrayInputStream(b, 0, n));
    return p;
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

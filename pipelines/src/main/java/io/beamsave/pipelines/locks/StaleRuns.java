package io.beamsave.pipelines.locks;

import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.fs.Removal;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * What killed runs left beside the images a run is about to lock, cleared before it takes its
 * locks ({@link ImageLock#acquire}): each lock file there that nobody holds and this user made,
 * the partial image beside it, and the staging directory it names beside it; and leases nobody
 * holds. A lock says what it likes (whoever may write beside images may write one), so only
 * this user's lock is obeyed, and only for what lies beside it. Static methods only.
 */
final class StaleRuns {
  private StaleRuns() {}

  /**
   * Removes what killed runs left in {@code dir}: each lock file there that nobody holds, its
   * partial image, and its staging directory; and leases nobody holds.
   */
  static void clear(Path dir, PrintWriter notes) throws IOException {
    byte[] suffix = (ImageFormat.EXTENSION + ImageLock.SUFFIX).getBytes(StandardCharsets.US_ASCII);
    byte[] prefix = ImageLock.TEMP_PREFIX.getBytes(StandardCharsets.US_ASCII);
    byte[] lease = RunNames.LEASE_PREFIX.getBytes(StandardCharsets.US_ASCII);
    try (Dir d = Dir.open(dir)) {
      for (byte[] name : d.list()) {
        boolean local = endsWith(name, suffix);
        if (local || startsWith(name, prefix)) {
          clearRun(d, name, local, notes);
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

  private static void clearRun(Dir d, byte[] name, boolean local, PrintWriter notes)
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
        Properties p = ImageLock.read(f);
        List<String> removed = new ArrayList<>();
        if (local) {
          byte[] partial = (new String(name, 0, name.length - ImageLock.SUFFIX.length(),
              StandardCharsets.ISO_8859_1) + ImageFormat.PARTIAL_SUFFIX)
              .getBytes(StandardCharsets.ISO_8859_1);
          if (ImageLock.statOrNull(d, partial) != null) {
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
        OpenFile id = staging.openRead(ImageLock.RUN_FILE.getBytes(StandardCharsets.US_ASCII))) {
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
}

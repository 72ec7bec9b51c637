package io.beamsave.pipelines.locks;

import io.beamsave.pipelines.snapshot.Snapshot;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.fs.Walk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

/**
 * {@link Leftovers} in a directory: found by a walk through handles ({@code fs.Walk}), and
 * removed beneath the handle of the location they were found under, never by a path resolved
 * again. Static methods only.
 */
final class DirectoryLeftovers {
  private DirectoryLeftovers() {}

  static Leftovers.Found find(Path root) {
    if (!Files.isDirectory(root)) {
      throw new BeamsaveException(root + ": no such directory");
    }
    List<Leftovers.Item> out = new ArrayList<>();
    List<String> live = new ArrayList<>();
    Set<Path> liveStaging = new HashSet<>();
    for (Leases.Found lease : Leases.under(root.toString(), null)) {
      if (lease.live()) {
        lease.staging().forEach(s -> liveStaging.add(Path.of(s)));
      } else {
        out.add(new Leftovers.Item(Leftovers.Kind.LEASE, lease.location(), -1, null, null, root));
      }
    }
    List<Path> locks = new ArrayList<>();
    List<Path> partials = new ArrayList<>();
    List<Path> stagingDirs = new ArrayList<>();
    Set<Path> snapshotDirs = new java.util.LinkedHashSet<>();
    // A save of the directory itself puts its snapshots beside its subvolume, perhaps above it.
    Path place = Snapshot.placeFor(root);
    if (place != null) {
      snapshotDirs.add(place);
    }
    try {
      // Through handles: a directory swapped for a link while it is looked through is not
      // entered, so nothing found lies outside the location.
      Walk.tree(root, new Walk.Visitor() {
        @Override
        public boolean enter(byte[] rel, FileStat s) {
          String n = Walk.text(Walk.fileName(rel));
          return n != null && !n.startsWith(RunNames.STAGING_PREFIX) && !n.equals(Snapshot.DIR)
              && !n.equals("beamsave-ledger");
        }

        @Override
        public void visit(byte[] rel, FileStat s) {
          String path = Walk.text(rel);
          if (path == null) {
            return; // No name beamsave gives.
          }
          Path p = root.resolve(path);
          String n = p.getFileName().toString();
          if (s.isDirectory() && n.startsWith(RunNames.STAGING_PREFIX)) {
            stagingDirs.add(p);
          } else if (s.isDirectory() && n.equals(Snapshot.DIR)) {
            snapshotDirs.add(p);
          } else if (s.isRegularFile() && n.endsWith(ImageFormat.EXTENSION + ImageLock.SUFFIX)) {
            locks.add(p);
          } else if (s.isRegularFile()
              && n.endsWith(ImageFormat.EXTENSION + ImageFormat.PARTIAL_SUFFIX)) {
            partials.add(p);
          }
        }
      });
    } catch (IOException e) {
      throw BeamsaveException.io("cannot look for leftovers in", root, e);
    }
    Set<Path> held = new HashSet<>();
    Set<String> liveRuns = new HashSet<>();
    for (Path lock : locks) {
      Properties p = heldBy(lock);
      if (p != null) {
        held.add(lock);
        liveRuns.add(p.getProperty("run", ""));
        live.add(p.getProperty("kind", "save") + " (pid " + p.getProperty("pid", "?") + " on "
            + p.getProperty("host", "?") + ", started " + p.getProperty("started", "?")
            + "), writing " + p.getProperty("image", "?"));
        String s = p.getProperty("staging", "");
        if (!s.isEmpty()) {
          liveStaging.add(Path.of(s));
        }
      } else {
        out.add(new Leftovers.Item(Leftovers.Kind.LOCK, lock.toString(), size(lock), modified(lock), null, root));
      }
    }
    for (Path partial : partials) {
      String n = partial.getFileName().toString();
      Path lock = partial.resolveSibling(
          n.substring(0, n.length() - ImageFormat.PARTIAL_SUFFIX.length()) + ImageLock.SUFFIX);
      if (!held.contains(lock)) {
        out.add(new Leftovers.Item(Leftovers.Kind.PARTIAL, partial.toString(), size(partial), modified(partial),
            null, root));
      }
    }
    for (Path dir : stagingDirs) {
      String run = runOf(dir);
      // Only beamsave's own: a staging directory holds the id of the run that made it.
      if (run == null || liveStaging.contains(dir) || liveRuns.contains(run)) {
        continue;
      }
      out.add(new Leftovers.Item(Leftovers.Kind.STAGING, dir.toString(), treeSize(dir), modified(dir), null, root));
    }
    for (Path dir : snapshotDirs) {
      for (Snapshot.Leftover s : Snapshot.leftovers(dir)) {
        out.add(new Leftovers.Item(Leftovers.Kind.SNAPSHOT, s.snapshot().toString(), -1, s.made(), null));
      }
      for (Snapshot.Leftover s : Snapshot.inUse(dir)) {
        live.add("save from snapshot " + s.snapshot() + " (taken " + s.made() + ")");
      }
    }
    return new Leftovers.Found(out, live);
  }

  /**
   * Removes the staging directory {@code staging} found under {@code under}: the directories
   * between are opened from {@code under}'s handle without following a link, so what was found
   * and what is removed are the same directory, or nothing is removed.
   */
  static void removeStaging(Path staging, Path under) {
    byte[] name = staging.getFileName().toString().getBytes(StandardCharsets.UTF_8);
    try (Dir top = Dir.open(under); Beneath beneath = new Beneath(top)) {
      Dir d = holding(beneath, under, staging);
      Removal r = Removal.within(d);
      r.tree(d, name, name);
      if (!r.mountsLeft().isEmpty()) {
        throw new BeamsaveException("cannot remove " + staging + ": " + r.mountsLeft().get(0)
            + " in it is a mount point, left as it is");
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot remove", staging, e);
    }
  }

  /**
   * Deletes {@code victim} while holding the lock file {@code lock} (taken, or created for the
   * time it takes), so that no run can begin with it meanwhile; one held by a live run is left.
   */
  static void deleteIfFree(Path under, Path lock, Path victim) {
    byte[] name = lock.getFileName().toString().getBytes(StandardCharsets.UTF_8);
    try (Dir top = Dir.open(under); Beneath beneath = new Beneath(top)) {
      Dir d = holding(beneath, under, lock);
      boolean made;
      try {
        d.stat(name);
        made = false;
      } catch (NoSuchFileException none) {
        made = true;
      }
      try (OpenFile f = d.openOrCreate(name, 0644)) {
        if (!f.tryLock()) {
          return; // A run began meanwhile: its own now.
        }
        deleteIfThere(d, victim.getFileName().toString().getBytes(StandardCharsets.UTF_8));
        if (made || victim.equals(lock)) {
          deleteIfThere(d, name);
        }
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot remove", victim, e);
    }
  }

  /**
   * The directory holding {@code found}, which a walk found under {@code under}, opened from
   * {@code under}'s handle without following a link: what was found and what is removed are in
   * the same directory, or nothing is removed.
   */
  private static Dir holding(Beneath beneath, Path under, Path found) throws IOException {
    Path rel = under.relativize(found);
    if (rel.getNameCount() == 0 || rel.startsWith("..")) {
      throw new BeamsaveException("cannot remove " + found + ": not under " + under);
    }
    byte[] parent = rel.getParent() == null ? new byte[0]
        : rel.getParent().toString().getBytes(StandardCharsets.UTF_8);
    return beneath.dir(parent, parent.length);
  }

  private static void deleteIfThere(Dir d, byte[] name) throws IOException {
    try {
      d.delete(name);
    } catch (NoSuchFileException gone) {
      // Removed meanwhile.
    }
  }

  /** The lock's content if a live run holds it, else null. */
  private static Properties heldBy(Path lock) {
    try (Dir d = Dir.open(lock.getParent());
        OpenFile f = d.openRead(lock.getFileName().toString().getBytes(StandardCharsets.UTF_8))) {
      if (f.tryLock()) {
        return null;
      }
      return ImageLock.read(f);
    } catch (IOException e) {
      return null;
    }
  }

  /** The run id in staging directory {@code staging}, read without following a link; or null. */
  private static String runOf(Path staging) {
    try (Dir d = Dir.open(staging.getParent());
        Dir dir = d.openDir(staging.getFileName().toString().getBytes(StandardCharsets.UTF_8));
        OpenFile f = dir.openRead(ImageLock.RUN_FILE.getBytes(StandardCharsets.US_ASCII))) {
      FileStat s = f.stat();
      if (!s.isRegularFile() || s.size() > 256) {
        return null;
      }
      byte[] b = new byte[(int) s.size()];
      int n = f.read(0, b, 0, b.length);
      return new String(b, 0, Math.max(n, 0), StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      return null;
    }
  }

  private static long size(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      return -1;
    }
  }

  private static Instant modified(Path p) {
    try {
      return Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS).toInstant();
    } catch (IOException e) {
      return null;
    }
  }

  private static long treeSize(Path dir) {
    long[] sum = {0};
    try {
      Walk.tree(dir, (rel, s) -> sum[0] += s.isRegularFile() ? s.size() : 0);
    } catch (IOException e) {
      return -1;
    }
    return sum[0];
  }
}

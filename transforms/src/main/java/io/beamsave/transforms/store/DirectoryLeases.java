package io.beamsave.transforms.store;

import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.fs.SymlinkException;
import io.beamsave.transforms.fs.Walk;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Leases in a directory ({@link LocalStore#lease}): each a file its holder keeps locked with
 * {@code flock} for the lease's life, written and removed through directory handles. The kernel
 * drops the lock however the holder ends, so a lease whose lock is free is a dead one's, and no
 * clock decides it.
 */
final class DirectoryLeases {
  private DirectoryLeases() {}

  /** Takes the lease at {@code path} beneath {@code root}, saying {@code content}. */
  static Store.Lease take(Path root, List<byte[]> path, byte[] content) throws IOException {
    byte[] n = path.get(path.size() - 1);
    Dir d = Dir.open(root);
    for (byte[] c : path.subList(0, path.size() - 1)) {
      try (Dir up = d) {
        d = up.openDir(c);
      }
    }
    try {
      for (int attempt = 0; attempt < 5; attempt++) {
        OpenFile f = d.openOrCreate(n, 0644);
        if (!f.tryLock()) {
          f.close();
          throw new StoreException(StoreException.Kind.FAILED, d.child(n)
              + ": held by another process");
        }
        boolean there;
        try {
          f.truncate(0);
          f.write(0, content, 0, content.length);
          // Whoever clears dead runs' leases may have taken this one for such between its
          // creation and its lock, and removed it: then it is taken again.
          there = d.stat(n).sameFile(f.stat());
        } catch (NoSuchFileException removed) {
          there = false;
        } catch (IOException | RuntimeException e) {
          f.close();
          throw e;
        }
        if (there) {
          return new Held(d, n, f);
        }
        f.close();
      }
      throw new StoreException(StoreException.Kind.FAILED, d.child(n)
          + ": it keeps being removed");
    } catch (IOException | RuntimeException e) {
      d.close();
      throw e;
    }
  }

  /**
   * Every lease file at any depth under {@code root} whose name starts with {@code name}, walked
   * through handles: a directory renamed or swapped for a link meanwhile is passed over, never
   * followed.
   */
  static List<Store.FoundLease> find(Path root, String name) throws IOException {
    List<Store.FoundLease> out = new ArrayList<>();
    if (!Files.isDirectory(root)) {
      return out;
    }
    try {
      Walk.tree(root, new Walk.Visitor() {
        @Override
        public void visit(byte[] rel, FileStat s) {
          // Only visit(Dir, ...) is used.
        }

        @Override
        public void visit(Dir d, byte[] leaf, byte[] rel, FileStat s) throws IOException {
          String key = Walk.text(rel);
          if (key == null || !s.isRegularFile() || !Walk.text(leaf).startsWith(name)) {
            return;
          }
          try (OpenFile o = d.openRead(leaf)) {
            boolean free = o.tryLock();
            byte[] b = new byte[(int) Math.min(o.stat().size(), Store.LEASE_MOST)];
            int n = Math.max(0, o.read(0, b, 0, b.length));
            out.add(new Store.FoundLease(key, Arrays.copyOf(b, n), !free,
                Instant.ofEpochSecond(s.mtimeSeconds(), s.mtimeNanos())));
          } catch (NoSuchFileException | SymlinkException gone) {
            // Its holder ended meanwhile, or it is not a lease.
          }
        }
      });
    } catch (NoSuchFileException gone) {
      // The directory went meanwhile: nothing is under it.
    }
    return out;
  }

  /** A lease file, its lock, and its directory's handle, through which it is removed. */
  private record Held(Dir dir, byte[] name, OpenFile file) implements Store.Lease {
    @Override
    public void refresh() {}

    @Override
    public boolean refreshed() {
      return false;
    }

    @Override
    public void close() {
      try {
        // Removed while its lock is held, so that no run takes it meanwhile.
        dir.delete(name);
      } catch (IOException e) {
        // Its lock goes with the descriptor: a lease left is a dead run's.
      }
      try (Dir d = dir) {
        file.close();
      } catch (IOException ignored) {
        // Nothing was left unwritten.
      }
    }
  }
}

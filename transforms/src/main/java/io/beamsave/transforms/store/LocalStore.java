package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.fs.Walk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link Store} in a local (or shared) directory: a key is a relative path under it. An
 * object is written under a temporary name and renamed into place, so it appears whole or not
 * at all. A key is one or more non-empty components without {@code .}, {@code ..} or NUL.
 *
 * <p>Every operation works beneath a handle of the root, opened afresh from its parent without
 * following a link at its own name, and from there one component at a time without following
 * any ({@code fs.Beneath}): a run's staging sits beside images where others may write, and
 * whoever moves it aside for a link to a directory elsewhere has the store refuse, never write,
 * list or remove there.
 *
 * <p>No multipart uploads: they fail as {@link StoreException.Kind#NOT_SUPPORTED}. A directory
 * holds a run's working files and the ledger, written whole with {@link #put}; an image file is
 * written by its sink, and only images in object storage are written by parts.
 */
public final class LocalStore implements Store {
  private final Path root;

  public LocalStore(Path root) {
    this.root = root.toAbsolutePath().normalize();
  }

  /** {@code key}'s components as bytes, refusing what is not a relative path of plain names. */
  private List<byte[]> components(String key) {
    List<byte[]> out = new ArrayList<>();
    for (String c : key.split("/", -1)) {
      if (c.isEmpty() || c.equals(".") || c.equals("..") || c.indexOf('\0') >= 0) {
        throw new StoreException(StoreException.Kind.FAILED, "key '" + key + "' in " + root
            + " is not a relative path of plain names, or leaves the directory");
      }
      out.add(c.getBytes(StandardCharsets.UTF_8));
    }
    return out;
  }

  /** The root, opened from its parent's handle, a link at its name refused. */
  private Dir openRoot() throws IOException {
    return openRoot(false);
  }

  /** Like {@link #openRoot()}, made first (with the directories above it) if {@code create}. */
  private Dir openRoot(boolean create) throws IOException {
    Path parent = root.getParent();
    if (parent == null) {
      return Dir.open(root);
    }
    if (create) {
      Files.createDirectories(parent);
    }
    byte[] name = root.getFileName().toString().getBytes(StandardCharsets.UTF_8);
    try (Dir p = Dir.open(parent)) {
      if (create) {
        try {
          p.mkdir(name, 0755);
        } catch (java.nio.file.FileAlreadyExistsException there) {
          // Made before.
        }
      }
      return p.openDir(name);
    }
  }

  /** What an operation does with the directory holding a key's object and the object's name. */
  @FunctionalInterface
  private interface InDir<T> {
    T apply(Dir dir, byte[] name) throws IOException;
  }

  /**
   * Runs {@code op} on the directory holding {@code key} beneath the root, made first (owner
   * and group may enter) if {@code create}.
   */
  private <T> T at(String key, boolean create, InDir<T> op) throws IOException {
    List<byte[]> c = components(key);
    try (Dir top = openRoot(create); Beneath beneath = new Beneath(top)) {
      Dir dir = top;
      byte[] path = new byte[0];
      for (int i = 0; i < c.size() - 1; i++) {
        if (create) {
          try {
            dir.mkdir(c.get(i), 0755);
          } catch (java.nio.file.FileAlreadyExistsException there) {
            // Made before, or by another worker meanwhile.
          }
        }
        path = i == 0 ? c.get(0) : join(path, c.get(i));
        dir = beneath.dir(path, path.length);
      }
      return op.apply(dir, c.get(c.size() - 1));
    }
  }

  private static byte[] join(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + 1 + b.length);
    out[a.length] = '/';
    System.arraycopy(b, 0, out, a.length + 1, b.length);
    return out;
  }

  private StoreException failure(String key, IOException e) {
    StoreException.Kind kind = e instanceof NoSuchFileException ? StoreException.Kind.NOT_FOUND
        : e instanceof java.nio.file.AccessDeniedException ? StoreException.Kind.ACCESS_DENIED
        : StoreException.Kind.FAILED;
    return new StoreException(kind, false, where(key) + ": " + BeamsaveException.describe(e), e);
  }

  @Override
  public String where(String key) {
    return root.resolve(key).toString();
  }

  @Override
  public void check(String key) {
    if (!Files.isDirectory(root)) {
      throw new StoreException(StoreException.Kind.NOT_FOUND,
          where(key) + ": no such directory " + root);
    }
  }

  @Override
  public Optional<Stat> stat(String key) {
    try {
      FileStat s = at(key, false, Dir::stat);
      return s.isRegularFile() ? Optional.of(new Stat(s.size(), "", Map.of())) : Optional.empty();
    } catch (NoSuchFileException | java.nio.file.NotDirectoryException e) {
      return Optional.empty();
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  /** Local files have no ETags: {@code etag} is not checked (a reader holds its file open). */
  @Override
  public void read(String key, String etag, long offset, byte[] buf, int off, int len) {
    try {
      at(key, false, (dir, name) -> {
        try (OpenFile f = dir.openRead(name)) {
          readFully(key, f, offset, buf, off, len);
        }
        return null;
      });
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  private void readFully(String key, OpenFile f, long offset, byte[] buf, int off, int len)
      throws IOException {
    for (int done = 0; done < len; ) {
      int n = f.read(offset + done, buf, off + done, len - done);
      if (n <= 0) {
        throw new StoreException(StoreException.Kind.FAILED,
            where(key) + ": short read at " + (offset + done));
      }
      done += n;
    }
  }

  @Override
  public byte[] get(String key) {
    try {
      return at(key, false, (dir, name) -> {
        try (OpenFile f = dir.openRead(name)) {
          FileStat s = f.stat();
          if (!s.isRegularFile() || s.size() > Integer.MAX_VALUE - 16) {
            throw new IOException(where(key) + ": not a file of the store");
          }
          byte[] b = new byte[(int) s.size()];
          readFully(key, f, 0, b, 0, b.length);
          return b;
        }
      });
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  /**
   * Writes the object whole under a temporary name beside it, then renames it into place: a
   * reader sees all of it or none.
   */
  @Override
  public void put(String key, Body body, String contentType) {
    try {
      at(key, true, (dir, name) -> {
        byte[] tmp = (".tmp." + token() + TEMPORARY).getBytes(StandardCharsets.US_ASCII);
        try {
          try (OpenFile out = dir.create(tmp, 0644)) {
            out.write(0, body.data(), 0, body.length());
          }
          dir.rename(tmp, name);
        } catch (IOException | RuntimeException e) {
          try {
            dir.delete(tmp);
          } catch (IOException gone) {
            e.addSuppressed(gone);
          }
          throw e;
        }
        return null;
      });
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  /**
   * A file held locked ({@code flock}) for the lease's life ({@link DirectoryLeases}): the
   * kernel drops the lock however the holder ends.
   */
  @Override
  public Lease lease(String key, byte[] content) {
    try {
      return DirectoryLeases.take(root, components(key), content);
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  /** Every lease file beneath the directory, each live while its lock is held. */
  @Override
  public List<FoundLease> leases(String name) {
    try {
      return DirectoryLeases.find(root, name);
    } catch (IOException e) {
      throw failure("", e);
    }
  }

  /** This host's clock: a directory's files are stamped by it. */
  @Override
  public java.time.Instant now() {
    return java.time.Instant.now();
  }

  private static final String TEMPORARY = ".beamsave-tmp";

  private static boolean isTemporary(String key) {
    String n = key.substring(key.lastIndexOf('/') + 1);
    return n.startsWith(".") && n.matches(".*\\.[0-9a-f]{12}\\" + TEMPORARY);
  }

  private static String token() {
    byte[] b = new byte[6];
    new SecureRandom().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  @Override
  public List<Item> list(String prefix) {
    List<Item> found = new ArrayList<>();
    try (Dir top = openRoot()) {
      Walk.tree(top, new Walk.Visitor() {
        @Override
        public boolean enter(byte[] rel, FileStat s) {
          String dir = Walk.text(rel);
          // Only directories on the way to the prefix, or under it, are worth entering.
          return dir != null && (prefix.startsWith(dir + "/") || (dir + "/").startsWith(prefix));
        }

        @Override
        public void visit(byte[] rel, FileStat s) {
          String key = Walk.text(rel);
          if (key != null && s.isRegularFile() && key.startsWith(prefix) && !isTemporary(key)) {
            found.add(new Item(key, s.size(),
                java.time.Instant.ofEpochSecond(s.mtimeSeconds(), s.mtimeNanos())));
          }
        }
      });
    } catch (NoSuchFileException none) {
      return found;
    } catch (IOException e) {
      throw failure(prefix, e);
    }
    found.sort(java.util.Comparator.comparing(Item::key));
    return found;
  }

  @Override
  public void delete(String key) {
    List<byte[]> c = components(key);
    int n = c.size();
    // ends[i]: where component i ends in the key's bytes; the directory holding it is [0, ends[i-1]).
    int[] ends = new int[n];
    byte[] path = c.get(0);
    ends[0] = path.length;
    for (int i = 1; i < n; i++) {
      path = join(path, c.get(i));
      ends[i] = path.length;
    }
    try (Dir top = openRoot(); Beneath beneath = new Beneath(top)) {
      beneath.dir(path, n == 1 ? 0 : ends[n - 2]).delete(c.get(n - 1));
      // Directories left empty under the root go too, as keys imply them and nothing else.
      for (int i = n - 2; i >= 0; i--) {
        beneath.dir(path, i == 0 ? 0 : ends[i - 1]).deleteDirectory(c.get(i));
      }
    } catch (NoSuchFileException | java.nio.file.DirectoryNotEmptyException gone) {
      // Removed or refilled meanwhile: nothing of this key is left either way.
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  private StoreException noMultipart(String key) {
    return new StoreException(StoreException.Kind.NOT_SUPPORTED, where(key)
        + ": a directory takes no multipart uploads (they are object storage's)");
  }

  @Override
  public String createMultipart(String key, String contentType, Map<String, String> metadata) {
    throw noMultipart(key);
  }

  @Override
  public String uploadPart(String key, String uploadId, int number, Body body, byte[] md5) {
    throw noMultipart(key);
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from) {
    throw noMultipart(key);
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from, String fromEtag,
      long offset, long length) {
    throw noMultipart(key);
  }

  @Override
  public List<Part> parts(String key, String uploadId) {
    throw noMultipart(key);
  }

  @Override
  public String complete(String key, String uploadId, List<Part> parts, String expect) {
    throw noMultipart(key);
  }

  @Override
  public void abort(String key, String uploadId) {
    throw noMultipart(key);
  }

  /** None: there are no uploads in a directory. */
  @Override
  public List<Upload> uploads(String prefix) {
    return List.of();
  }
}

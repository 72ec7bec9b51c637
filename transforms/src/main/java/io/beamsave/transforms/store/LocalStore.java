package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.fs.Rename;
import io.beamsave.transforms.fs.Walk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link Store} in a local (or shared) directory: a key is a relative path under it. An
 * object is written under a temporary name and renamed into place, so it appears whole or not
 * at all. A key is one or more non-empty components without {@code .}, {@code ..} or NUL; and
 * nothing is written where a directory on the way resolves outside the root (a symlink planted
 * in it).
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

  private Path file(String key) {
    for (String c : key.split("/", -1)) {
      if (c.isEmpty() || c.equals(".") || c.equals("..") || c.indexOf('\0') >= 0) {
        throw new StoreException(StoreException.Kind.FAILED, "key '" + key + "' in " + root
            + " is not a relative path of plain names, or leaves the directory");
      }
    }
    return root.resolve(key);
  }

  /** {@code dir}, created if need be, once it is known to resolve inside the root. */
  private Path inside(Path dir) throws IOException {
    for (int attempt = 0; ; attempt++) {
      try {
        Files.createDirectories(dir);
        Path real = dir.toRealPath();
        if (!real.startsWith(root.toRealPath())) {
          throw new StoreException(StoreException.Kind.FAILED,
              dir + " resolves to " + real + ", outside " + root);
        }
        return dir;
      } catch (NoSuchFileException raced) {
        // A delete of the last key in a directory on the way removed it meanwhile.
        if (attempt >= 3) {
          throw raced;
        }
      }
    }
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
      BasicFileAttributes a = Files.readAttributes(file(key), BasicFileAttributes.class);
      return a.isRegularFile() ? Optional.of(new Stat(a.size(), "", Map.of())) : Optional.empty();
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  /** Local files have no ETags: {@code etag} is not checked (a reader holds its file open). */
  @Override
  public void read(String key, String etag, long offset, byte[] buf, int off, int len) {
    try (FileChannel ch = FileChannel.open(file(key), StandardOpenOption.READ)) {
      ByteBuffer b = ByteBuffer.wrap(buf, off, len);
      while (b.hasRemaining()) {
        if (ch.read(b, offset + b.position() - off) < 0) {
          throw new StoreException(StoreException.Kind.FAILED,
              where(key) + ": short read at " + (offset + b.position() - off));
        }
      }
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  @Override
  public byte[] get(String key) {
    try {
      return Files.readAllBytes(file(key));
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  @Override
  public void put(String key, Body body, String contentType) {
    Path f = file(key);
    try {
      inside(f.getParent());
      writeWhole(f, body);
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  /**
   * Writes {@code f} whole under a temporary name beside it, then renames it into place: a
   * reader sees all of it or none.
   */
  private static void writeWhole(Path f, Body body) throws IOException {
    Path tmp = temporary(f);
    try {
      try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW,
          StandardOpenOption.WRITE)) {
        ByteBuffer b = ByteBuffer.wrap(body.data(), 0, body.length());
        while (b.hasRemaining()) {
          out.write(b);
        }
      }
      Rename.replacing(tmp, f);
    } catch (IOException | RuntimeException e) {
      Removal.file(tmp);
      throw e;
    }
  }

  private static Path temporary(Path f) {
    return f.resolveSibling("." + f.getFileName() + "." + token() + TEMPORARY);
  }

  private static final String TEMPORARY = ".beamsave-tmp";

  private static boolean isTemporary(Path f) {
    String n = f.getFileName().toString();
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
    if (!Files.isDirectory(root)) {
      return found;
    }
    try {
      Walk.tree(root, new Walk.Visitor() {
        @Override
        public boolean enter(byte[] rel, FileStat s) {
          String dir = Walk.text(rel);
          // Only directories on the way to the prefix, or under it, are worth entering.
          return dir != null && (prefix.startsWith(dir + "/") || (dir + "/").startsWith(prefix));
        }

        @Override
        public void visit(byte[] rel, FileStat s) {
          String key = Walk.text(rel);
          if (key != null && s.isRegularFile() && key.startsWith(prefix)
              && !isTemporary(Path.of(key))) {
            found.add(new Item(key, s.size(),
                java.time.Instant.ofEpochSecond(s.mtimeSeconds(), s.mtimeNanos())));
          }
        }
      });
    } catch (IOException e) {
      throw failure(prefix, e);
    }
    found.sort(java.util.Comparator.comparing(Item::key));
    return found;
  }

  @Override
  public void delete(String key) {
    Path f = file(key);
    try {
      Removal.file(f);
      // Directories left empty under the root go too, as keys imply them and nothing else.
      for (Path d = f.getParent(); d != null && d.startsWith(root) && !d.equals(root);
          d = d.getParent()) {
        if (!Removal.emptyDirectory(d)) {
          break;
        }
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

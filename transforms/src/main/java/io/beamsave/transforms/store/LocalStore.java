package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
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
 * at all. A multipart upload keeps its parts in a hidden directory beside them, {@code
 * .multipart/ID/}, and completing it concatenates them into the object the same way. A key is
 * one or more non-empty components without {@code .}, {@code ..} or NUL; and nothing is written
 * where a directory on the way resolves outside the root (a symlink planted in it).
 */
public final class LocalStore implements Store {
  private static final String MULTIPART = ".multipart/";

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

  /** Checked just before the file is renamed into place: a narrow race is left open. */
  @Override
  public boolean conditionalWrites() {
    return false;
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
      writeWhole(f, false, out -> writeFully(out, body.data(), body.length()));
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  private interface Content {
    void writeTo(FileChannel out) throws IOException;
  }

  /**
   * Writes {@code f} whole under a temporary name beside it, forced to disk if {@code force},
   * then renames it into place: a reader sees all of it or none.
   */
  private static void writeWhole(Path f, boolean force, Content content) throws IOException {
    Path tmp = temporary(f);
    try {
      try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW,
          StandardOpenOption.WRITE)) {
        content.writeTo(out);
        if (force) {
          out.force(true);
        }
      }
      Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(tmp);
      throw e;
    }
  }

  private static void writeFully(FileChannel out, byte[] data, int len) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(data, 0, len);
    while (b.hasRemaining()) {
      out.write(b);
    }
  }

  private static void append(FileChannel out, Path from) throws IOException {
    try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ)) {
      long size = in.size();
      for (long pos = 0; pos < size; ) {
        pos += in.transferTo(pos, size - pos, out);
      }
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
      Files.walkFileTree(root, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes a) {
          String rel = relative(d, true);
          boolean hidden = d.getFileName() != null && !d.equals(root)
              && d.getFileName().toString().equals(".multipart");
          // Only directories on the way to the prefix, or under it, are worth entering.
          return hidden || !(prefix.startsWith(rel) || rel.startsWith(prefix))
              ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFile(Path f, BasicFileAttributes a) {
          String rel = relative(f, false);
          if (rel.startsWith(prefix) && a.isRegularFile() && !isTemporary(f)) {
            found.add(new Item(rel, a.size(), a.lastModifiedTime().toInstant()));
          }
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
          if (e instanceof NoSuchFileException) {
            return FileVisitResult.CONTINUE;
          }
          throw e;
        }
      });
    } catch (IOException e) {
      throw failure(prefix, e);
    }
    found.sort(java.util.Comparator.comparing(Item::key));
    return found;
  }

  private String relative(Path p, boolean directory) {
    String rel = root.relativize(p).toString();
    return directory && !rel.isEmpty() ? rel + "/" : rel;
  }

  @Override
  public void delete(String key) {
    Path f = file(key);
    try {
      Files.deleteIfExists(f);
      // Directories left empty under the root go too, as keys imply them and nothing else.
      for (Path d = f.getParent(); d != null && d.startsWith(root) && !d.equals(root);
          d = d.getParent()) {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(d)) {
          if (s.iterator().hasNext()) {
            break;
          }
        }
        Files.deleteIfExists(d);
      }
    } catch (NoSuchFileException | java.nio.file.DirectoryNotEmptyException gone) {
      // Removed or refilled meanwhile: nothing of this key is left either way.
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  private Path upload(String uploadId) {
    if (!uploadId.matches("[0-9a-f]{12}")) {
      throw new StoreException(StoreException.Kind.NOT_FOUND, "no such upload " + uploadId);
    }
    return file(MULTIPART + uploadId);
  }

  @Override
  public String createMultipart(String key, String contentType, Map<String, String> metadata) {
    String id = token();
    try {
      inside(upload(id));
      Files.writeString(upload(id).resolve("key"), key);
    } catch (IOException e) {
      throw failure(key, e);
    }
    return id;
  }

  /** The directory of upload {@code uploadId}, which must be one to {@code key}. */
  private Path uploadTo(String key, String uploadId) {
    Path dir = upload(uploadId);
    try {
      if (!Files.readString(dir.resolve("key")).equals(key)) {
        throw new StoreException(StoreException.Kind.NOT_FOUND,
            where(key) + ": no such upload " + uploadId);
      }
    } catch (IOException e) {
      throw failure(key, e);
    }
    return dir;
  }

  private Path part(String key, String uploadId, int number) {
    Path dir = uploadTo(key, uploadId);
    if (number < 1 || number > 10_000) {
      throw new StoreException(StoreException.Kind.FAILED, where(key) + ": part " + number
          + " is not between 1 and 10000");
    }
    return dir.resolve(String.format(java.util.Locale.ROOT, "%05d", number));
  }

  @Override
  public String uploadPart(String key, String uploadId, int number, Body body, byte[] md5) {
    Path p = part(key, uploadId, number);
    try {
      writeWhole(p, false, out -> writeFully(out, body.data(), body.length()));
    } catch (IOException e) {
      throw failure(key, e);
    }
    return Md5.hex(Md5.of(body.data(), 0, body.length()));
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from) {
    Path p = part(key, uploadId, number);
    Path source = file(from);
    try {
      writeWhole(p, false, out -> append(out, source));
      return "";
    } catch (IOException e) {
      throw failure(from, e);
    }
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from, String fromEtag,
      long offset, long length) {
    Path p = part(key, uploadId, number);
    Path source = file(from);
    try {
      writeWhole(p, false, out -> {
        try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ)) {
          if (offset < 0 || length < 1 || offset > in.size() - length) {
            throw new StoreException(StoreException.Kind.FAILED, where(from) + ": bytes "
                + offset + "+" + length + " lie past its end (" + in.size() + " bytes)");
          }
          for (long done = 0; done < length; ) {
            done += in.transferTo(offset + done, length - done, out);
          }
        }
      });
      return "";
    } catch (NoSuchFileException e) {
      throw new StoreException(StoreException.Kind.NOT_FOUND, where(from) + ": no such object");
    } catch (IOException e) {
      throw failure(from, e);
    }
  }

  @Override
  public List<Part> parts(String key, String uploadId) {
    Path dir = uploadTo(key, uploadId);
    List<Part> parts = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "[0-9][0-9][0-9][0-9][0-9]")) {
      for (Path p : s) {
        parts.add(new Part(Integer.parseInt(p.getFileName().toString()), "", Files.size(p)));
      }
    } catch (IOException e) {
      throw failure(key, e);
    }
    parts.sort(java.util.Comparator.comparingInt(Part::number));
    return parts;
  }

  @Override
  public String complete(String key, String uploadId, List<Part> parts, String expect) {
    // Local files have no ETags ("" below): a file where none was is all this store can tell.
    checkHolds(key, expect == null || ABSENT.equals(expect) ? expect : "");
    int last = 0;
    List<Path> files = new ArrayList<>(parts.size());
    for (Part p : parts) {
      if (p.number() <= last) {
        throw new StoreException(StoreException.Kind.FAILED,
            where(key) + ": parts are not in ascending order");
      }
      last = p.number();
      files.add(part(key, uploadId, p.number()));
    }
    try {
      inside(file(key).getParent());
      writeWhole(file(key), true, out -> {
        for (Path f : files) {
          append(out, f);
        }
      });
    } catch (IOException e) {
      throw failure(key, e);
    }
    abort(key, uploadId);
    return "";
  }

  @Override
  public void abort(String key, String uploadId) {
    Path dir = upload(uploadId);
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
      for (Path p : s) {
        Files.deleteIfExists(p);
      }
      Files.deleteIfExists(dir);
      try {
        Files.deleteIfExists(dir.getParent());
      } catch (java.nio.file.DirectoryNotEmptyException others) {
        // Other uploads are in progress.
      }
    } catch (NoSuchFileException gone) {
      // Completed or aborted already.
    } catch (IOException e) {
      throw failure(key, e);
    }
  }

  @Override
  public List<Upload> uploads(String prefix) {
    List<Upload> found = new ArrayList<>();
    Path dir = file(MULTIPART.substring(0, MULTIPART.length() - 1));
    if (!Files.isDirectory(dir)) {
      return found;
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
      for (Path u : s) {
        try {
          String key = Files.readString(u.resolve("key"));
          if (key.startsWith(prefix)) {
            found.add(new Upload(key, u.getFileName().toString(),
                Files.getLastModifiedTime(u).toInstant()));
          }
        } catch (NoSuchFileException gone) {
          // Completed or aborted while listing.
        }
      }
    } catch (NoSuchFileException gone) {
      return found;
    } catch (IOException e) {
      throw failure(MULTIPART, e);
    }
    found.sort(java.util.Comparator.comparing(Upload::initiated));
    return found;
  }

  @Override
  public boolean wantsPartMd5() {
    return false;
  }
}

package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Where something of beamsave's is: a local path or an object (or key prefix) in S3-compatible
 * storage, as an operator writes it ({@code /backup/x.bsave}, {@code s3://bucket/key}). {@link
 * #of} is the one place that tells the two apart, once, at the edge; everything that differs
 * between them (the parent, a child, the store that holds it, whether it is there) is answered
 * here, by kind, so no caller looks at a location's spelling again. The backends are found here
 * too ({@link #directory}, {@link #placed}); only the factories of what reads and writes images
 * ({@code sink.ImageSinks}, {@code read.ImageSources}) choose by kind, and ArchitectureTest keeps
 * it so.
 */
public sealed interface Location {
  /** A path on this machine's file system (or one every worker mounts). */
  record Local(Path path) implements Location {
    @Override
    public Location parent() {
      return new Local(path.toAbsolutePath().getParent());
    }

    @Override
    public Location child(String name) {
      return new Local(path.resolve(name));
    }

    /** Its directory by its real path, where that can be found. */
    @Override
    public Location realParent() {
      Path parent = path.toAbsolutePath().getParent();
      try {
        return new Local(parent.toRealPath());
      } catch (IOException e) {
        return new Local(parent);
      }
    }

    @Override
    public String name() {
      Path n = path.getFileName();
      return n == null ? "" : n.toString();
    }

    @Override
    public Store directory(S3Settings s3) {
      return new LocalStore(path);
    }

    @Override
    public Placed placed(S3Settings s3) {
      Path abs = path.toAbsolutePath();
      return new Placed(new LocalStore(abs.getParent()), abs.getFileName().toString());
    }

    @Override
    public Location resolve(String key) {
      return new Local(path.resolve(key));
    }

    /**
     * The regular file at the path, links followed as an operator's path is (an image
     * {@code latest} may be a link to the newest).
     */
    @Override
    public Optional<Store.Stat> stat(S3Settings s3) {
      try {
        BasicFileAttributes a = Files.readAttributes(path,
            BasicFileAttributes.class);
        return a.isRegularFile() ? Optional.of(new Store.Stat(a.size(), "", Map.of()))
            : Optional.empty();
      } catch (NoSuchFileException | NotDirectoryException none) {
        return Optional.empty();
      } catch (IOException e) {
        throw new StoreException(StoreException.Kind.FAILED, false, path + ": "
            + BeamsaveException.describe(e), e);
      }
    }

    @Override
    public boolean sameContainer(Location other) {
      return other instanceof Local;
    }

    @Override
    public Optional<Path> localPath() {
      return Optional.of(path);
    }

    @Override
    public boolean copiesWithin() {
      return false;
    }

    @Override
    public long minimumPart() {
      return 0;
    }

    @Override
    public boolean isDirectory(S3Settings s3) {
      return Files.isDirectory(path);
    }

    @Override
    public Path onThisHost(String suffix, String elsewhere) throws IOException {
      Path image = path.toAbsolutePath();
      return image.getParent().toRealPath().resolve(image.getFileName() + suffix);
    }

    /** Its directory made, and its real path from then on: one spelling of it for the run. */
    @Override
    public Location forImage(String option, S3Settings s3) {
      if (Files.isDirectory(path)) {
        throw new BeamsaveException(option + " " + path + " is a directory; name the image file");
      }
      Path abs = path.toAbsolutePath();
      try {
        Files.createDirectories(abs.getParent());
        return new Local(abs.getParent().toRealPath().resolve(abs.getFileName()));
      } catch (IOException e) {
        throw BeamsaveException.io("cannot create image directory", abs.getParent(), e);
      }
    }

    @Override
    public String toString() {
      return path.toString();
    }
  }

  /** An object, or a key prefix, in a bucket. */
  record InStore(ObjectUri uri) implements Location {
    @Override
    public Location parent() {
      return new InStore(uri.parent());
    }

    @Override
    public Location child(String name) {
      return new InStore(uri.child(name));
    }

    @Override
    public String name() {
      return uri.name();
    }

    @Override
    public Store directory(S3Settings s3) {
      return Stores.open(uri.toString(), s3);
    }

    @Override
    public Placed placed(S3Settings s3) {
      return new Placed(Stores.bucketOf(uri, s3), uri.key());
    }

    @Override
    public Location resolve(String key) {
      String k = uri.key();
      return new InStore(new ObjectUri(uri.bucket(),
          (k.isEmpty() || k.endsWith("/") ? k : k + "/") + key));
    }

    @Override
    public boolean sameContainer(Location other) {
      return other instanceof InStore o && o.uri.bucket().equals(uri.bucket());
    }

    @Override
    public Optional<Path> localPath() {
      return Optional.empty();
    }

    @Override
    public boolean copiesWithin() {
      return true;
    }

    @Override
    public long minimumPart() {
      return S3Store.MIN_PART;
    }

    @Override
    public Path onThisHost(String suffix, String elsewhere) {
      try {
        return Path.of(System.getProperty("java.io.tmpdir"), elsewhere + java.util.HexFormat.of()
            .formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(toString().getBytes(java.nio.charset.StandardCharsets.UTF_8)), 0, 16));
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    }

    /** A prefix spelled as one, or one because no object has its name. */
    @Override
    public boolean isDirectory(S3Settings s3) {
      return uri.key().isEmpty() || uri.key().endsWith("/") || !exists(s3);
    }

    /** Checked to be reachable and writable before any work is done for it. */
    @Override
    public Location forImage(String option, S3Settings s3) {
      if (uri.key().isEmpty()) {
        throw new BeamsaveException(option + " " + uri
            + ": no object key after the bucket (s3://BUCKET/KEY)");
      }
      Placed p = placed(s3);
      p.store().check(p.key());
      return this;
    }

    /** The object at {@code key} of this one's bucket: where a bucket's listing names it. */
    public InStore keyed(String key) {
      return new InStore(new ObjectUri(uri.bucket(), key));
    }

    @Override
    public String toString() {
      return uri.toString();
    }
  }

  /** A store and the key of one object in it: where {@link #placed} finds a location. */
  record Placed(Store store, String key) {}

  /** The local path {@code path}. */
  static Location of(Path path) {
    return new Local(path);
  }

  /**
   * The location {@code text} names: {@code s3://BUCKET/KEY} (a key may be empty: a bucket's
   * top) is in a store, anything else a local path.
   */
  static Location of(String text) {
    return inStore(text) ? new InStore(ObjectUri.parse(text, true))
        : new Local(Path.of(text));
  }

  /**
   * The object {@code text} names, where only an object will do ({@code upload --to}, {@code
   * download --from}): refused in one line naming {@code option} otherwise.
   */
  static Location object(String text, String option) {
    if (!inStore(text)) {
      throw new BeamsaveException(option + " " + text
          + ": give an object in S3-compatible storage, s3://BUCKET/KEY");
    }
    return new InStore(ObjectUri.parse(text, false));
  }

  /** Like {@link #object}, for a key prefix (a bucket's top too): {@code s3://BUCKET/PREFIX}. */
  static Location prefix(String text, String option) {
    if (!inStore(text)) {
      throw new BeamsaveException(option + " " + text
          + ": give a place in S3-compatible storage, s3://BUCKET/PREFIX");
    }
    return new InStore(ObjectUri.parse(text, true));
  }

  /** This, a local path made absolute and normalized: one spelling of it for the run. */
  default Location normalized() {
    return match(p -> new Local(p.toAbsolutePath().normalize()), o -> this);
  }

  /**
   * Whether {@code text} names a location in a store rather than a local path: for the store
   * packages and the factories of image readers and writers, which choose a backend by it.
   */
  static boolean inStore(String text) {
    return text != null && text.startsWith(ObjectUri.SCHEME);
  }

  /** The directory or key prefix holding this (a local one made absolute). */
  Location parent();

  /**
   * {@link #parent}, spelled one way however this was reached (a directory's links resolved):
   * what runs that meet there compare.
   */
  default Location realParent() {
    return parent();
  }

  /** {@code name} under this, taken as a directory or key prefix. */
  Location child(String name);

  /** The last component of its path or key. */
  String name();

  /** {@code name} beside this: in its directory or under its prefix. */
  default Location sibling(String name) {
    return parent().child(name);
  }

  /**
   * The store rooted at this, taken as a directory or key prefix (keys relative to it), with
   * object storage's {@code s3} settings (unused for a directory).
   */
  Store directory(S3Settings s3);

  /** The store holding this object, and its key there. */
  Placed placed(S3Settings s3);

  /** What is there (a regular file, an object), if anything. */
  default Optional<Store.Stat> stat(S3Settings s3) {
    Placed p = placed(s3);
    return p.store().stat(p.key());
  }

  default boolean exists(S3Settings s3) {
    return stat(s3).isPresent();
  }

  /** Removes what is there, if anything. */
  default void delete(S3Settings s3) {
    Placed p = placed(s3);
    p.store().delete(p.key());
  }

  /** Where {@code key}, as {@link #directory}'s store lists it, is. */
  Location resolve(String key);

  /** Whether {@code other} is in the same store as this: any directory, or the same bucket. */
  boolean sameContainer(Location other);

  /**
   * The path on this host's file system, where this is one: for what only a file system has (a
   * directory made owner-only, a file locked while a run writes beside it, an image that may lie
   * inside the library it saves). Empty for an object, which has none of these.
   */
  Optional<Path> localPath();

  /**
   * The file on this host through which its runs take turns at this: beside it for a path (its
   * name and {@code suffix}, in its directory's real path); for an object, which has no
   * directory here, in the temporary directory, named {@code elsewhere} and a digest of it.
   */
  Path onThisHost(String suffix, String elsewhere) throws IOException;

  /** Whether the store copies an object into another itself, without the bytes passing here. */
  boolean copiesWithin();

  /**
   * The smallest part but the last of an object written in parts (0: written as one stream):
   * shards that compress to less cannot be parts of an image's upload.
   */
  long minimumPart();

  /** Whether this names a directory or key prefix rather than a file or object. */
  boolean isDirectory(S3Settings s3);

  /**
   * This, ready for an image to be written to it (named by {@code option} in an error): a file
   * whose directory exists, or an object in a bucket that answers.
   */
  Location forImage(String option, S3Settings s3);

  /** Whether this is in a store rather than a local path: for the store packages. */
  default boolean isInStore() {
    return this instanceof InStore;
  }

  /**
   * {@code local} of the path, or {@code object} of the object: for the few things done one way
   * in a directory and another in a bucket (what a killed run leaves, how an image is found
   * busy), chosen by the kind this was parsed as, never by its spelling.
   */
  default <T> T match(Function<Path, T> local,
      Function<ObjectUri, T> object) {
    return this instanceof InStore o ? object.apply(o.uri()) : local.apply(((Local) this).path());
  }
}

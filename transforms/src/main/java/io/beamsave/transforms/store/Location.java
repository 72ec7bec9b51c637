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
  static InStore object(String text, String option) {
    if (!inStore(text)) {
      throw new BeamsaveException(option + " " + text
          + ": give an object in S3-compatible storage, s3://BUCKET/KEY");
    }
    return new InStore(ObjectUri.parse(text, false));
  }

  /** Like {@link #object}, for a key prefix (a bucket's top too): {@code s3://BUCKET/PREFIX}. */
  static InStore prefix(String text, String option) {
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

  /** Whether this is in a store rather than a local path. */
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

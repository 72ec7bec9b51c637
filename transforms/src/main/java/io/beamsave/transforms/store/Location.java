package io.beamsave.transforms.store;

import java.nio.file.Path;

/**
 * Where something of beamsave's is: a local path or an object (or key prefix) in S3-compatible
 * storage, as an operator writes it ({@code /backup/x.bsave}, {@code s3://bucket/key}). {@link
 * #of} is the one place that tells the two apart; everything that differs between them (the
 * parent, a child, which store holds it) is answered here, by kind, so no caller looks at a
 * location's spelling again.
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
    public String toString() {
      return uri.toString();
    }
  }

  /**
   * The location {@code text} names: {@code s3://BUCKET/KEY} (a key may be empty: a bucket's
   * top) is in a store, anything else a local path.
   */
  static Location of(String text) {
    return inStore(text) ? new InStore(ObjectUri.parse(text, true))
        : new Local(Path.of(text));
  }

  /** Whether {@code text} names a location in a store rather than a local path. */
  static boolean inStore(String text) {
    return text != null && text.startsWith(ObjectUri.SCHEME);
  }

  /** The directory or key prefix holding this (a local one made absolute). */
  Location parent();

  /** {@code name} under this, taken as a directory or key prefix. */
  Location child(String name);

  /** Whether this is in a store rather than a local path. */
  default boolean isInStore() {
    return this instanceof InStore;
  }
}

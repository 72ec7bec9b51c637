package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.Printable;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A path as the filesystem's bytes: a catalog path ({@code /}-separated components relative to
 * the library root) or a symlink target. Linux allows any byte in a name but {@code /} and NUL,
 * UTF-8 or not, and what was saved must come back exactly, so paths are never decoded; {@link
 * #toString()} gives the {@link Printable} form. Immutable. Ordered by unsigned bytes, which for
 * UTF-8 names is code point order.
 */
public final class PathBytes implements Comparable<PathBytes>, Serializable {
  private static final long serialVersionUID = 1L;

  private final byte[] bytes;
  private transient int hash;

  private PathBytes(byte[] bytes) {
    this.bytes = bytes;
  }

  /** A copy of {@code bytes}. */
  public static PathBytes of(byte[] bytes) {
    return new PathBytes(bytes.clone());
  }

  /** The UTF-8 bytes of {@code text}. */
  public static PathBytes of(String text) {
    return new PathBytes(text.getBytes(StandardCharsets.UTF_8));
  }

  /** Takes {@code bytes} without copying: the caller gives them up. */
  static PathBytes wrap(byte[] bytes) {
    return new PathBytes(bytes);
  }

  /**
   * The bytes themselves, not a copy, for the system calls that take them: callers must not
   * change them.
   */
  public byte[] bytes() {
    return bytes;
  }

  public int length() {
    return bytes.length;
  }

  public boolean isEmpty() {
    return bytes.length == 0;
  }

  /** This path with {@code name} (one component) appended. */
  public PathBytes child(byte[] name) {
    if (bytes.length == 0) {
      return new PathBytes(name.clone());
    }
    byte[] b = Arrays.copyOf(bytes, bytes.length + 1 + name.length);
    b[bytes.length] = '/';
    System.arraycopy(name, 0, b, bytes.length + 1, name.length);
    return new PathBytes(b);
  }

  /** The index of the last {@code /}, or -1 for a path of one component. */
  public int lastSlash() {
    for (int i = bytes.length - 1; i >= 0; i--) {
      if (bytes[i] == '/') {
        return i;
      }
    }
    return -1;
  }

  /** The directory holding this path, or {@code null} for a path of one component. */
  public PathBytes parent() {
    int slash = lastSlash();
    return slash < 0 ? null : new PathBytes(Arrays.copyOf(bytes, slash));
  }

  /** The last component. */
  public byte[] fileName() {
    return Arrays.copyOfRange(bytes, lastSlash() + 1, bytes.length);
  }

  /** The printable form: UTF-8 where harmless, {@code \xNN} for other bytes. */
  @Override
  public String toString() {
    return Printable.bytes(bytes);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PathBytes p && Arrays.equals(bytes, p.bytes);
  }

  @Override
  public int hashCode() {
    int h = hash;
    if (h == 0) {
      h = Arrays.hashCode(bytes);
      hash = h;
    }
    return h;
  }

  @Override
  public int compareTo(PathBytes o) {
    return Arrays.compareUnsigned(bytes, o.bytes);
  }
}

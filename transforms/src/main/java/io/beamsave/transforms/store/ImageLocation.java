package io.beamsave.transforms.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;

/**
 * Where an image is, as one identity however its location is spelled: the guards that keep a
 * command from writing over an image it reads compare these, never strings. A local path is
 * known by its directory (resolved: {@code img/./x}, {@code ./img/x} and a symlinked directory
 * meet) and its name, and, where the file exists, by its device and inode (a symlink to the
 * image, a hard link); an {@code s3://} location by its bucket and its key with empty and dot
 * segments resolved ({@link #keyAsServed}), the endpoint being the command's.
 */
public final class ImageLocation {
  private final String shown;
  /** {@code s3://B/K}, or the resolved directory and the name. */
  private final String place;
  /** The file's device and inode where it exists (following a symlink), else null. */
  private final Object fileKey;

  private ImageLocation(String shown, String place, Object fileKey) {
    this.shown = shown;
    this.place = place;
    this.fileKey = fileKey;
  }

  /** The identity of {@code location}, a path or {@code s3://B/K}, as it is now. */
  public static ImageLocation of(String location) {
    if (Location.inStore(location)) {
      ObjectUri uri = ObjectUri.parse(location, true);
      return new ImageLocation(location,
          new ObjectUri(uri.bucket(), keyAsServed(uri.key())).toString(), null);
    }
    // Not normalised first: "link/../x" is where the link's target's parent is, as the
    // kernel resolves it, which toRealPath does.
    Path p = Path.of(location).toAbsolutePath();
    Path dir = p.getParent();
    String name = p.getFileName() == null ? "" : p.getFileName().toString();
    if (name.equals("..") || name.equals(".")) {
      p = p.normalize();
      dir = p.getParent();
      name = p.getFileName() == null ? "" : p.getFileName().toString();
    }
    Path resolved = dir == null ? null : dir.normalize();
    try {
      resolved = dir == null ? null : dir.toRealPath();
    } catch (IOException e) {
      // A directory not made yet: compared as spelled, normalised.
    }
    Object key = null;
    try {
      key = Files.readAttributes(p, BasicFileAttributes.class).fileKey();
    } catch (NoSuchFileException absent) {
      // Not there (yet): known by its place alone.
    } catch (IOException e) {
      // Unreadable attributes: known by its place alone.
    }
    return new ImageLocation(location, resolved + "/" + name, key);
  }

  /**
   * {@code key} with empty segments and {@code .} left out and {@code ..} taking the segment
   * before it. S3 keeps {@code a/./b}, {@code a//b} and {@code a/b} apart, but a server or proxy
   * that resolves its URL paths first serves all three from one object, so a guard takes them
   * for one: it may refuse a key that was another object, never let one through that was the
   * same.
   */
  static String keyAsServed(String key) {
    java.util.ArrayDeque<String> kept = new java.util.ArrayDeque<>();
    for (String segment : key.split("/", -1)) {
      if (segment.equals("..")) {
        kept.pollLast();
      } else if (!segment.isEmpty() && !segment.equals(".")) {
        kept.addLast(segment);
      }
    }
    return String.join("/", kept);
  }

  /** Whether {@code a} and {@code b} name the same image (or the same place for one). */
  public static boolean same(String a, String b) {
    return of(a).sameAs(of(b));
  }

  public boolean sameAs(ImageLocation other) {
    return place.equals(other.place)
        || (fileKey != null && Objects.equals(fileKey, other.fileKey));
  }

  /** The location as it was given. */
  @Override
  public String toString() {
    return shown;
  }
}

package io.beamsave.transforms.image.catalog;

/**
 * The rules a path must keep to be held in a catalog and restored from it: its length, its
 * components, its depth. The reader refuses an image whose paths break them, the walk a library
 * whose paths would, and the restore checks them again before it creates anything.
 */
public final class CatalogPaths {
  /** Paths and link targets are prefixed by a u16 length. */
  public static final int MAX_NAME_BYTES = 65_535;

  private CatalogPaths() {}

  /** Why a catalog path is unsafe to restore, or {@code null} if it is a clean relative path. */
  public static String problem(PathBytes path) {
    byte[] p = path.bytes();
    if (p.length == 0) {
      return "empty";
    }
    if (p[0] == '/') {
      return "absolute";
    }
    if (containsNul(p)) {
      return "contains NUL";
    }
    int start = 0;
    while (start <= p.length) {
      int end = start;
      while (end < p.length && p[end] != '/') {
        end++;
      }
      int len = end - start;
      if (len == 0
          || (len == 1 && p[start] == '.')
          || (len == 2 && p[start] == '.' && p[start + 1] == '.')) {
        return "has an empty, '.' or '..' component";
      }
      start = end + 1;
    }
    return null;
  }

  /** How many components {@code path} has. */
  public static int depth(PathBytes path) {
    int n = path.isEmpty() ? 0 : 1;
    for (byte b : path.bytes()) {
      n += b == '/' ? 1 : 0;
    }
    return n;
  }

  /** Whether {@code b} holds a NUL byte, which no name on Linux may. */
  static boolean containsNul(byte[] b) {
    for (byte v : b) {
      if (v == 0) {
        return true;
      }
    }
    return false;
  }
}

package io.beamsave.transforms.image.catalog;

import java.util.Comparator;

/**
 * The order of a paged catalog's entries: by path, component by component, each component by
 * unsigned bytes. It is byte order with {@code /} taken as lower than any byte a name may hold
 * (no name holds NUL), so a directory is followed at once by everything beneath it ({@code a},
 * {@code a/b}, {@code a-c}; byte order puts {@code a-c} between {@code a} and {@code a/b}). A
 * walk that sorts each directory yields it without sorting the whole tree, a reader checks that
 * every parent came before with a stack of the current path's directories, and a subtree is one
 * run of pages.
 */
public final class PathOrder {
  private PathOrder() {}

  public static final Comparator<PathBytes> PATHS = PathOrder::compare;

  public static final Comparator<Entry> ENTRIES = (a, b) -> compare(a.path(), b.path());

  public static int compare(PathBytes a, PathBytes b) {
    return compare(a.bytes(), b.bytes());
  }

  public static int compare(byte[] a, byte[] b) {
    int i = java.util.Arrays.mismatch(a, b);
    if (i < 0) {
      return 0;
    }
    if (i == a.length || i == b.length) {
      return a.length - b.length;
    }
    return rank(a[i]) - rank(b[i]);
  }

  /** Whether {@code entries} are in this order, each after the one before. */
  public static boolean isSorted(java.util.List<Entry> entries) {
    for (int i = 1; i < entries.size(); i++) {
      if (compare(entries.get(i - 1).path(), entries.get(i).path()) >= 0) {
        return false;
      }
    }
    return true;
  }

  private static int rank(byte v) {
    return v == '/' ? 0 : Byte.toUnsignedInt(v);
  }

  /**
   * Whether {@code path} is {@code under} or beneath it; everything is under the empty path.
   */
  public static boolean within(PathBytes path, PathBytes under) {
    byte[] p = path.bytes();
    byte[] u = under.bytes();
    if (u.length == 0) {
      return true;
    }
    return p.length >= u.length && java.util.Arrays.equals(p, 0, u.length, u, 0, u.length)
        && (p.length == u.length || p[u.length] == '/');
  }

  /**
   * Whether an entry at or after {@code path}, in this order, may still lie {@code under}: false
   * once the order has passed the subtree.
   */
  public static boolean pastSubtree(PathBytes path, PathBytes under) {
    return !under.isEmpty() && compare(path, under) > 0 && !within(path, under);
  }
}

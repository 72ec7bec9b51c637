package io.beamsave.transforms.fs;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The directories beneath a root, each opened from its parent's handle without following a
 * link, with the chain to the last one asked for kept open: asking in path order opens each
 * directory once. Nothing reached through it lies outside the root, whatever is renamed or
 * swapped for a link meanwhile. At most {@link #OPEN} handles of the chain stay open, the
 * deepest ones, so a tree nested thousands deep cannot exhaust the process's descriptors; a
 * directory above them is reopened, from the deepest open one above it, when needed again. Not
 * thread-safe: one per worker thread. Closing it closes the chain but not the root.
 */
public final class Beneath implements AutoCloseable {
  /** Handles of the chain kept open. */
  static final int OPEN = 32;

  private final Dir root;
  private final List<byte[]> names = new ArrayList<>();
  /** The chain's handles by depth - 1; null where closed to stay within {@link #OPEN}. */
  private final List<Dir> chain = new ArrayList<>();

  public Beneath(Dir root) {
    this.root = root;
  }

  public Dir root() {
    return root;
  }

  /**
   * The directory at {@code path[0, end)}, a {@code /}-separated path relative to the root
   * (empty for the root itself).
   */
  public Dir dir(byte[] path, int end) throws IOException {
    List<byte[]> want = Dir.components(end == path.length ? path : Arrays.copyOf(path, end));
    int common = 0;
    while (common < want.size() && common < names.size()
        && Arrays.equals(want.get(common), names.get(common))) {
      common++;
    }
    truncate(common);
    // Reopen what was closed of the common part, from the deepest handle still open above it.
    int from = common;
    while (from > 0 && chain.get(from - 1) == null) {
      from--;
    }
    for (int i = from; i < want.size(); i++) {
      Dir parent = i == 0 ? root : chain.get(i - 1);
      Dir next = parent.openDir(want.get(i));
      if (i < chain.size()) {
        chain.set(i, next);
      } else {
        chain.add(next);
        names.add(want.get(i));
      }
      int tooDeep = i - OPEN;
      if (tooDeep >= 0 && chain.get(tooDeep) != null) {
        chain.set(tooDeep, null).close();
      }
    }
    return want.isEmpty() ? root : chain.get(want.size() - 1);
  }

  private void truncate(int depth) throws IOException {
    while (chain.size() > depth) {
      Dir d = chain.remove(chain.size() - 1);
      names.remove(names.size() - 1);
      if (d != null) {
        d.close();
      }
    }
  }

  @Override
  public void close() throws IOException {
    truncate(0);
  }
}

package io.beamsave.transforms.fs;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The directories beneath a root, each opened from its parent's handle without following a
 * link, with the chain to the last one asked for kept open: asking in path order opens each
 * directory once. Nothing reached through it lies outside the root, whatever is renamed or
 * swapped for a link meanwhile. Not thread-safe: one per worker thread. Closing it closes the
 * chain but not the root.
 */
public final class Beneath implements AutoCloseable {
  private final Dir root;
  private final List<byte[]> names = new ArrayList<>();
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
    for (int i = common; i < want.size(); i++) {
      Dir parent = i == 0 ? root : chain.get(i - 1);
      Dir next = parent.openDir(want.get(i));
      chain.add(next);
      names.add(want.get(i));
    }
    return want.isEmpty() ? root : chain.get(want.size() - 1);
  }

  private void truncate(int depth) throws IOException {
    while (chain.size() > depth) {
      chain.remove(chain.size() - 1).close();
      names.remove(names.size() - 1);
    }
  }

  @Override
  public void close() throws IOException {
    truncate(0);
  }
}

package io.beamsave.transforms.walk;

import io.beamsave.transforms.fs.Dir;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A directory handle shared by the walk, while it hands on the directory's entries, and by
 * the listings of its subdirectories, each of which opens its own from it: closed when the
 * last has, so that the handles open at once number about the walk's depth and its window,
 * not its width.
 */
final class SharedDir {
  private final Set<SharedDir> open;
  final Dir dir;
  final boolean owned;
  final AtomicInteger users = new AtomicInteger(1);

  SharedDir(Set<SharedDir> open, Dir dir, boolean owned) {
    this.open = open;
    this.dir = dir;
    this.owned = owned;
    if (owned) {
      open.add(this);
    }
  }

  void retain() {
    users.incrementAndGet();
  }

  void release() {
    if (users.decrementAndGet() == 0) {
      closeNow();
    }
  }

  void closeNow() {
    if (owned && open.remove(this)) {
      try {
        dir.close();
      } catch (IOException ignored) {
        // A listing handle: nothing was written through it.
      }
    }
  }
}

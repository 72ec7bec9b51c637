package io.beamsave.transforms.walk;

import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The regular files of more than one name a walk has met, by device and inode, so that each
 * later name is saved as a link to the first (whose bytes the image holds once). A group is
 * forgotten once all its names have been met; at most {@link #MAX_GROUPS} are remembered at
 * once (a library of hard-linked snapshots whose other names lie outside it would hold one per
 * file), beyond which further names are saved as files of their own, with a warning. One walk's,
 * in path order, on the thread that hands its entries on.
 */
final class HardLinks {
  static final int MAX_GROUPS = 1 << 20;

  private record Inode(long device, long inode) {}

  private static final class Group {
    final Entry first;
    int left;

    Group(Entry first, int left) {
      this.first = first;
      this.left = left;
    }

    /**
     * Whether {@code e} is the same file as the first name, not another one given its inode
     * since (a file removed and one made during the walk): its times and size agree.
     */
    boolean same(Entry e) {
      return e.size() == first.size() && e.mtimeSeconds() == first.mtimeSeconds()
          && e.mtimeNanos() == first.mtimeNanos() && e.ctimeSeconds() == first.ctimeSeconds()
          && e.ctimeNanos() == first.ctimeNanos();
    }
  }

  private final Map<Inode, Group> groups = new HashMap<>();
  private final int max;
  private boolean warned;
  private long links;

  HardLinks() {
    this(MAX_GROUPS);
  }

  HardLinks(int max) {
    this.max = max;
  }

  /**
   * {@code e} as the walk saves it: a later name of a file met before becomes a link to it; a
   * file of {@code links} names is remembered for its others.
   */
  Entry of(Entry e, long device, int names) {
    if (!e.isFile() || names < 2 || e.unreadable()) {
      return e;
    }
    Inode key = new Inode(device, e.inode());
    Group g = groups.get(key);
    if (g != null && !g.same(e)) {
      groups.remove(key);
      g = null;
    }
    if (g == null) {
      if (groups.size() >= max) {
        if (!warned) {
          warned = true;
          LibraryWalker.warn("more than " + max + " files with other names are waiting for"
              + " them; later names of further files are saved as files of their own (first: "
              + e.path() + ")");
        }
        return e;
      }
      groups.put(key, new Group(e, names - 1));
      return e;
    }
    if (--g.left <= 0) {
      groups.remove(key);
    }
    links++;
    return new Entry(e.path(), EntryType.HARDLINK, e.flags(), e.mode(), e.uid(), e.gid(),
        e.mtimeSeconds(), e.mtimeNanos(), e.ctimeSeconds(), e.ctimeNanos(), e.inode(), 0,
        g.first.path(), List.of(), e.meta());
  }

  /** How many names were saved as links. */
  long links() {
    return links;
  }
}

package io.beamsave.pipelines.restore;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.select.Glob;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Hard links as a restore takes them, in path order. A link must name a regular file of the
 * image, which comes before it: the restore has made that file by the time it links to it, so a
 * link can never reach a file the restore did not make (a crafted image naming a path that is
 * not its file, in a target that already holds one by that name). The files met lately are
 * remembered; a link to one further back is checked in the catalog. A link whose file a
 * selection leaves out is restored as a file of its own with that file's bytes, and further
 * links to the same file as links to that one.
 */
public final class LinksOut {
  /** Files remembered as met: links mostly name a file near them. */
  static final int RECENT = 1 << 16;

  private final List<Glob> matchers;
  private final Function<PathBytes, Entry> lookup;
  /** What a refusal starts with, before the link's path. */
  private final String refusal;
  private final Map<PathBytes, Boolean> recent = new LinkedHashMap<>(1024, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<PathBytes, Boolean> eldest) {
      return size() > RECENT;
    }
  };
  /** Files a selection leaves out, by the path of the first of their links restored instead. */
  private final Map<PathBytes, PathBytes> standIns = new HashMap<>();

  /**
   * For a restore of what {@code globs} select (all, when none); {@code lookup} finds an entry
   * of the image by path, or null.
   */
  LinksOut(List<String> globs, Function<PathBytes, Entry> lookup) {
    this(globs, lookup, "cannot restore");
  }

  /**
   * Checks the links of all of an image, as verify does: a link that names no regular file of
   * it is refused in one line starting with {@code refusal}.
   */
  public LinksOut(Function<PathBytes, Entry> lookup, String refusal) {
    this(null, lookup, refusal);
  }

  private LinksOut(List<String> globs, Function<PathBytes, Entry> lookup, String refusal) {
    this.matchers = globs == null || globs.isEmpty() ? null : Selection.compile(globs);
    this.lookup = lookup;
    this.refusal = refusal;
  }

  /** {@code e}, checked if a link; for a link whose file is left out, its stand-in. */
  public Entry resolve(Entry e) {
    if (e.isFile()) {
      recent.put(e.path(), Boolean.TRUE);
      return e;
    }
    if (!e.isHardLink()) {
      return e;
    }
    PathBytes to = e.linkTarget();
    boolean taken = matchers == null || takes(to);
    if (taken && recent.containsKey(to)) {
      return e;
    }
    PathBytes standIn = standIns.get(to);
    if (!taken && standIn != null) {
      return new Entry(e.path(), EntryType.HARDLINK, e.flags(), e.mode(), e.uid(), e.gid(),
          e.mtimeSeconds(), e.mtimeNanos(), e.ctimeSeconds(), e.ctimeNanos(), e.inode(), 0,
          standIn, List.of(), e.meta());
    }
    Entry file = lookup.apply(to);
    if (file == null || !file.isFile()) {
      throw new BeamsaveException(refusal + " " + e.path() + ": it is a hard link to " + to
          + ", which is not a regular file of the image");
    }
    if (taken) {
      return e;
    }
    standIns.put(to, e.path());
    return new Entry(e.path(), EntryType.FILE, file.flags(), e.mode(), e.uid(), e.gid(),
        e.mtimeSeconds(), e.mtimeNanos(), e.ctimeSeconds(), e.ctimeNanos(), e.inode(),
        file.size(), null, file.extents(), e.meta());
  }

  private boolean takes(PathBytes file) {
    for (Glob m : matchers) {
      if (m.matchesSelfOrParent(file, false)) {
        return true;
      }
    }
    return false;
  }
}

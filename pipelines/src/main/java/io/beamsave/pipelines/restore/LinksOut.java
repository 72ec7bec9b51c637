package io.beamsave.pipelines.restore;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.EntryType;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.select.Glob;
import java.util.List;
import java.util.function.Function;

/**
 * Hard links a selection takes without the file they are links to: restored as files of their
 * own, with that file's bytes (a link to a file the restore does not make would reach whatever
 * the target holds by that name). Which files a selection takes is a matter of their paths, so
 * this needs no list of them.
 */
final class LinksOut {
  private final List<Glob> matchers;
  private final Function<PathBytes, Entry> lookup;

  /**
   * For a restore of what {@code globs} select (all, when none); {@code lookup} finds an entry
   * of the image by path, or null.
   */
  LinksOut(List<String> globs, Function<PathBytes, Entry> lookup) {
    this.matchers = globs == null || globs.isEmpty() ? null : Selection.compile(globs);
    this.lookup = lookup;
  }

  /** {@code e}, or for a link whose file the selection leaves out, that file at its path. */
  Entry resolve(Entry e) {
    if (!e.isHardLink() || matchers == null || takes(e.linkTarget())) {
      return e;
    }
    Entry file = lookup.apply(e.linkTarget());
    if (file == null || !file.isFile()) {
      throw new BeamsaveException("cannot restore " + e.path() + ": the file it is a link to, "
          + e.linkTarget() + ", is not in the image");
    }
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

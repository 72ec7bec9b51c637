package io.beamsave.pipelines.restore;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.EntryType;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.select.Glob;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Which catalog entries a restore takes: all of them, or those matching any {@code --include}
 * {@link Glob} (matched against the relative path's bytes, with gitignore's rules: a pattern
 * without a {@code /} matches at any depth), everything under a matching directory, and the
 * directories that hold them.
 */
public final class Selection {
  private Selection() {}

  public static List<Entry> select(List<Entry> entries, List<String> globs) {
    if (globs == null || globs.isEmpty()) {
      return entries;
    }
    List<Glob> matchers = new ArrayList<>();
    for (String g : globs) {
      try {
        matchers.add(Glob.compile(g, "--include"));
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException(e.getMessage());
      }
    }
    Set<PathBytes> chosen = new HashSet<>();
    for (Entry e : entries) {
      boolean dir = e.type() == EntryType.DIRECTORY;
      if (matchers.stream().anyMatch(m -> m.matchesSelfOrParent(e.path(), dir))) {
        for (PathBytes p = e.path(); p != null && chosen.add(p); p = p.parent()) {
          // The entry and every directory above it.
        }
      }
    }
    List<Entry> out = new ArrayList<>(chosen.size());
    for (Entry e : entries) {
      if (chosen.contains(e.path())) {
        out.add(e);
      }
    }
    return out;
  }
}

package io.beamsave.pipelines.restore;

import io.beamsave.transforms.image.Entry;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which catalog entries a restore takes: all of them, or those matching any {@code --include}
 * glob (matched against the relative path; {@code *} stays within a directory, {@code **}
 * crosses them), everything under a matching directory, and the directories that hold them.
 */
public final class Selection {
  private Selection() {}

  public static List<Entry> select(List<Entry> entries, List<String> globs) {
    if (globs == null || globs.isEmpty()) {
      return entries;
    }
    List<PathMatcher> matchers = new ArrayList<>();
    for (String g : globs) {
      matchers.add(FileSystems.getDefault().getPathMatcher("glob:" + g));
    }
    Map<String, Entry> byPath = new LinkedHashMap<>();
    entries.forEach(e -> byPath.put(e.path(), e));
    Set<String> chosen = new HashSet<>();
    for (Entry e : entries) {
      if (matchesSelfOrParent(e.path(), matchers)) {
        chosen.add(e.path());
        for (int i = e.path().lastIndexOf('/'); i > 0; i = e.path().lastIndexOf('/', i - 1)) {
          chosen.add(e.path().substring(0, i));
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

  private static boolean matchesSelfOrParent(String path, List<PathMatcher> matchers) {
    Path p = Path.of(path);
    for (Path q = p; q != null; q = q.getParent()) {
      for (PathMatcher m : matchers) {
        if (m.matches(q)) {
          return true;
        }
      }
    }
    return false;
  }
}

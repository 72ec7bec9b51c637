package io.beamsave.pipelines.restore;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.select.Glob;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

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
    List<Glob> matchers = compile(globs);
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

  static List<Glob> compile(List<String> globs) {
    List<Glob> matchers = new ArrayList<>();
    for (String g : globs) {
      try {
        matchers.add(Glob.compile(g, "--include"));
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException(e.getMessage());
      }
    }
    return matchers;
  }

  /**
   * Where the entries {@code globs} can select lie: the directories their anchored parts name
   * ({@link Glob#literalDirectory}), none beneath another, in path order; the library's root
   * alone (the empty path) when any may match anywhere, or when there are no globs.
   */
  public static List<PathBytes> under(List<String> globs) {
    List<PathBytes> dirs = new ArrayList<>();
    for (String g : globs == null ? List.<String>of() : globs) {
      PathBytes d = Glob.literalDirectory(g);
      if (d == null) {
        return List.of(PathBytes.of(new byte[0]));
      }
      dirs.add(d);
    }
    if (dirs.isEmpty()) {
      return List.of(PathBytes.of(new byte[0]));
    }
    dirs.sort(PathOrder.PATHS);
    List<PathBytes> out = new ArrayList<>();
    for (PathBytes d : dirs) {
      if (out.isEmpty() || !PathOrder.within(d, out.get(out.size() - 1))) {
        out.add(d);
      }
    }
    return out;
  }

  /**
   * {@link #select} over entries given one at a time in path order, holding only the
   * directories above the entry at hand: an entry is taken when a glob matches it or a
   * directory above it, and the directories above it with it, each once, before it.
   */
  public static final class Stream {
    private final List<Glob> matchers;
    private final Consumer<Entry> out;
    /** The directories above the entry at hand, deepest last. */
    private final ArrayList<Entry> above = new ArrayList<>();
    /**
     * How many of {@link #above}, from the top of the tree, were taken: a directory is taken
     * with all those above it, so the taken ones are always the first.
     */
    private int taken;

    /** Hands the entries {@code globs} select to {@code out}; all of them without globs. */
    public Stream(List<String> globs, Consumer<Entry> out) {
      this.matchers = globs == null || globs.isEmpty() ? null : compile(globs);
      this.out = out;
    }

    public void accept(Entry e) {
      if (matchers == null) {
        out.accept(e);
        return;
      }
      while (!above.isEmpty()
          && !PathOrder.within(e.path(), above.get(above.size() - 1).path())) {
        above.remove(above.size() - 1);
      }
      taken = Math.min(taken, above.size());
      boolean dir = e.type() == EntryType.DIRECTORY;
      boolean match = false;
      for (Glob m : matchers) {
        if (m.matchesSelfOrParent(e.path(), dir)) {
          match = true;
          break;
        }
      }
      if (match) {
        for (Entry d : above.subList(taken, above.size())) {
          out.accept(d);
        }
        taken = above.size();
        out.accept(e);
      }
      if (dir) {
        above.add(e);
        taken += match ? 1 : 0;
      }
    }
  }
}

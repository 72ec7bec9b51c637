package io.beamsave.transforms.select;

import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * What a save leaves out of a library: entries matching an {@code --exclude} {@link Glob}
 * (gitignore's rules: a pattern without a {@code /} matches at any depth, a trailing {@code /}
 * only directories, and a directory left out takes everything under it), the contents of
 * directories tagged as caches ({@code CACHEDIR.TAG}, kept itself, as GNU tar and restic do), and
 * beamsave's own files when the image is written inside the library, given as patterns anchored
 * at the library's root, and with {@code --one-file-system} what lies on other filesystems than
 * the library root's (a mount point is kept, empty, as tar and restic keep it).
 */
public final class Excludes implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The tag a cache directory holds, and how its content begins (bford.info/cachedir). */
  public static final String CACHE_TAG = "CACHEDIR.TAG";
  public static final String CACHE_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55";

  public static final Excludes NONE = new Excludes(List.of(), false, List.of(), false);

  private final List<String> patterns;
  private final boolean caches;
  private final boolean otherFileSystems;
  /** Patterns, anchored at the library root, of beamsave's own files inside it. */
  private final List<String> own;
  private transient List<Glob> globs;

  private Excludes(List<String> patterns, boolean caches, List<String> own,
      boolean otherFileSystems) {
    this.patterns = List.copyOf(patterns);
    this.caches = caches;
    this.otherFileSystems = otherFileSystems;
    this.own = List.copyOf(own);
  }

  /**
   * The operator's {@code patterns} and whether cache directories are left out; a pattern that
   * does not compile is an {@link IllegalArgumentException} naming it.
   */
  public static Excludes of(List<String> patterns, boolean caches) {
    Excludes e = new Excludes(patterns, caches, List.of(), false);
    e.globs();
    return e;
  }

  /** These, and with {@code exclude} what is not on the library root's filesystem. */
  public Excludes withOtherFileSystems(boolean exclude) {
    return new Excludes(patterns, caches, own, exclude);
  }

  /** Whether what lies on other filesystems than the library root's is left out. */
  public boolean otherFileSystems() {
    return otherFileSystems;
  }

  /** These, and also what matches {@code ownPatterns} (anchored, quoted as globs). */
  public Excludes withOwn(List<String> ownPatterns) {
    List<String> all = new ArrayList<>(own);
    all.addAll(ownPatterns);
    return new Excludes(patterns, caches, all, otherFileSystems);
  }

  public List<String> patterns() {
    return patterns;
  }

  public boolean caches() {
    return caches;
  }

  private List<Glob> globs() {
    if (globs == null) {
      List<Glob> g = new ArrayList<>();
      for (String p : patterns) {
        g.add(Glob.compile(p, "--exclude"));
      }
      for (String p : own) {
        g.add(Glob.compile(p, "beamsave's own files"));
      }
      globs = g;
    }
    return globs;
  }

  /** Whether the entry at {@code rel} is left out, with all under it if a directory. */
  public boolean excludes(PathBytes rel, boolean isDirectory) {
    return match(rel, isDirectory) >= 0;
  }

  /**
   * Which pattern leaves out the entry at {@code rel}: the index of the operator's in {@link
   * #patterns}, at least that many for one of beamsave's own, or -1 for none.
   */
  public int match(PathBytes rel, boolean isDirectory) {
    List<Glob> all = globs();
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).matches(rel, isDirectory)) {
        return i;
      }
    }
    return -1;
  }

  /** What {@code pattern}, which matched nothing, may have been meant to say. */
  public static String hint(String pattern) {
    String p = pattern.replaceAll("/+$", "");
    if (p.startsWith("/")) {
      return "a pattern starting with '/' is matched from the library's top only";
    }
    if (p.contains("/")) {
      return "a pattern with a '/' is matched from the library's top ('**/" + p
          + "' matches at any depth)";
    }
    if (p.startsWith("*")) {
      return "no name in the library matches it";
    }
    return "a pattern matches whole names ('*" + p + "' matches names ending so)";
  }

  /** {@code text} as a glob that matches only itself. */
  public static String quote(String text) {
    StringBuilder b = new StringBuilder(text.length() + 8);
    text.codePoints().forEach(cp -> {
      if ("*?[]{},\\".indexOf(cp) >= 0) {
        b.append('\\');
      }
      b.appendCodePoint(cp);
    });
    return b.toString();
  }
}

package io.beamsave.transforms.select;

import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.select.GlobSyntax.AnyChar;
import io.beamsave.transforms.select.GlobSyntax.Anything;
import io.beamsave.transforms.select.GlobSyntax.ByteToken;
import io.beamsave.transforms.select.GlobSyntax.SetToken;
import io.beamsave.transforms.select.GlobSyntax.Star;
import io.beamsave.transforms.select.GlobSyntax.Token;
import java.util.List;

/**
 * An {@code --include} or {@code --exclude} pattern, matched against a library-relative path's
 * bytes, with gitignore's rules of where it applies:
 *
 * <ul>
 *   <li>a pattern with no {@code /} but a trailing one matches a name at any depth ({@code
 *       *.conf} is {@code **}{@code /*.conf}); one with a {@code /} at its start or in its middle
 *       is anchored at the library's root ({@code /build}, {@code etc/*.conf});
 *   <li>a trailing {@code /} matches directories only ({@code cache/});
 *   <li>a match of a directory takes in everything under it.
 * </ul>
 *
 * <p>The syntax is the glob of Java's {@code PathMatcher}: {@code *} matches within a name,
 * {@code **} as a whole component any number of directories ({@code a/**}{@code /b} also
 * matches {@code a/b}; elsewhere it is {@code *}, as in git), {@code ?} one character, {@code
 * [abc]} / {@code [!a-z]} one of a set (ASCII ranges), {@code {a,b}} either; a backslash quotes
 * the next character. Beyond Java's, {@code \xNN} matches the byte NN, which is how a name that
 * is not UTF-8 is written, the way {@code list} prints it ({@link
 * io.beamsave.transforms.Printable}).
 *
 * <p>Names are anyone's to choose, so matching never backtracks: the pattern is a sequence of
 * tokens ({@link GlobSyntax}) run over the path's bytes once, keeping the set of positions
 * reached (time bounded by the pattern's length times the path's).
 */
public final class Glob {
  private final List<Token[]> alternatives;
  private final boolean anchored;
  private final boolean directoriesOnly;

  private Glob(List<Token[]> alternatives, boolean anchored, boolean directoriesOnly) {
    this.alternatives = alternatives;
    this.anchored = anchored;
    this.directoriesOnly = directoriesOnly;
  }

  /**
   * The path an anchored pattern without wildcards names ({@code d/f}, {@code /etc/}), which
   * matches that path and what is beneath it only; null for any other pattern.
   */
  public static PathBytes literalPath(String pattern) {
    String p = pattern;
    while (p.length() > 1 && p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    if (p.indexOf('/') < 0 || p.chars().anyMatch(c -> "*?[]{}\\".indexOf(c) >= 0)) {
      return null;
    }
    p = p.startsWith("/") ? p.substring(1) : p;
    return p.isEmpty() || p.contains("//") ? null : PathBytes.of(p);
  }

  /**
   * The directory beneath which everything an anchored pattern matches lies: its leading whole
   * components without wildcards ({@code etc} of {@code etc/*.conf} or {@code /etc/ssh/**}, the
   * path itself of a pattern without wildcards); null when that is the library's root (a
   * pattern that matches at any depth, or whose first component has a wildcard).
   */
  public static PathBytes literalDirectory(String pattern) {
    PathBytes whole = literalPath(pattern);
    if (whole != null) {
      return whole;
    }
    String p = pattern;
    while (p.length() > 1 && p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    if (p.indexOf('/') < 0) {
      return null; // Not anchored: it matches at any depth.
    }
    p = p.startsWith("/") ? p.substring(1) : p;
    int lastSlash = -1;
    for (int i = 0; i < p.length() && "*?[]{}\\".indexOf(p.charAt(i)) < 0; i++) {
      lastSlash = p.charAt(i) == '/' ? i : lastSlash;
    }
    String dir = lastSlash <= 0 ? "" : p.substring(0, lastSlash);
    return dir.isEmpty() || dir.contains("//") ? null : PathBytes.of(dir);
  }

  /** Compiles {@code pattern}, given as {@code option} (named in errors). */
  public static Glob compile(String pattern, String option) {
    try {
      return compile(pattern);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + " '" + pattern + "': " + e.getMessage());
    }
  }

  private static Glob compile(String pattern) {
    String glob = pattern;
    boolean directoriesOnly = false;
    while (glob.length() > 1 && glob.endsWith("/") && !glob.endsWith("\\/")) {
      glob = glob.substring(0, glob.length() - 1);
      directoriesOnly = true;
    }
    boolean anchored = glob.indexOf('/') >= 0;
    if (glob.startsWith("/")) {
      glob = glob.substring(1);
    }
    if (glob.isEmpty()) {
      throw new IllegalArgumentException("names no path");
    }
    return new Glob(GlobSyntax.parse(glob), anchored, directoriesOnly);
  }


  /** Whether {@code path}, a directory or not, matches. */
  public boolean matches(PathBytes path, boolean isDirectory) {
    if (directoriesOnly && !isDirectory) {
      return false;
    }
    byte[] p = path.bytes();
    for (Token[] tokens : alternatives) {
      if (reach(tokens, p)[p.length]) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code path}, or a directory above it, matches. */
  public boolean matchesSelfOrParent(PathBytes path, boolean isDirectory) {
    byte[] p = path.bytes();
    for (Token[] tokens : alternatives) {
      boolean[] r = reach(tokens, p);
      if (r[p.length] && (isDirectory || !directoriesOnly)) {
        return true;
      }
      for (int k = 1; k < p.length; k++) {
        if (p[k] == '/' && r[k]) {
          return true; // The prefix before k, a directory, matches.
        }
      }
    }
    return false;
  }

  /**
   * Runs {@code tokens} over {@code p}: element k of the result says whether the tokens can
   * consume exactly {@code p[0, k)} (from the start, or from any component's start when the
   * pattern is not anchored).
   */
  private boolean[] reach(Token[] tokens, byte[] p) {
    int m = p.length;
    boolean[] at = new boolean[m + 1];
    at[0] = true;
    if (!anchored) {
      for (int i = 0; i < m; i++) {
        if (p[i] == '/') {
          at[i + 1] = true;
        }
      }
    }
    for (Token t : tokens) {
      boolean[] next = new boolean[m + 1];
      if (t instanceof ByteToken b) {
        for (int i = 0; i < m; i++) {
          next[i + 1] = at[i] && (p[i] & 0xff) == b.value();
        }
      } else if (t instanceof AnyChar) {
        for (int i = 0; i < m; i++) {
          if (at[i] && p[i] != '/') {
            next[i + charLength(p, i)] = true;
          }
        }
      } else if (t instanceof SetToken s) {
        for (int i = 0; i < m; i++) {
          if (!at[i] || p[i] == '/') {
            continue;
          }
          boolean inSet = p[i] >= 0 && s.ascii()[p[i]];
          if (!s.negate() && inSet) {
            next[i + 1] = true;
          } else if (s.negate() && !inSet) {
            next[i + charLength(p, i)] = true;
          }
        }
      } else if (t instanceof Star) {
        boolean run = false;
        for (int i = 0; i <= m; i++) {
          run |= at[i];
          next[i] = run;
          if (i < m && p[i] == '/') {
            run = false;
          }
        }
      } else if (t instanceof Anything) {
        boolean run = false;
        for (int i = 0; i <= m; i++) {
          run |= at[i];
          next[i] = run;
        }
      } else {
        // Directories: stay, or move past any '/' after a position reached.
        boolean seen = false;
        for (int i = 0; i <= m; i++) {
          next[i] = at[i] || seen && p[i - 1] == '/';
          seen |= at[i];
        }
      }
      at = next;
      if (!any(at)) {
        return at; // No position is reached: the rest of the pattern cannot match (most paths).
      }
    }
    return at;
  }

  private static boolean any(boolean[] reached) {
    for (boolean r : reached) {
      if (r) {
        return true;
      }
    }
    return false;
  }

  /** The length of the character at {@code p[i]}: a whole UTF-8 sequence, or one byte. */
  private static int charLength(byte[] p, int i) {
    int lead = p[i] & 0xff;
    int n = lead >= 0xf5 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 1;
    if (n == 1 || i + n > p.length) {
      return 1;
    }
    for (int k = 1; k < n; k++) {
      if ((p[i + k] & 0xc0) != 0x80) {
        return 1;
      }
    }
    return n;
  }
}
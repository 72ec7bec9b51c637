package io.beamsave.transforms.select;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link Glob}'s pattern read into tokens: the syntax of Java's {@code PathMatcher} glob, with
 * {@code \xNN} for a byte, and each {@code {a,b}} group expanded into the token sequences it
 * stands for, which {@link Glob} runs over a path's bytes.
 */
final class GlobSyntax {
  /** At most this many sequences a pattern's {@code {a,b}} groups may expand to. */
  private static final int MAX_ALTERNATIVES = 256;

  private GlobSyntax() {}

  sealed interface Token {}

  /** One byte, exactly. */
  record ByteToken(int value) implements Token {}

  /** {@code ?}: one character (a UTF-8 sequence, or one byte that begins none), not {@code /}. */
  record AnyChar() implements Token {}

  /** {@code [...]}: one ASCII byte of the set, or with {@code !} one character not in it. */
  record SetToken(boolean[] ascii, boolean negate) implements Token {}

  /** {@code *}: any bytes but {@code /}. */
  record Star() implements Token {}

  /** {@code **} at the end, as a whole component: any bytes. */
  record Anything() implements Token {}

  /** {@code **}{@code /} as a whole component: no directory, or any number of whole ones. */
  record Directories() implements Token {}

  /**
   * The token sequences {@code glob} (a pattern without its leading and trailing {@code /})
   * stands for, one per combination of its groups' branches.
   */
  static List<Token[]> parse(String glob) {
    List<List<Token>> alts = new ArrayList<>();
    alts.add(new ArrayList<>());
    int i = 0;
    while (i < glob.length()) {
      char c = glob.charAt(i);
      if (c == '{') {
        List<List<Token>> branches = new ArrayList<>();
        List<Token> branch = new ArrayList<>();
        i++;
        while (true) {
          if (i >= glob.length()) {
            throw new IllegalArgumentException("'{' without '}'");
          }
          char d = glob.charAt(i);
          if (d == '{') {
            throw new IllegalArgumentException("groups cannot nest");
          } else if (d == ',' || d == '}') {
            branches.add(branch);
            branch = new ArrayList<>();
            i++;
            if (d == '}') {
              break;
            }
          } else {
            i = token(glob, i, branch);
          }
        }
        List<List<Token>> crossed = new ArrayList<>();
        for (List<Token> a : alts) {
          for (List<Token> b : branches) {
            List<Token> ab = new ArrayList<>(a);
            ab.addAll(b);
            crossed.add(ab);
          }
        }
        if (crossed.size() > MAX_ALTERNATIVES) {
          throw new IllegalArgumentException("its {..} groups make more than "
              + MAX_ALTERNATIVES + " patterns");
        }
        alts = crossed;
      } else if (c == '}') {
        throw new IllegalArgumentException("'}' without '{'");
      } else {
        List<Token> one = new ArrayList<>(4);
        i = token(glob, i, one);
        alts.forEach(a -> a.addAll(one));
      }
    }
    return alts.stream().map(a -> a.toArray(Token[]::new)).toList();
  }

  /** Parses the token at {@code glob[i]} into {@code out}; returns the index after it. */
  private static int token(String glob, int i, List<Token> out) {
    char c = glob.charAt(i++);
    switch (c) {
      case '*' -> {
        if (i < glob.length() && glob.charAt(i) == '*') {
          boolean startsComponent = i == 1 || glob.charAt(i - 2) == '/';
          i++;
          if (startsComponent && i < glob.length() && glob.charAt(i) == '/') {
            out.add(new Directories());
            i++;
          } else if (startsComponent && i == glob.length()) {
            out.add(new Anything());
          } else {
            out.add(new Star());
          }
        } else {
          out.add(new Star());
        }
      }
      case '?' -> out.add(new AnyChar());
      case '[' -> i = charClass(glob, i, out);
      case '\\' -> {
        if (i >= glob.length()) {
          throw new IllegalArgumentException("ends with a backslash");
        }
        if (glob.charAt(i) == 'x' && hex(glob, i + 1)) {
          out.add(new ByteToken(Integer.parseInt(glob.substring(i + 1, i + 3), 16)));
          i += 3;
        } else {
          int cp = glob.codePointAt(i);
          literal(out, cp);
          i += Character.charCount(cp);
        }
      }
      default -> {
        int cp = glob.codePointAt(i - 1);
        literal(out, cp);
        i += Character.charCount(cp) - 1;
      }
    }
    return i;
  }

  private static boolean hex(String s, int at) {
    return at + 2 <= s.length()
        && Character.digit(s.charAt(at), 16) >= 0
        && Character.digit(s.charAt(at + 1), 16) >= 0;
  }

  /** Parses {@code [...]} from just after the bracket; returns the index after it. */
  private static int charClass(String glob, int i, List<Token> out) {
    boolean[] set = new boolean[128];
    boolean negate = i < glob.length() && glob.charAt(i) == '!';
    if (negate) {
      i++;
    }
    boolean first = true;
    while (true) {
      if (i >= glob.length()) {
        throw new IllegalArgumentException("'[' without ']'");
      }
      char c = glob.charAt(i++);
      if (c == ']' && !first) {
        break;
      }
      first = false;
      if (c == '\\' && i < glob.length()) {
        c = glob.charAt(i++);
      }
      char to = c;
      if (i + 1 < glob.length() && glob.charAt(i) == '-' && glob.charAt(i + 1) != ']') {
        to = glob.charAt(i + 1);
        i += 2;
        if (to < c) {
          throw new IllegalArgumentException("invalid range " + c + "-" + to);
        }
      }
      if (to >= 0x80 || c <= '/' && to >= '/') {
        throw new IllegalArgumentException("a [set] may hold ASCII characters only, never '/'");
      }
      for (char x = c; x <= to; x++) {
        set[x] = true;
      }
    }
    out.add(new SetToken(set, negate));
    return i;
  }

  private static void literal(List<Token> out, int cp) {
    for (byte b : new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8)) {
      out.add(new ByteToken(b & 0xff));
    }
  }
}

package io.beamsave.pipelines.restore;

import io.beamsave.transforms.image.PathBytes;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * An {@code --include} pattern, matched against a catalog path's bytes. The syntax is the
 * glob of Java's {@code PathMatcher}: {@code *} matches within a directory, {@code **} across
 * directories, {@code ?} one character, {@code [abc]} / {@code [!a-z]} one of a set (ASCII
 * ranges), {@code {a,b}} either; a backslash quotes the next character. Beyond Java's, {@code
 * \xNN} matches the byte NN, which is how a name that is not UTF-8 is written, the way {@code
 * list} prints it ({@link io.beamsave.transforms.Printable}).
 */
final class Glob {
  private final Pattern regex;

  private Glob(Pattern regex) {
    this.regex = regex;
  }

  /** One character: a UTF-8 sequence, or a byte that starts none, but never {@code /}. */
  private static final String ONE_CHAR = "(?:[\\x00-\\x2e\\x30-\\x7f]|[\\xc0-\\xff][\\x80-\\xbf]*|[\\x80-\\xbf])";

  static Glob compile(String glob) {
    StringBuilder re = new StringBuilder("^");
    boolean inGroup = false;
    int i = 0;
    while (i < glob.length()) {
      char c = glob.charAt(i++);
      switch (c) {
        case '*' -> {
          if (i < glob.length() && glob.charAt(i) == '*') {
            re.append(".*");
            i++;
          } else {
            re.append("[^/]*");
          }
        }
        case '?' -> re.append(ONE_CHAR);
        case '{' -> {
          if (inGroup) {
            throw bad(glob, "groups cannot nest");
          }
          re.append("(?:");
          inGroup = true;
        }
        case '}' -> {
          if (!inGroup) {
            throw bad(glob, "'}' without '{'");
          }
          re.append(')');
          inGroup = false;
        }
        case ',' -> re.append(inGroup ? "|" : ",");
        case '[' -> i = charClass(glob, i, re);
        case '\\' -> {
          if (i >= glob.length()) {
            throw bad(glob, "ends with a backslash");
          }
          if (glob.charAt(i) == 'x' && hex(glob, i + 1)) {
            literalByte(re, Integer.parseInt(glob.substring(i + 1, i + 3), 16));
            i += 3;
          } else {
            int cp = glob.codePointAt(i);
            literal(re, cp);
            i += Character.charCount(cp);
          }
        }
        default -> {
          int cp = glob.codePointAt(i - 1);
          literal(re, cp);
          i += Character.charCount(cp) - 1;
        }
      }
    }
    if (inGroup) {
      throw bad(glob, "'{' without '}'");
    }
    return new Glob(Pattern.compile(re.append('$').toString(), Pattern.DOTALL));
  }

  private static boolean hex(String s, int at) {
    return at + 2 <= s.length()
        && Character.digit(s.charAt(at), 16) >= 0
        && Character.digit(s.charAt(at + 1), 16) >= 0;
  }

  /** Parses {@code [...]} from just after the bracket; returns the index after it. */
  private static int charClass(String glob, int i, StringBuilder re) {
    StringBuilder set = new StringBuilder();
    boolean negate = i < glob.length() && glob.charAt(i) == '!';
    if (negate) {
      i++;
    }
    boolean first = true;
    while (true) {
      if (i >= glob.length()) {
        throw bad(glob, "'[' without ']'");
      }
      char c = glob.charAt(i++);
      if (c == ']' && !first) {
        break;
      }
      first = false;
      if (c == '\\' && i < glob.length()) {
        c = glob.charAt(i++);
      }
      if (c >= 0x80 || c == '/') {
        throw bad(glob, "a [set] may hold ASCII characters only, never '/'");
      }
      if (i + 1 < glob.length() && glob.charAt(i) == '-' && glob.charAt(i + 1) != ']') {
        char to = glob.charAt(i + 1);
        if (to >= 0x80 || to < c) {
          throw bad(glob, "invalid range " + c + "-" + to);
        }
        set.append(quoteInClass(c)).append('-').append(quoteInClass(to));
        i += 2;
      } else {
        set.append(quoteInClass(c));
      }
    }
    re.append(negate
        ? "(?:[^" + set + "/\\x80-\\xff]|[\\xc0-\\xff][\\x80-\\xbf]*|[\\x80-\\xbf])"
        : "[" + set + "]");
    return i;
  }

  private static String quoteInClass(char c) {
    return String.format("\\x%02x", (int) c);
  }

  private static void literal(StringBuilder re, int cp) {
    for (byte b : new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8)) {
      literalByte(re, b & 0xff);
    }
  }

  private static void literalByte(StringBuilder re, int b) {
    re.append(String.format("\\x%02x", b));
  }

  private static IllegalArgumentException bad(String glob, String why) {
    return new IllegalArgumentException("--include '" + glob + "': " + why);
  }

  boolean matches(PathBytes path) {
    return regex.matcher(new String(path.bytes(), StandardCharsets.ISO_8859_1)).matches();
  }

  /** Whether {@code path}, or a directory above it, matches. */
  boolean matchesSelfOrParent(PathBytes path) {
    String s = new String(path.bytes(), StandardCharsets.ISO_8859_1);
    for (int end = s.length(); end > 0; end = s.lastIndexOf('/', end - 1)) {
      if (regex.matcher(s.substring(0, end)).matches()) {
        return true;
      }
    }
    return false;
  }
}

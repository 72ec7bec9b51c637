package io.beamsave.pipelines.postgres;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The connection string of {@code save --postgres CONNINFO}, split into its password and
 * everything else, read as libpq reads it: {@code key=value} pairs (a value in single quotes may
 * hold spaces; a backslash takes the next character as it is, in or out of quotes), a {@code
 * postgresql://} or {@code postgres://} URI (the password in {@code user:password@} or a {@code
 * ?password=} parameter, percent-encoded; the last one given counts), or else a database name.
 * What libpq would refuse in those parts is refused here, without repeating what was given.
 *
 * <p>{@link #withoutPassword} is the text with every password parameter cut out and all else
 * kept as it was written; {@link #toString} is that too, so that a message that shows this
 * object never shows the password. Immutable.
 */
public final class Conninfo {
  private static final String PASSWORD = "password";
  /** libpq's client-key passphrase: it has no environment variable to travel in instead. */
  private static final String SSL_PASSWORD = "sslpassword";

  private final String withoutPassword;
  private final String password;
  /** The password's parameter as CONNINFO spells it ({@code password='...'}, {@code :...@}). */
  private final String written;

  private Conninfo(String withoutPassword, String password, String written) {
    this.withoutPassword = withoutPassword;
    this.password = password;
    this.written = written;
  }

  /** {@code text} read as libpq would read it; IllegalArgumentException says what is wrong. */
  public static Conninfo parse(String text) {
    int prefix = text.startsWith("postgresql://") ? "postgresql://".length()
        : text.startsWith("postgres://") ? "postgres://".length() : 0;
    if (prefix > 0) {
      return uri(text, prefix);
    }
    // As libpq tells a connection string from a database name.
    return text.indexOf('=') >= 0 ? pairs(text) : new Conninfo(text, null, null);
  }

  /**
   * The connection string without its password, to be passed as psql's {@code -d}; null when
   * nothing else is left, where psql takes its defaults as it did with the password alone.
   */
  public String withoutPassword() {
    return withoutPassword;
  }

  /** The password as libpq would read it from CONNINFO, or null when CONNINFO has none. */
  String password() {
    return password;
  }

  /**
   * Whether {@code commandLine} (a process's arguments, as {@code /proc/PID/cmdline} holds
   * them) shows the password as CONNINFO gives it, with its parameter's name.
   */
  boolean passwordIn(byte[] commandLine) {
    return written != null
        && new String(commandLine, StandardCharsets.UTF_8).contains(written);
  }

  @Override
  public String toString() {
    return withoutPassword == null ? "" : withoutPassword;
  }

  /** {@code key=value} pairs, by libpq's {@code conninfo_parse}. */
  private static Conninfo pairs(String s) {
    StringBuilder kept = new StringBuilder();
    int keptFrom = 0;
    int others = 0;
    String password = null;
    String written = null;
    int i = 0;
    int n = s.length();
    while (i < n) {
      if (space(s.charAt(i))) {
        i++;
        continue;
      }
      int start = i;
      while (i < n && s.charAt(i) != '=' && !space(s.charAt(i))) {
        i++;
      }
      String key = s.substring(start, i);
      while (i < n && space(s.charAt(i))) {
        i++;
      }
      if (i == n || s.charAt(i) != '=') {
        throw new IllegalArgumentException("--postgres: CONNINFO has no '=' after the word"
            + " at character " + (start + 1) + " (key=value pairs, or a postgresql:// URI)");
      }
      i++;
      while (i < n && space(s.charAt(i))) {
        i++;
      }
      int valueStart = i;
      StringBuilder value = new StringBuilder();
      if (i < n && s.charAt(i) == '\'') {
        for (i++; ; ) {
          if (i == n) {
            throw new IllegalArgumentException("--postgres: CONNINFO has a quoted value that"
                + " does not end, from character " + (valueStart + 1));
          }
          char c = s.charAt(i++);
          if (c == '\\') {
            if (i < n) {
              value.append(s.charAt(i++));
            }
          } else if (c == '\'') {
            break;
          } else {
            value.append(c);
          }
        }
      } else {
        while (i < n && !space(s.charAt(i))) {
          char c = s.charAt(i++);
          if (c == '\\') {
            if (i < n) {
              value.append(s.charAt(i++));
            }
          } else {
            value.append(c);
          }
        }
      }
      if (isPassword(key, "a parameter of CONNINFO")) {
        password = value.toString();
        written = s.substring(start, i);
        kept.append(s, keptFrom, start);
        keptFrom = i;
      } else {
        others++;
      }
    }
    kept.append(s, keptFrom, n);
    return new Conninfo(others == 0 ? null : kept.toString(), password, written);
  }

  /** A {@code postgresql://} URI, by libpq's {@code conninfo_uri_parse_options}. */
  private static Conninfo uri(String s, int prefix) {
    int n = s.length();
    String password = null;
    String written = null;
    String head = s;
    int p = prefix;
    while (p < n && s.charAt(p) != '@' && s.charAt(p) != '/') {
      p++;
    }
    if (p < n && s.charAt(p) == '@') {
      int at = p;
      int colon = s.indexOf(':', prefix);
      if (colon >= 0 && colon < at - 1) {
        // An empty password (user:@host) is none, to libpq too.
        written = s.substring(colon, at + 1);
        password = decode(s.substring(colon + 1, at), "the password in the URI");
        head = s.substring(0, colon) + s.substring(at);
      }
      p = at + 1;
    } else {
      p = prefix;
    }
    int query = queryStart(s, p);
    if (query < 0) {
      return new Conninfo(head, password, written);
    }
    // Where the query begins in head, which may be shorter by the password cut out of it.
    int headQuery = query - (s.length() - head.length());
    List<String> keptParams = new ArrayList<>();
    boolean cut = false;
    int from = query + 1;
    while (from < n) {
      int end = s.indexOf('&', from);
      end = end < 0 ? n : end;
      String param = s.substring(from, end);
      int eq = param.indexOf('=');
      if (eq < 0 || param.indexOf('=', eq + 1) >= 0) {
        throw new IllegalArgumentException("--postgres: a parameter of the URI's query (after"
            + " '?') has " + (eq < 0 ? "no '='" : "a second '=' (write it %3D)"));
      }
      String key = decode(param.substring(0, eq), "a parameter name in the URI's query");
      if (isPassword(key, "a parameter of the URI's query")) {
        written = param;
        password = decode(param.substring(eq + 1), "the password in the URI's query");
        cut = true;
      } else {
        keptParams.add(param);
      }
      from = end + 1;
    }
    if (!cut) {
      return new Conninfo(head, password, written);
    }
    String rest = head.substring(0, headQuery)
        + (keptParams.isEmpty() ? "" : "?" + String.join("&", keptParams));
    return new Conninfo(rest, password, written);
  }

  /**
   * Where the URI's query begins ('?'), past its hosts and ports (an IPv6 address in brackets
   * may hold what would end them) and its database name; -1 where it has none.
   */
  private static int queryStart(String s, int p) {
    int n = s.length();
    while (true) {
      if (p < n && s.charAt(p) == '[') {
        int close = s.indexOf(']', p + 1);
        if (close < 0) {
          throw new IllegalArgumentException("--postgres: an IPv6 address in the URI has no"
              + " closing ']'");
        }
        p = close + 1;
        if (p < n && ":/?,".indexOf(s.charAt(p)) < 0) {
          throw new IllegalArgumentException("--postgres: an IPv6 address in the URI is"
              + " followed by neither ':', '/', '?' nor ','");
        }
      } else {
        while (p < n && ":/?,".indexOf(s.charAt(p)) < 0) {
          p++;
        }
      }
      if (p < n && s.charAt(p) == ':') {
        p++;
        while (p < n && "/?,".indexOf(s.charAt(p)) < 0) {
          p++;
        }
      }
      if (p < n && s.charAt(p) == ',') {
        p++;
        continue;
      }
      break;
    }
    if (p < n && s.charAt(p) == '/') {
      p = s.indexOf('?', p);
      return p;
    }
    return p < n && s.charAt(p) == '?' ? p : -1;
  }

  /**
   * Whether {@code key} is the password; refuses the client key's passphrase, which would be on
   * psql's command line, and a password keyword spelt in other case, which libpq would refuse
   * only after its value was on that command line.
   */
  private static boolean isPassword(String key, String what) {
    if (key.equals(PASSWORD)) {
      return true;
    }
    if (key.equals(SSL_PASSWORD)) {
      throw new IllegalArgumentException("--postgres: CONNINFO holds sslpassword, which psql"
          + " could only be given on its command line, where every local user can read it;"
          + " give psql a client key that needs no passphrase (sslkey=FILE, readable by this"
          + " user only)");
    }
    if (key.equalsIgnoreCase(PASSWORD) || key.equalsIgnoreCase(SSL_PASSWORD)) {
      throw new IllegalArgumentException("--postgres: " + what + " is " + key
          + ", which libpq does not know: it is written " + key.toLowerCase(Locale.ROOT));
    }
    return false;
  }

  /** {@code text} with its %XX escapes decoded, as UTF-8 (never repeated in an error). */
  private static String decode(String text, String what) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    byte[] raw = text.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < raw.length; i++) {
      if (raw[i] != '%') {
        bytes.write(raw[i]);
        continue;
      }
      int hi = i + 1 < raw.length ? Character.digit(raw[i + 1], 16) : -1;
      int lo = i + 2 < raw.length ? Character.digit(raw[i + 2], 16) : -1;
      if (hi < 0 || lo < 0) {
        throw new IllegalArgumentException("--postgres: " + what + " has a '%' that is not"
            + " followed by two hexadecimal digits (write a '%' itself as %25)");
      }
      if (hi == 0 && lo == 0) {
        throw new IllegalArgumentException("--postgres: " + what + " holds %00, which libpq"
            + " refuses");
      }
      bytes.write(hi << 4 | lo);
      i += 2;
    }
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("--postgres: " + what + " is not UTF-8 once its %XX"
          + " escapes are decoded");
    }
  }

  /** C's isspace in the C locale, which libpq's parser uses. */
  private static boolean space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\u000B' || c == '\f' || c == '\r';
  }
}

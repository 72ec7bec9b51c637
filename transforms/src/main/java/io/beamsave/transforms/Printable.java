package io.beamsave.transforms;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Makes names and messages safe to print on a terminal. A file name is bytes, any but NUL and
 * {@code /}; printed, it is its UTF-8 text where that is valid and harmless, and {@code \xNN}
 * for every byte that is not (invalid UTF-8, control characters, escape sequences, line
 * separators and bidirectional overrides), with {@code \\} for a backslash, so the printed form
 * names exactly one byte string and can forge neither a line nor a terminal command. {@code
 * --include} patterns accept the same escapes (glob characters in a name want a backslash).
 */
public final class Printable {
  private Printable() {}

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  /**
   * The bytes a printed name stands for: the inverse of {@link #bytes(byte[])}, {@code \xNN}
   * one byte, {@code \\} a backslash, anything else its UTF-8.
   *
   * @throws IllegalArgumentException for a backslash followed by anything else
   */
  public static byte[] parse(String printed) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(printed.length());
    int i = 0;
    while (i < printed.length()) {
      int next = printed.indexOf('\\', i);
      int end = next < 0 ? printed.length() : next;
      out.writeBytes(printed.substring(i, end).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      if (next < 0) {
        break;
      }
      if (printed.startsWith("\\\\", next)) {
        out.write('\\');
        i = next + 2;
      } else if (printed.startsWith("\\x", next) && next + 4 <= printed.length()
          && hexValue(printed, next + 2) >= 0) {
        out.write(hexValue(printed, next + 2));
        i = next + 4;
      } else {
        throw new IllegalArgumentException("a backslash is written \\\\ and a byte \\xNN");
      }
    }
    return out.toByteArray();
  }

  private static int hexValue(String s, int at) {
    int hi = Character.digit(s.charAt(at), 16);
    int lo = Character.digit(s.charAt(at + 1), 16);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
  }

  /** {@code name} printed as described above. */
  public static String bytes(byte[] name) {
    return bytes(name, 0, name.length);
  }

  public static String bytes(byte[] b, int off, int len) {
    boolean plain = true;
    for (int i = off; i < off + len && plain; i++) {
      int c = b[i];
      plain = c >= 0x20 && c < 0x7f && c != '\\';
    }
    if (plain) {
      return new String(b, off, len, StandardCharsets.ISO_8859_1);
    }
    StringBuilder out = new StringBuilder(len + 16);
    CharsetDecoder utf8 =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(b, off, len);
    CharBuffer chars = CharBuffer.allocate(2);
    while (in.hasRemaining()) {
      int start = in.position();
      chars.clear();
      // One code point at a time, so each can be judged and, if need be, escaped byte by byte.
      CoderResult r = decodeOne(utf8, in, chars);
      if (r != null) {
        in.position(start + 1);
        hex(out, b[start]);
        continue;
      }
      chars.flip();
      int cp = Character.codePointAt(chars, 0);
      if (cp == '\\') {
        out.append("\\\\");
      } else if (harmful(cp)) {
        for (int i = start; i < in.position(); i++) {
          hex(out, b[i]);
        }
      } else {
        out.appendCodePoint(cp);
      }
    }
    return out.toString();
  }

  /** Decodes one code point from {@code in}; null when it did, the error otherwise. */
  private static CoderResult decodeOne(CharsetDecoder utf8, ByteBuffer in, CharBuffer out) {
    int lead = in.get(in.position()) & 0xff;
    int n = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (n > in.remaining()) {
      return CoderResult.malformedForLength(1);
    }
    ByteBuffer one = in.slice(in.position(), n);
    utf8.reset();
    CoderResult r = utf8.decode(one, out, true);
    if (r.isError() || one.hasRemaining() || out.position() == 0) {
      return r.isError() ? r : CoderResult.malformedForLength(1);
    }
    in.position(in.position() + n);
    return null;
  }

  /**
   * A message (which may hold names already made printable) with control characters, escape
   * sequences, line separators and bidirectional overrides escaped; backslashes are kept, so
   * escaping twice changes nothing.
   */
  public static String text(String s) {
    if (s == null) {
      return null;
    }
    StringBuilder out = null;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      int n = Character.charCount(cp);
      if (harmful(cp) || Character.isSurrogate(s.charAt(i)) && n == 1) {
        if (out == null) {
          out = new StringBuilder(s.length() + 16).append(s, 0, i);
        }
        for (byte x : s.substring(i, i + n).getBytes(StandardCharsets.UTF_8)) {
          hex(out, x);
        }
      } else if (out != null) {
        out.appendCodePoint(cp);
      }
      i += n;
    }
    return out == null ? s : out.toString();
  }

  /** Code points a terminal acts on or that change how a line reads. */
  private static boolean harmful(int cp) {
    return Character.isISOControl(cp)
        || cp == 0x2028
        || cp == 0x2029
        || (cp >= 0x202a && cp <= 0x202e)
        || (cp >= 0x2066 && cp <= 0x2069)
        || cp == 0x200e
        || cp == 0x200f
        || cp == 0x061c
        || cp == 0xfeff;
  }

  private static void hex(StringBuilder out, byte b) {
    out.append("\\x").append(HEX[(b >> 4) & 0xf]).append(HEX[b & 0xf]);
  }
}

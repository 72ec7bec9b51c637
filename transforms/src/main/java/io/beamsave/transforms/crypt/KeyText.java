package io.beamsave.transforms.crypt;

import java.util.Arrays;
import java.util.Base64;

/**
 * Keys as text: a prefix naming what the key is, then base64url (no padding) of its 32 bytes and
 * a 4-byte checksum, so that a key cut short or mistyped is refused rather than used. Messages
 * never repeat the text: it may be a secret.
 */
public final class KeyText {
  static final String PUBLIC = "beamsave-pub-";
  static final String IDENTITY = "BEAMSAVE-IDENTITY-";

  private KeyText() {}

  /** What messages say instead of an argument that may be a secret. */
  static final String NOT_REPEATED = "(the argument given, not repeated: it looks like a key)";

  /**
   * {@code argument} as a message may show it: itself, unless it may be a secret pasted where a
   * file name belongs (an identity, a key in hex or base64, several lines of a file), which is
   * never repeated: messages end up in logs and tickets.
   */
  public static String shown(Object argument) {
    return mayBeSecret(argument) ? NOT_REPEATED : String.valueOf(argument);
  }

  /** Whether {@code argument} may be a secret: see {@link #shown}. A public key is none. */
  public static boolean mayBeSecret(Object argument) {
    String s = String.valueOf(argument);
    if (s.startsWith(PUBLIC) && s.indexOf('\n') < 0 && s.indexOf('\r') < 0
        && !s.toUpperCase(java.util.Locale.ROOT).contains(IDENTITY)) {
      return false;
    }
    String letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    return s.toUpperCase(java.util.Locale.ROOT).contains(IDENTITY) || s.indexOf('\n') >= 0
        || s.indexOf('\r') >= 0 || longestRun(s, "0123456789abcdefABCDEF", false) >= 32
        // base64 and base64url, each alone: a path's '/' and '-' together are neither.
        || longestRun(s, letters + "+/=", true) >= 40
        || longestRun(s, letters + "-_=", true) >= 40;
  }

  /**
   * The longest run of {@code alphabet}'s characters in {@code s}; with {@code mixed}, only
   * runs that hold a digit and letters of both cases count (base64 of random bytes does; the
   * components of a path seldom do).
   */
  private static int longestRun(String s, String alphabet, boolean mixed) {
    int best = 0;
    int start = 0;
    for (int i = 0; i <= s.length(); i++) {
      if (i == s.length() || alphabet.indexOf(s.charAt(i)) < 0) {
        String run = s.substring(start, i);
        boolean counts = !mixed || (run.chars().anyMatch(Character::isDigit)
            && run.chars().anyMatch(Character::isUpperCase)
            && run.chars().anyMatch(Character::isLowerCase));
        if (counts) {
          best = Math.max(best, run.length());
        }
        start = i + 1;
      }
    }
    return best;
  }

  static String encode(String prefix, byte[] key) {
    return prefix + Base64.getUrlEncoder().withoutPadding()
        .encodeToString(Primitives.concat(key, checksum(prefix, key)));
  }

  /** The 32 bytes of {@code text}; throws, without quoting it, if it is not such a key. */
  static byte[] decode(String prefix, String text) {
    String what = prefix.equals(PUBLIC) ? "public key" : "identity";
    if (!text.startsWith(prefix)) {
      throw new IllegalArgumentException("not a beamsave " + what + " (it begins with "
          + prefix + "...)");
    }
    byte[] raw;
    try {
      raw = Base64.getUrlDecoder().decode(text.substring(prefix.length()));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("a damaged beamsave " + what + " (not base64url)");
    }
    if (raw.length != 36) {
      throw new IllegalArgumentException("a damaged beamsave " + what + " (cut short or too"
          + " long)");
    }
    byte[] key = Arrays.copyOf(raw, 32);
    if (!java.security.MessageDigest.isEqual(checksum(prefix, key),
        Arrays.copyOfRange(raw, 32, 36))) {
      throw new IllegalArgumentException("a damaged beamsave " + what + " (its checksum does"
          + " not match: mistyped?)");
    }
    return key;
  }

  private static byte[] checksum(String prefix, byte[] key) {
    return Arrays.copyOf(Primitives.sha256(Primitives.ascii(prefix), key), 4);
  }
}

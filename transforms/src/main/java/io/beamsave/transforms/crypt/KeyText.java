package io.beamsave.transforms.crypt;

import java.util.Arrays;
import java.util.Base64;

/**
 * Keys as text: a prefix naming what the key is, then base64url (no padding) of its 32 bytes and
 * a 4-byte checksum, so that a key cut short or mistyped is refused rather than used. Messages
 * never repeat the text: it may be a secret.
 */
final class KeyText {
  static final String PUBLIC = "beamsave-pub-";
  static final String IDENTITY = "BEAMSAVE-IDENTITY-";

  private KeyText() {}

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

package io.beamsave.transforms.image.catalog;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An image's notes: what its save knew of where the bytes came from, kept in the catalog's
 * head from format version 11 on (docs/image-format.md, "Notes"), e.g. {@code snapshot} =
 * {@code btrfs} and {@code snapshot.taken} = the instant it was taken. Keys are short names of
 * lower-case letters, digits, dots and dashes; values are printable text. A reader takes any
 * note (an unknown one is shown, never acted on) within these bounds.
 */
public final class Notes {
  /** Notes an image may hold. */
  public static final int MAX_NOTES = 32;
  /** Bytes of a key, in UTF-8. */
  public static final int MAX_KEY_BYTES = 64;
  /** Bytes of a value, in UTF-8. */
  public static final int MAX_VALUE_BYTES = 1024;

  /** Which file-system snapshot the library was saved from: {@code btrfs}, {@code lvm}... */
  public static final String SNAPSHOT = "snapshot";
  /** When that snapshot was taken, as an ISO-8601 instant in UTC. */
  public static final String SNAPSHOT_TAKEN = "snapshot.taken";
  /** The image's tags ({@code save --tag}), separated by commas. */
  public static final String TAGS = "tags";
  /** The snapshot's own path while it was read, which the image's names do not hold. */
  public static final String SNAPSHOT_PATH = "snapshot.path";

  private Notes() {}

  /**
   * {@code notes} as a catalog holds them, in their order; throws IllegalArgumentException
   * naming the note that breaks a bound.
   */
  public static Map<String, String> check(Map<String, String> notes) {
    if (notes.size() > MAX_NOTES) {
      throw new IllegalArgumentException(notes.size() + " notes; at most " + MAX_NOTES);
    }
    Map<String, String> copy = new LinkedHashMap<>();
    for (Map.Entry<String, String> n : notes.entrySet()) {
      String problem = problem(n.getKey(), n.getValue());
      if (problem != null) {
        throw new IllegalArgumentException(problem);
      }
      copy.put(n.getKey(), n.getValue());
    }
    return Collections.unmodifiableMap(copy);
  }

  /** What is wrong with a note, or null when nothing is. */
  static String problem(String key, String value) {
    int keyBytes = key.getBytes(StandardCharsets.UTF_8).length;
    if (keyBytes == 0 || keyBytes > MAX_KEY_BYTES) {
      return "note key of " + keyBytes + " bytes (1 to " + MAX_KEY_BYTES + ")";
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (!(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-')) {
        return "note key '" + io.beamsave.transforms.Printable.text(key)
            + "' holds other than a-z, 0-9, '.' and '-'";
      }
    }
    if (value.getBytes(StandardCharsets.UTF_8).length > MAX_VALUE_BYTES) {
      return "note " + key + ": value longer than " + MAX_VALUE_BYTES + " bytes";
    }
    if (value.codePoints().anyMatch(Character::isISOControl)) {
      return "note " + key + ": value holds a control character";
    }
    return null;
  }
}

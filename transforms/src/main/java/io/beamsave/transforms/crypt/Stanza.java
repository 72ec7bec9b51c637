package io.beamsave.transforms.crypt;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * One recipient's copy of an image's data key, as the header holds it: a type and a body of a
 * fixed length per type (docs/image-format.md, "Recipients"). Public: it reveals the kind of
 * key, the key's id where it has one, and nothing of the data key.
 */
public record Stanza(int type, byte[] body) {
  public static final int PASSWORD = 1;
  public static final int KEY_FILE = 2;
  public static final int X25519 = 3;

  static final int SALT_SIZE = 16;
  static final int KEY_ID_SIZE = 8;

  /** The body's length for {@code type}, or -1 for a type this version does not know. */
  static int bodyLength(int type) {
    return switch (type) {
      case PASSWORD -> SALT_SIZE + 12 + Primitives.WRAPPED_KEY_SIZE;
      case KEY_FILE -> KEY_ID_SIZE + Primitives.WRAPPED_KEY_SIZE;
      case X25519 -> KEY_ID_SIZE + 32 + Primitives.WRAPPED_KEY_SIZE;
      default -> -1;
    };
  }

  public Stanza {
    if (bodyLength(type) != body.length) {
      throw new IllegalArgumentException("a stanza of type " + type + " has "
          + bodyLength(type) + " bytes, not " + body.length);
    }
    body = body.clone();
  }

  @Override
  public byte[] body() {
    return body.clone();
  }

  /** The id of the key that opens it (key file, X25519), or null for a password. */
  public byte[] keyId() {
    return type == PASSWORD ? null : Arrays.copyOf(body, KEY_ID_SIZE);
  }

  /** The Argon2id cost and salt of a password stanza. */
  Argon2 cost() {
    ByteBuffer b = ByteBuffer.wrap(body, SALT_SIZE, 12);
    return new Argon2(b.getInt(), b.getInt(), b.getInt());
  }

  byte[] salt() {
    return Arrays.copyOf(body, SALT_SIZE);
  }

  /** The X25519 stanza's ephemeral public key. */
  byte[] ephemeral() {
    return Arrays.copyOfRange(body, KEY_ID_SIZE, KEY_ID_SIZE + 32);
  }

  /** The wrapped data key: the body's last bytes. */
  byte[] wrapped() {
    return Arrays.copyOfRange(body, body.length - Primitives.WRAPPED_KEY_SIZE, body.length);
  }

  /** As the operator is told of it: {@code password}, {@code key file ID}, {@code recipient ID}. */
  public String describe() {
    return switch (type) {
      case PASSWORD -> "password";
      case KEY_FILE -> "key file " + HexFormat.of().formatHex(keyId());
      default -> "recipient " + HexFormat.of().formatHex(keyId());
    };
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Stanza s && s.type == type && Arrays.equals(s.body, body);
  }

  @Override
  public int hashCode() {
    return 31 * type + Arrays.hashCode(body);
  }

  @Override
  public String toString() {
    return describe();
  }
}

package io.beamsave.transforms.crypt;

import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageId;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Someone an image's data key is wrapped for (a {@link Stanza} in its header): a password, a
 * raw 256-bit key in a file, or an X25519 public key, whose holder of the matching {@link
 * Identity} alone can unwrap it; so a host that saves with only public keys cannot read what it
 * saved. Never prints what it holds.
 */
public abstract sealed class Recipient
    permits Recipient.Password, Recipient.KeyFile, Recipient.PublicKey {

  /** Wrapped data keys are bound to their image: a stanza copied into another header is useless. */
  static byte[] aad(ImageId image) {
    return Primitives.concat(Primitives.ascii("beamsave data key"), image.bytes());
  }

  /** The stanza that gives {@code dataKey} of image {@code id} to this recipient. */
  public abstract Stanza stanza(byte[] dataKey, ImageId id);

  /** Whether {@code s} is this recipient's: the same key id (a password's cannot be told). */
  public abstract boolean owns(Stanza s);

  /** As the operator is told of it, e.g. {@code recipient 1a2b3c4d5e6f7081}. */
  public abstract String describe();

  @Override
  public String toString() {
    return describe();
  }

  /**
   * A password. One random salt per password object: the images of one run share its
   * Argon2id key, each wrapped under its own nonce.
   */
  public static final class Password extends Recipient {
    private final byte[] password;
    private final Argon2 cost;
    private byte[] salt;
    private byte[] kek;

    public Password(byte[] password) {
      this(password, Argon2.DEFAULT);
    }

    Password(byte[] password, Argon2 cost) {
      if (password.length == 0) {
        throw new IllegalArgumentException("the password is empty");
      }
      this.password = password.clone();
      this.cost = cost;
    }

    byte[] password() {
      return password.clone();
    }

    @Override
    public synchronized Stanza stanza(byte[] dataKey, ImageId id) {
      if (kek == null) {
        salt = Primitives.random(Stanza.SALT_SIZE);
        try {
          kek = cost.derive(password, salt);
        } catch (ImageException e) {
          throw new io.beamsave.transforms.BeamsaveException(e.getMessage(), e);
        }
      }
      ByteBuffer b = ByteBuffer.allocate(Stanza.bodyLength(Stanza.PASSWORD));
      b.put(salt).putInt(cost.memoryKiB()).putInt(cost.iterations()).putInt(cost.parallelism());
      b.put(Primitives.wrap(kek, aad(id), dataKey));
      return new Stanza(Stanza.PASSWORD, b.array());
    }

    @Override
    public boolean owns(Stanza s) {
      return s.type() == Stanza.PASSWORD;
    }

    /** The data key in {@code s}, or null if this is not its password. */
    byte[] open(Stanza s, ImageId id) throws ImageException {
      return Primitives.unwrap(s.cost().derive(password, s.salt()), aad(id), s.wrapped());
    }

    @Override
    public String describe() {
      return "password";
    }
  }

  /** A raw 256-bit key, kept in a file. */
  public static final class KeyFile extends Recipient {
    private final byte[] key;
    private final byte[] id;

    public KeyFile(byte[] key) {
      if (key.length != Primitives.KEY_SIZE) {
        throw new IllegalArgumentException("a key file holds 32 bytes");
      }
      this.key = key.clone();
      this.id = Primitives.hkdf(key, new byte[0], "beamsave key-file id", Stanza.KEY_ID_SIZE);
    }

    private byte[] kek() {
      return Primitives.hkdf(key, new byte[0], "beamsave key-file kek", Primitives.KEY_SIZE);
    }

    @Override
    public Stanza stanza(byte[] dataKey, ImageId image) {
      return new Stanza(Stanza.KEY_FILE,
          Primitives.concat(id, Primitives.wrap(kek(), aad(image), dataKey)));
    }

    @Override
    public boolean owns(Stanza s) {
      return s.type() == Stanza.KEY_FILE && Arrays.equals(s.keyId(), id);
    }

    byte[] open(Stanza s, ImageId image) {
      return Primitives.unwrap(kek(), aad(image), s.wrapped());
    }

    @Override
    public String describe() {
      return "key file " + HexFormat.of().formatHex(id);
    }
  }

  /** An X25519 public key: the data key is wrapped under a key agreed with an ephemeral one. */
  public static final class PublicKey extends Recipient {
    private final byte[] key;
    private final byte[] id;

    PublicKey(byte[] key) {
      if (key.length != 32) {
        throw new IllegalArgumentException("an X25519 public key has 32 bytes");
      }
      this.key = key.clone();
      this.id = Arrays.copyOf(
          Primitives.sha256(Primitives.ascii("beamsave x25519 id"), key), Stanza.KEY_ID_SIZE);
    }

    /** Parses a public key as {@code keygen} prints it. */
    public static PublicKey parse(String text) {
      return new PublicKey(KeyText.decode(KeyText.PUBLIC, text.strip()));
    }

    /** As {@code keygen} prints it: one line, {@code beamsave-pub-...}. */
    public String text() {
      return KeyText.encode(KeyText.PUBLIC, key);
    }

    static byte[] kek(byte[] shared, byte[] ephemeral, byte[] recipient) {
      return Primitives.hkdf(shared, Primitives.concat(ephemeral, recipient),
          "beamsave x25519 kek", Primitives.KEY_SIZE);
    }

    @Override
    public Stanza stanza(byte[] dataKey, ImageId image) {
      byte[] secret = Primitives.random(32);
      byte[] ephemeral = X25519.publicKey(secret);
      byte[] shared = X25519.agree(secret, key);
      if (shared == null) {
        throw new IllegalArgumentException("recipient " + HexFormat.of().formatHex(id)
            + " is not a usable X25519 public key (a point of small order)");
      }
      return new Stanza(Stanza.X25519, Primitives.concat(id, ephemeral,
          Primitives.wrap(kek(shared, ephemeral, key), aad(image), dataKey)));
    }

    @Override
    public boolean owns(Stanza s) {
      return s.type() == Stanza.X25519 && Arrays.equals(s.keyId(), id);
    }

    byte[] key() {
      return key.clone();
    }

    @Override
    public String describe() {
      return "recipient " + HexFormat.of().formatHex(id);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof PublicKey p && Arrays.equals(p.key, key);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(key);
    }
  }
}

package io.beamsave.transforms.crypt;

import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.format.ImageId;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * The header of an encrypted image (format version 4, docs/image-format.md "Encrypted images"):
 * the image's id and its place in a chain (so that {@code images} and {@code prune} work without
 * a key), one {@link Stanza} per recipient, an HMAC-SHA256 under a key derived from the data
 * key, zero padding to the header's length, and a CRC32C. The padding leaves room for recipients
 * that {@code rekey} adds later without moving a byte of the rest of the image.
 *
 * <p>{@link #decode} is the validator of untrusted headers: it checks everything that can be
 * checked without a key; {@link #checkMac} checks the rest once the data key is known.
 */
public final class Envelope {
  /** Flags: bit 0, the image is encrypted (the only kind of version 4 image). */
  static final int ENCRYPTED = 1;

  static final int FIXED = 16 + ImageId.SIZE + 8 + 4 + ImageId.SIZE + 2;
  static final int MAC_SIZE = 32;
  /** Room for about 20 more recipients (a public key's stanza is 103 bytes). */
  static final int SPARE = 2048;

  static final int ALIGN = 4096;
  /** The largest header a reader accepts: a long chain's base ids fit many times over. */
  public static final int MAX_LENGTH = 4 << 20;

  static final int MAX_STANZAS = 64;
  /** Each tried password costs an Argon2id run: a crafted header may not ask for many. */
  static final int MAX_PASSWORD_STANZAS = 4;

  private final ImageId id;
  private final long createdMillis;
  private final int depth;
  private final ImageId origin;
  private final List<ImageId> bases;
  private final List<Stanza> stanzas;
  private final byte[] bytes;

  /** The image's format version, as the header's bytes 8 and 9 hold it (4 or 6). */
  public int version() {
    return Short.toUnsignedInt(ByteBuffer.wrap(bytes).getShort(8));
  }

  private Envelope(ImageId id, long createdMillis, int depth, ImageId origin,
      List<ImageId> bases, List<Stanza> stanzas, byte[] bytes) {
    this.id = id;
    this.createdMillis = createdMillis;
    this.depth = depth;
    this.origin = origin;
    this.bases = List.copyOf(bases);
    this.stanzas = List.copyOf(stanzas);
    this.bytes = bytes;
  }

  /**
   * The header of a new image {@code id}, with {@code dataKey} wrapped for each of {@code
   * recipients}. {@code created}, {@code depth}, {@code origin} and {@code bases} are the
   * image's lineage, as its catalog will record it ({@code bases}: the ids of the images it
   * may reference).
   */
  static Envelope create(ImageId id, long created, int depth, ImageId origin,
      List<ImageId> bases, byte[] dataKey, List<Recipient> recipients) {
    if (recipients.isEmpty()) {
      throw new IllegalArgumentException("an encrypted image needs a recipient");
    }
    List<Stanza> stanzas = new ArrayList<>();
    for (Recipient r : recipients) {
      stanzas.add(r.stanza(dataKey, id));
    }
    int content = contentLength(bases.size(), stanzas);
    int length = (content + MAC_SIZE + 4 + SPARE + ALIGN - 1) / ALIGN * ALIGN;
    return encode(ImageFormat.ENCRYPTED_VERSION, id, created, depth, origin, bases, stanzas,
        dataKey, length);
  }

  /** This header with {@code newStanzas} instead, re-authenticated, at the same length. */
  Envelope withStanzas(List<Stanza> newStanzas, byte[] dataKey) throws ImageException {
    if (newStanzas.isEmpty()) {
      throw new IllegalArgumentException("an encrypted image keeps at least one recipient");
    }
    if (newStanzas.size() > MAX_STANZAS) {
      throw new ImageException("an image has at most " + MAX_STANZAS + " recipients");
    }
    int content = contentLength(bases.size(), newStanzas);
    if (content + MAC_SIZE + 4 > bytes.length) {
      throw new ImageException("the header has no room for " + newStanzas.size()
          + " recipients (it holds " + bytes.length + " bytes, they need "
          + (content + MAC_SIZE + 4) + "); consolidate the image with the recipients wanted"
          + " instead");
    }
    return encode(version(), id, createdMillis, depth, origin, bases, newStanzas, dataKey,
        bytes.length);
  }

  private static int contentLength(int bases, List<Stanza> stanzas) {
    int n = FIXED + bases * ImageId.SIZE + 2;
    for (Stanza s : stanzas) {
      n += 3 + s.body().length;
    }
    return n;
  }

  private static Envelope encode(int version, ImageId id, long created, int depth, ImageId origin,
      List<ImageId> bases, List<Stanza> stanzas, byte[] dataKey, int length) {
    ByteBuffer b = ByteBuffer.allocate(length);
    b.put(ImageFormat.MAGIC).putShort((short) version)
        .putShort((short) ENCRYPTED).putInt(length);
    b.put(id.bytes()).putLong(created).putInt(depth)
        .put(origin == null ? new byte[ImageId.SIZE] : origin.bytes());
    b.putShort((short) bases.size());
    for (ImageId base : bases) {
      b.put(base.bytes());
    }
    b.putShort((short) stanzas.size());
    for (Stanza s : stanzas) {
      byte[] body = s.body();
      b.put((byte) s.type()).putShort((short) body.length).put(body);
    }
    int macAt = b.position();
    b.put(Primitives.hmac(ImageKey.macKey(dataKey), b.array(), 0, macAt));
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, length - 4);
    b.putInt(length - 4, (int) crc.getValue());
    return new Envelope(id, created, depth, origin, bases, stanzas, b.array());
  }

  /**
   * The header length a version 4 image's first 16 bytes give, checked against the image's
   * {@code size}; {@code first} holds those bytes (magic and version already checked).
   */
  public static int length(String image, byte[] first, long size) throws ImageException {
    ByteBuffer b = ByteBuffer.wrap(first);
    int flags = Short.toUnsignedInt(b.getShort(10));
    long length = Integer.toUnsignedLong(b.getInt(12));
    if (flags != ENCRYPTED) {
      throw new ImageException(image + ": header flags " + flags + " not supported");
    }
    if (length < FIXED + 2 + 2 + MAC_SIZE + 4 || length > MAX_LENGTH
        || length > size - ImageFormat.ENCRYPTED_TRAILER_SIZE) {
      throw new ImageException(image + ": header claims a length of " + length + " bytes,"
          + " outside what the image can hold");
    }
    return (int) length;
  }

  /**
   * Decodes and checks a whole header ({@code h}, its {@link #length} bytes) as far as it can
   * be without a key: the CRC, every count and length, known stanza types, zero padding.
   */
  public static Envelope decode(String image, byte[] h) throws ImageException {
    int length = h.length;
    CRC32C crc = new CRC32C();
    crc.update(h, 0, length - 4);
    ByteBuffer b = ByteBuffer.wrap(h);
    if (b.getInt(length - 4) != (int) crc.getValue()) {
      throw new ImageException(image + ": header checksum mismatch (header damaged)");
    }
    b.position(16);
    ImageId id = new ImageId(get(b, ImageId.SIZE));
    long created = b.getLong();
    int depth = b.getInt();
    ImageId origin = new ImageId(get(b, ImageId.SIZE));
    int baseCount = Short.toUnsignedInt(b.getShort());
    if (id.isZero() || depth < 0 || (depth == 0) != (baseCount == 0)
        || baseCount > (length - b.position()) / ImageId.SIZE) {
      throw new ImageException(image + ": header: invalid id, depth or base count");
    }
    List<ImageId> bases = new ArrayList<>(baseCount);
    Set<ImageId> seen = new HashSet<>(List.of(id));
    for (int i = 0; i < baseCount; i++) {
      ImageId base = new ImageId(get(b, ImageId.SIZE));
      if (base.isZero() || !seen.add(base)) {
        throw new ImageException(image + ": header: base " + (i + 1) + " has an invalid id");
      }
      bases.add(base);
    }
    if (b.remaining() < 2) {
      throw new ImageException(image + ": header truncated in its recipients");
    }
    int count = Short.toUnsignedInt(b.getShort());
    if (count == 0 || count > MAX_STANZAS) {
      throw new ImageException(image + ": header: " + count + " recipients (1 to "
          + MAX_STANZAS + " allowed)");
    }
    List<Stanza> stanzas = new ArrayList<>(count);
    int passwords = 0;
    for (int i = 0; i < count; i++) {
      if (b.remaining() < 3) {
        throw new ImageException(image + ": header truncated in recipient " + (i + 1));
      }
      int type = Byte.toUnsignedInt(b.get());
      int len = Short.toUnsignedInt(b.getShort());
      if (Stanza.bodyLength(type) < 0) {
        throw new ImageException(image + ": header: recipient " + (i + 1) + " is of a kind"
            + " this beamsave does not know (type " + type + "; written by a newer beamsave?)");
      }
      if (len != Stanza.bodyLength(type) || len > b.remaining()) {
        throw new ImageException(image + ": header: recipient " + (i + 1) + " has an invalid"
            + " length");
      }
      Stanza s = new Stanza(type, get(b, len));
      if (type == Stanza.PASSWORD && (++passwords > MAX_PASSWORD_STANZAS
          || !s.cost().acceptable())) {
        throw new ImageException(image + ": header: recipient " + (i + 1) + " asks for an"
            + " Argon2id cost beyond what a reader runs (" + s.cost() + ")");
      }
      stanzas.add(s);
    }
    if (b.remaining() < MAC_SIZE + 4) {
      throw new ImageException(image + ": header truncated before its authentication code");
    }
    b.position(b.position() + MAC_SIZE);
    while (b.remaining() > 4) {
      if (b.get() != 0) {
        throw new ImageException(image + ": header padding is not zero (header damaged)");
      }
    }
    return new Envelope(id, created, depth, origin.isZero() ? null : origin, bases, stanzas,
        h.clone());
  }

  /** Checks the header's authentication code under {@code dataKey}. */
  void checkMac(String image, byte[] dataKey) throws ImageException {
    int macAt = contentLength(bases.size(), stanzas);
    byte[] expected = Primitives.hmac(ImageKey.macKey(dataKey), bytes, 0, macAt);
    if (!MessageDigest.isEqual(expected,
        java.util.Arrays.copyOfRange(bytes, macAt, macAt + MAC_SIZE))) {
      throw new ImageException(image + ": header does not authenticate: it was changed after"
          + " the image was saved (tampered)");
    }
  }

  private static byte[] get(ByteBuffer b, int n) {
    byte[] out = new byte[n];
    b.get(out);
    return out;
  }

  public ImageId id() {
    return id;
  }

  public long createdMillis() {
    return createdMillis;
  }

  public int depth() {
    return depth;
  }

  /** The image this one was consolidated from, or null. */
  public ImageId origin() {
    return origin;
  }

  /** The ids of the images this one may reference, the direct base first. */
  public List<ImageId> bases() {
    return bases;
  }

  public List<Stanza> stanzas() {
    return stanzas;
  }

  /** The recipients, as the operator is told of them: {@code password, recipient 1a2b...}. */
  public String recipients() {
    return String.join(", ", stanzas.stream().map(Stanza::describe).toList());
  }

  public int length() {
    return bytes.length;
  }

  /** The header as stored. */
  public byte[] bytes() {
    return bytes.clone();
  }
}

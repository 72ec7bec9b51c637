package io.beamsave.transforms.crypt;

import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageId;
import java.io.Serializable;
import java.util.List;

/**
 * The data key of one encrypted image, with its header. Everything the image's blocks are sealed
 * with hangs off it: each shard, and the catalog, is sealed under a random key of its own, which
 * the data key wraps (in the catalog's shard table, in the trailer). So a block's key and nonce
 * never repeat, even when a task runs twice and writes its shard again with other bytes, and a
 * consolidation copies a shard's blocks into another image unchanged, rewrapping only its key.
 *
 * <p>Serializable because workers seal and open blocks with it: a save's workers get the data
 * key of the images they write, a restore's those of the images they read, and nothing more
 * (never a password, key file or identity). Its {@code toString} names only the image.
 */
public final class ImageKey implements Serializable {
  private static final long serialVersionUID = 1L;

  private final byte[] dataKey;
  private final byte[] header;
  private transient Envelope envelope;
  private transient byte[] wrapKey;

  private ImageKey(byte[] dataKey, Envelope envelope) {
    this.dataKey = dataKey.clone();
    this.header = envelope.bytes();
    this.envelope = envelope;
  }

  /**
   * A new image's key: a random data key, wrapped for each of {@code recipients} in a header
   * that records the image's {@code id} and lineage (see {@link Envelope#create}).
   */
  public static ImageKey create(ImageId id, long created, int depth, ImageId origin,
      List<ImageId> bases, List<Recipient> recipients) {
    byte[] dataKey = Primitives.random(Primitives.KEY_SIZE);
    return new ImageKey(dataKey,
        Envelope.create(id, created, depth, origin, bases, dataKey, recipients));
  }

  /**
   * Opens the image whose header is {@code envelope} with one of {@code keys}: unwraps its data
   * key and checks the header's authentication code.
   */
  public static ImageKey open(String image, Envelope envelope, Keys keys) throws ImageException {
    byte[] dataKey = keys.unwrap(image, envelope);
    envelope.checkMac(image, dataKey);
    return new ImageKey(dataKey, envelope);
  }

  /** This image's key with its header's recipients replaced by {@code recipients}. */
  public ImageKey withRecipients(List<Stanza> kept, List<Recipient> added) throws ImageException {
    List<Stanza> all = new java.util.ArrayList<>(kept);
    for (Recipient r : added) {
      all.add(r.stanza(dataKey, id()));
    }
    return new ImageKey(dataKey, envelope().withStanzas(all, dataKey));
  }

  byte[] dataKey() {
    return dataKey.clone();
  }

  static byte[] macKey(byte[] dataKey) {
    return Primitives.hkdf(dataKey, new byte[0], "beamsave header mac", Primitives.KEY_SIZE);
  }

  private byte[] wrapKey() {
    if (wrapKey == null) {
      wrapKey = Primitives.hkdf(dataKey, new byte[0], "beamsave key wrap", Primitives.KEY_SIZE);
    }
    return wrapKey;
  }

  public Envelope envelope() {
    if (envelope == null) {
      try {
        envelope = Envelope.decode("header", header);
      } catch (ImageException e) {
        throw new IllegalStateException("a key's own header does not decode", e);
      }
    }
    return envelope;
  }

  public ImageId id() {
    return envelope().id();
  }

  /** The header, as the image begins. */
  public byte[] header() {
    return header.clone();
  }

  /** A new random key for one shard or the catalog (never reused: see the class comment). */
  public static byte[] newBlockKey() {
    return Primitives.random(Primitives.KEY_SIZE);
  }

  /** What a shard's wrapped key is bound to, beside the image. */
  public static final byte[] SHARD = Primitives.ascii("shard");

  /**
   * {@code plain} (a block key, with the catalog's length for the catalog) sealed under this
   * image's data key, bound to this image and to {@code context}: what the catalog's shard
   * table and the trailer hold.
   */
  public byte[] wrap(byte[] plain, byte[] context) {
    return Primitives.wrap(wrapKey(), Primitives.concat(id().bytes(), context), plain);
  }

  /** Bytes {@link #wrap} adds to what it seals. */
  public static final int WRAP_OVERHEAD = Primitives.NONCE_SIZE + Primitives.TAG_SIZE;

  /** Size of a wrapped block key. */
  public static final int WRAPPED_KEY_SIZE = Primitives.WRAPPED_KEY_SIZE;

  /**
   * What {@link #wrap} sealed with the same {@code context}, or null if it was wrapped by
   * another image's key or changed since.
   */
  public byte[] unwrap(byte[] wrapped, byte[] context) {
    return Primitives.unwrap(wrapKey(), Primitives.concat(id().bytes(), context), wrapped);
  }

  @Override
  public String toString() {
    return "key of image " + id();
  }
}

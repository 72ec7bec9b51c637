package io.beamsave.transforms.crypt;

import io.beamsave.transforms.format.ImageException;
import java.util.ArrayList;
import java.util.List;

/**
 * What the operator gave to open encrypted images: passwords, key files and identities. Held by
 * the command line only; workers get the data keys these open ({@link ImageKey}), never these.
 * Nothing here is printed: messages name stanzas by kind and key id.
 */
public final class Keys {
  public static final Keys NONE = new Keys(List.of(), List.of(), List.of(), List.of());

  private final List<Recipient.Password> passwords;
  private final List<Recipient.KeyFile> keyFiles;
  private final List<Identity> identities;
  /** Data keys already known (a worker re-reading an image the command line opened). */
  private final List<ImageKey> imageKeys;

  private Keys(List<Recipient.Password> passwords, List<Recipient.KeyFile> keyFiles,
      List<Identity> identities, List<ImageKey> imageKeys) {
    this.passwords = List.copyOf(passwords);
    this.keyFiles = List.copyOf(keyFiles);
    this.identities = List.copyOf(identities);
    this.imageKeys = List.copyOf(imageKeys);
  }

  public Keys withPassword(Recipient.Password password) {
    return new Keys(plus(passwords, password), keyFiles, identities, imageKeys);
  }

  public Keys withKeyFile(Recipient.KeyFile key) {
    return new Keys(passwords, plus(keyFiles, key), identities, imageKeys);
  }

  public Keys withIdentity(Identity identity) {
    return new Keys(passwords, keyFiles, plus(identities, identity), imageKeys);
  }

  /** These keys and the data key of one image, which opens that image whoever it is for. */
  public static Keys of(ImageKey key) {
    return new Keys(List.of(), List.of(), List.of(), List.of(key));
  }

  private static <T> List<T> plus(List<T> list, T item) {
    List<T> out = new ArrayList<>(list);
    out.add(item);
    return out;
  }

  public boolean isEmpty() {
    return passwords.isEmpty() && keyFiles.isEmpty() && identities.isEmpty()
        && imageKeys.isEmpty();
  }

  /**
   * The recipients these keys stand for: each password and key file as itself, each identity
   * as its public key. An image made from images these open (a consolidation) is encrypted for
   * them when the operator names no recipient.
   */
  public List<Recipient> asRecipients() {
    List<Recipient> out = new ArrayList<>(passwords);
    out.addAll(keyFiles);
    identities.forEach(i -> out.add(i.publicKey()));
    return out;
  }

  /**
   * The data key of the image whose header is {@code e}, unwrapped with the first of these keys
   * that opens a stanza; fails with one line saying what the image is encrypted for and what is
   * wrong with the keys given.
   */
  byte[] unwrap(String image, Envelope e) throws ImageException {
    for (ImageKey k : imageKeys) {
      if (k.id().equals(e.id())) {
        return k.dataKey();
      }
    }
    if (passwords.isEmpty() && keyFiles.isEmpty() && identities.isEmpty()) {
      throw new KeyException(image + " is encrypted (for " + e.recipients() + "): give"
          + " --identity, --key-file or --password-file (or BEAMSAVE_PASSWORD)", e, true);
    }
    boolean idMatched = false;
    boolean passwordTried = false;
    for (Stanza s : e.stanzas()) {
      byte[] key = null;
      switch (s.type()) {
        case Stanza.KEY_FILE -> {
          for (Recipient.KeyFile k : keyFiles) {
            if (key == null && k.owns(s)) {
              idMatched = true;
              key = k.open(s, e.id());
            }
          }
        }
        case Stanza.X25519 -> {
          for (Identity i : identities) {
            if (key == null && i.publicKey().owns(s)) {
              idMatched = true;
              key = i.open(s, e.id());
            }
          }
        }
        default -> {
          for (Recipient.Password p : passwords) {
            if (key == null) {
              passwordTried = true;
              key = p.open(s, e.id());
            }
          }
        }
      }
      if (key != null && key.length == Primitives.KEY_SIZE) {
        return key;
      }
    }
    if (idMatched) {
      throw new ImageException(image + ": the key given matches a recipient of the header but"
          + " does not open it: the header was changed (tampered) or damaged");
    }
    if (passwordTried) {
      throw new KeyException(image + ": wrong password"
          + (keyFiles.isEmpty() && identities.isEmpty() ? "" : ", and no key given is one it"
              + " is encrypted for") + " (it is encrypted for " + e.recipients() + ")", e, false);
    }
    String given = String.join(" or ", asRecipients().stream().map(Recipient::describe).toList());
    String wrongKind = !identities.isEmpty() && keyFiles.isEmpty() && passwords.isEmpty()
        ? "wrong identity" : "wrong key";
    throw new KeyException(image + ": " + wrongKind + ": it is encrypted for " + e.recipients()
        + ", not for " + given, e, false);
  }

  @Override
  public String toString() {
    return passwords.size() + " password(s), " + keyFiles.size() + " key file(s), "
        + identities.size() + " identit(ies)";
  }
}

package io.beamsave.transforms.crypt;

import io.beamsave.transforms.BeamsaveException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;

/**
 * An X25519 private key: what opens images saved for its {@link Recipient.PublicKey}. Kept in
 * a file of its own (mode 0600) written by {@code beamsave keygen}: comment lines, one of which
 * names the public key, and the key itself on a line of its own.
 */
public final class Identity {
  private final byte[] secret;
  private final Recipient.PublicKey publicKey;

  private Identity(byte[] secret) {
    this.secret = secret.clone();
    this.publicKey = new Recipient.PublicKey(X25519.publicKey(secret));
  }

  public static Identity generate() {
    return new Identity(Primitives.random(32));
  }

  public Recipient.PublicKey publicKey() {
    return publicKey;
  }

  /** The data key in {@code s}, or null if {@code s} is not for this identity. */
  byte[] open(Stanza s, io.beamsave.transforms.format.ImageId image) {
    Recipient.PublicKey me = publicKey;
    if (!me.owns(s)) {
      return null;
    }
    byte[] ephemeral = s.ephemeral();
    byte[] shared = X25519.agree(secret, ephemeral);
    if (shared == null) {
      return null;
    }
    return Primitives.unwrap(Recipient.PublicKey.kek(shared, ephemeral, me.key()),
        Recipient.aad(image), s.wrapped());
  }

  /**
   * Writes this identity to {@code file}, which must not exist yet, readable by its owner only
   * (created so, never widened afterwards).
   */
  public void write(Path file) {
    String text = "# beamsave identity: an X25519 private key. Keep it secret; it opens every"
        + " image saved for its public key.\n"
        + "# created: " + Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS) + "\n"
        + "# public key: " + publicKey().text() + "\n"
        + KeyText.encode(KeyText.IDENTITY, secret) + "\n";
    // Created with no access for others before a byte of the key is in it (the mode is given
    // to open(2), so the umask can only narrow it).
    try (var out = Files.newByteChannel(file,
        java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
      while (b.hasRemaining()) {
        out.write(b);
      }
      ((java.nio.channels.FileChannel) out).force(true);
    } catch (FileAlreadyExistsException e) {
      throw new BeamsaveException(file + ": already exists; an identity is never overwritten"
          + " (images saved for it could no longer be opened)");
    } catch (UnsupportedOperationException e) {
      throw new BeamsaveException("cannot write identity " + file + ": its file system cannot"
          + " make it readable by its owner only");
    } catch (IOException e) {
      throw BeamsaveException.io("cannot write identity", file, e);
    }
  }

  /** Reads the identity in {@code file}; fails with one line naming the file. */
  public static Identity read(Path file) {
    String shown = KeyText.shown(file);
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
    } catch (NoSuchFileException e) {
      throw new BeamsaveException("identity " + shown + ": no such file");
    } catch (AccessDeniedException e) {
      throw new BeamsaveException("identity " + shown + ": permission denied");
    } catch (IOException e) {
      throw new BeamsaveException("identity " + shown + ": cannot be read ("
          + BeamsaveException.describe(e) + ")");
    }
    for (String line : lines) {
      String l = line.strip();
      if (l.isEmpty() || l.startsWith("#")) {
        continue;
      }
      if (l.startsWith(KeyText.PUBLIC)) {
        throw new BeamsaveException("identity " + shown + " holds a public key: opening an image"
            + " needs the identity (the private key) that 'beamsave keygen' wrote");
      }
      try {
        return new Identity(KeyText.decode(KeyText.IDENTITY, l));
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException("identity " + shown + ": " + e.getMessage());
      }
    }
    throw new BeamsaveException("identity " + shown + ": holds no identity");
  }

  @Override
  public String toString() {
    return "identity of " + publicKey().describe();
  }
}

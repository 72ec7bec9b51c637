package io.beamsave.pipelines.cli;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Identity;
import io.beamsave.transforms.crypt.KeyText;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.crypt.Recipient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Who a new image is encrypted for ({@code save}, {@code consolidate}): each --recipient public
 * key, each password and key file (which open images too), and the public key of each
 * --identity. None given: the image is not encrypted.
 */
final class RecipientArgs {
  @Mixin KeyArgs keys;

  @Option(
      names = "--recipient",
      paramLabel = "PUBKEY|FILE",
      description =
          "Encrypt for an X25519 public key, as 'beamsave keygen' prints it (beamsave-pub-...),"
              + " or for each public key a FILE holds, one per line. Only the matching identity"
              + " opens the image: a host that saves with public keys alone cannot read what it"
              + " saved. Repeat for several.")
  List<String> publicKeys = new ArrayList<>();

  /** Everyone the image is for, in the order given; empty for an image not encrypted. */
  List<Recipient> recipients() {
    return recipients(keys, publicKeys);
  }

  /**
   * The passwords and key files of {@code keys}, the public keys {@code publicKeys} name, and
   * the public key of each identity of {@code keys}.
   */
  static List<Recipient> recipients(KeyArgs keys, List<String> publicKeys) {
    List<Recipient> out = new ArrayList<>(keys.passwords());
    out.addAll(keys.keyFiles());
    LinkedHashSet<Recipient.PublicKey> pubs = new LinkedHashSet<>();
    for (String r : publicKeys) {
      pubs.addAll(parse(r));
    }
    for (Identity i : keys.identities()) {
      pubs.add(i.publicKey());
    }
    out.addAll(pubs);
    return out;
  }

  Keys keys() {
    return keys.keys();
  }

  private static boolean isFile(String given) {
    try {
      return Files.isRegularFile(Path.of(given));
    } catch (java.nio.file.InvalidPathException e) {
      return false;
    }
  }

  /** The public keys {@code given} names: itself, or those of the file it names. */
  static List<Recipient.PublicKey> parse(String given) {
    if (KeyText.mayBeSecret(given) && !isFile(given)) {
      // Never repeated: it may be a secret, now in the shell's history.
      throw new BeamsaveException("--recipient: "
          + (given.toUpperCase(java.util.Locale.ROOT).contains("BEAMSAVE-IDENTITY-")
              ? "that is an identity (a private key), not a public key"
              : KeyText.shown(given) + " is no public key")
          + "; give the public key 'beamsave keygen' printed (beamsave-pub-...), or a file of"
          + " them: the saving host needs no private key");
    }
    if (given.startsWith("beamsave-pub-")) {
      try {
        return List.of(Recipient.PublicKey.parse(given));
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException("--recipient " + given + ": " + e.getMessage());
      }
    }
    Path file;
    try {
      file = Path.of(given);
    } catch (java.nio.file.InvalidPathException e) {
      throw new BeamsaveException("--recipient: neither a public key (beamsave-pub-...) nor a"
          + " file name");
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
    } catch (NoSuchFileException e) {
      throw new BeamsaveException("--recipient " + given + ": neither a public key"
          + " (beamsave-pub-...) nor a file");
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read --recipient", file, e);
    }
    List<Recipient.PublicKey> out = new ArrayList<>();
    for (int n = 0; n < lines.size(); n++) {
      String l = lines.get(n).strip();
      if (l.isEmpty() || l.startsWith("#")) {
        continue;
      }
      if (l.startsWith("BEAMSAVE-IDENTITY-")) {
        throw new BeamsaveException("--recipient " + KeyText.shown(file) + " holds an identity (a private"
            + " key), which the saving host must not have: give its public key (the line"
            + " '# public key: ...' in it, or what 'beamsave keygen' printed)");
      }
      try {
        out.add(Recipient.PublicKey.parse(l));
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException("--recipient " + file + " line " + (n + 1) + ": "
            + e.getMessage());
      }
    }
    if (out.isEmpty()) {
      throw new BeamsaveException("--recipient " + file + ": holds no public key");
    }
    return out;
  }
}

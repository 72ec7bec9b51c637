package io.beamsave.pipelines.cli;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Identity;
import io.beamsave.transforms.crypt.KeyText;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.crypt.Recipient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.UnaryOperator;
import picocli.CommandLine.Option;

/**
 * The keys that open encrypted images, for every command that reads one: identities, key files
 * and passwords. A password comes from a file or from {@value #PASSWORD_ENV}, never from the
 * command line, where the process list would show it; no message repeats a secret.
 */
final class KeyArgs {
  static final String PASSWORD_ENV = "BEAMSAVE_PASSWORD";

  /** Where environment variables are read. */
  static final UnaryOperator<String> environment = System::getenv;

  @Option(
      names = "--identity",
      paramLabel = "FILE",
      description =
          "An identity file (an X25519 private key, from 'beamsave keygen'): opens images"
              + " saved for its public key. Repeat for several.")
  List<Path> identityFiles = new ArrayList<>();

  @Option(
      names = "--key-file",
      paramLabel = "FILE",
      description =
          "A file holding a raw 256-bit key (32 bytes, as 'head -c 32 /dev/urandom' makes, or"
              + " 64 hex digits): opens images saved with it. Repeat for several.")
  List<Path> keyFiles = new ArrayList<>();

  @Option(
      names = "--password-file",
      paramLabel = "FILE",
      description =
          "A file whose contents are a password (a final newline is not part of it): opens"
              + " images saved with it. $" + PASSWORD_ENV + " gives a password too; a password"
              + " is never taken on the command line.")
  List<Path> passwordFiles = new ArrayList<>();

  private Keys keys;

  /** What was given, read once. */
  Keys keys() {
    if (keys == null) {
      Keys k = Keys.NONE;
      for (Recipient.Password p : passwords()) {
        k = k.withPassword(p);
      }
      for (Recipient.KeyFile f : keyFiles()) {
        k = k.withKeyFile(f);
      }
      for (Identity i : identities()) {
        k = k.withIdentity(i);
      }
      keys = k;
    }
    return keys;
  }

  /** The command this mixin is part of: where its warnings go. */
  @picocli.CommandLine.Spec(picocli.CommandLine.Spec.Target.MIXEE)
  picocli.CommandLine.Model.CommandSpec mixee;

  private List<Identity> identities;

  List<Identity> identities() {
    if (identities == null) {
      List<Identity> read = new ArrayList<>();
      for (Path f : identityFiles) {
        read.add(Identity.read(f));
        warnIfOthersRead(f);
      }
      identities = read;
    }
    return identities;
  }

  /** An identity others can read is a key others may have: said, not refused (ssh refuses). */
  private void warnIfOthersRead(Path f) {
    try {
      java.util.Set<java.nio.file.attribute.PosixFilePermission> p =
          Files.getPosixFilePermissions(f);
      if (p.contains(java.nio.file.attribute.PosixFilePermission.GROUP_READ)
          || p.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ)) {
        String line = "beamsave: warning: identity " + KeyText.shown(f) + " may be read by other"
            + " users (" + java.nio.file.attribute.PosixFilePermissions.toString(p)
            + "): whoever reads it can open every image saved for it; chmod 600 it";
        java.io.PrintWriter err = mixee != null ? mixee.commandLine().getErr()
            : new java.io.PrintWriter(System.err, true);
        err.println(line);
        err.flush();
      }
    } catch (IOException | UnsupportedOperationException e) {
      // Unreadable or no POSIX permissions: Identity.read says what it can.
    }
  }

  List<Recipient.KeyFile> keyFiles() {
    return keyFiles.stream().map(KeyArgs::readKeyFile).toList();
  }

  /** The passwords of the --password-file's, then $BEAMSAVE_PASSWORD's. */
  List<Recipient.Password> passwords() {
    List<Recipient.Password> out = new ArrayList<>();
    for (Path f : passwordFiles) {
      out.add(readPassword(f));
    }
    String env = environment.apply(PASSWORD_ENV);
    if (env != null) {
      if (env.isEmpty()) {
        throw new BeamsaveException("$" + PASSWORD_ENV + " is set but empty");
      }
      out.add(new Recipient.Password(env.getBytes(StandardCharsets.UTF_8)));
    }
    return out;
  }

  static Recipient.Password readPassword(Path file) {
    byte[] b = read(file, "--password-file");
    int end = b.length;
    if (end > 0 && b[end - 1] == '\n') {
      end--;
      if (end > 0 && b[end - 1] == '\r') {
        end--;
      }
    }
    if (end == 0) {
      throw new BeamsaveException("--password-file " + KeyText.shown(file)
          + ": the password is empty");
    }
    return new Recipient.Password(java.util.Arrays.copyOf(b, end));
  }

  static Recipient.KeyFile readKeyFile(Path file) {
    byte[] b = read(file, "--key-file");
    if (b.length == 32) {
      return new Recipient.KeyFile(b);
    }
    String text = new String(b, StandardCharsets.ISO_8859_1).strip();
    if (text.length() == 64 && text.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
      return new Recipient.KeyFile(HexFormat.of().parseHex(text));
    }
    throw new BeamsaveException("--key-file " + KeyText.shown(file) + ": a key file holds a"
        + " 256-bit key: 32"
        + " bytes (head -c 32 /dev/urandom > FILE) or 64 hex digits, not " + b.length
        + " bytes of something else");
  }

  private static byte[] read(Path file, String option) {
    try {
      if (Files.size(file) > 1 << 16) {
        throw new BeamsaveException(option + " " + KeyText.shown(file)
            + ": too large to be a key or password");
      }
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new BeamsaveException("cannot read " + option + " " + KeyText.shown(file) + ": "
          + BeamsaveException.describe(e));
    }
  }
}

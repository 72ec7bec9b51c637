package io.beamsave.pipelines.cli;

import io.beamsave.transforms.crypt.Identity;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code beamsave keygen}: a new identity for encrypted images. */
@Command(
    name = "keygen",
    mixinStandardHelpOptions = true,
    description = {
      "Make a new identity: an X25519 key pair for encrypted images. The private key goes to"
          + " --identity FILE, readable by its owner only; the public key is printed on"
          + " standard output, one line, for 'save --recipient'.",
      "A host that saves with only the public key cannot read what it saved: keep the identity"
          + " elsewhere, and give it to restore, verify, list and consolidate with --identity."
          + " Whoever holds it reads every image saved for its public key; lost, those images"
          + " cannot be read (see docs/security.md for keeping a second copy)."
    },
    footer = {
      "%nExamples:",
      "  beamsave keygen --identity ~/.config/beamsave/backup.id > backup.pub",
      "  beamsave save --library /srv/data --image /backup/data-{utc}.bsave --recipient backup.pub",
      "  beamsave restore /backup/latest --target /tmp/data --identity ~/.config/beamsave/backup.id"
    })
final class KeygenCommand implements Callable<Integer> {
  @Option(
      names = "--identity",
      paramLabel = "FILE",
      required = true,
      description = "Where to write the identity (the private key). It must not exist: an"
          + " identity is never overwritten.")
  Path identity;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    if (io.beamsave.transforms.crypt.KeyText.mayBeSecret(identity.toString())) {
      // A key pasted where the file name belongs would become a file's name, and be printed.
      throw new io.beamsave.transforms.BeamsaveException("--identity "
          + io.beamsave.transforms.crypt.KeyText.shown(identity) + ": give the name of the file"
          + " to write the identity to");
    }
    Identity id = Identity.generate();
    id.write(identity);
    spec.commandLine().getOut().println(id.publicKey().text());
    if (!BeamsaveCommand.of(spec).quiet) {
      spec.commandLine().getErr().println("beamsave: wrote the identity to " + identity
          + " (mode 0600; keep it secret, and keep a copy: it alone opens images saved for"
          + " its public key, " + id.publicKey().describe() + ")");
    }
    return 0;
  }
}

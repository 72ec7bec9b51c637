package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.locks.ImageLock;
import io.beamsave.pipelines.locks.RunLease;
import io.beamsave.pipelines.rekey.Rekey;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.crypt.Recipient;
import io.beamsave.transforms.run.RunId;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave rekey}: who an encrypted image is for. */
@Command(
    name = "rekey",
    mixinStandardHelpOptions = true,
    description = {
      "Add recipients to an encrypted image and remove others, rewriting only its header (in"
          + " object storage the rest is copied by the store itself). Open it with a key it is"
          + " for (--identity, --key-file, --password-file); it keeps at least one recipient.",
      "A removed key no longer opens the image. It does not take back what its holder could"
          + " read before: the data key stays the same. For that, consolidate the image into a"
          + " new one (which has a new data key) and delete the old."
    },
    footer = {
      "%nExamples:",
      "  beamsave rekey /backup/data.bsave --identity old.id --add-recipient new.pub --remove 1a2b3c4d5e6f7081",
      "  beamsave rekey s3://backups/data.bsave --password-file pw --add-password-file new-pw --remove password",
      "  beamsave verify /backup/data.bsave      # shows whom it is for, without a key"
    })
final class RekeyCommand implements Callable<Integer> {
  @Mixin ImageArgs image;

  @Option(
      names = "--add-recipient",
      paramLabel = "PUBKEY|FILE",
      description = "Add an X25519 public key (beamsave-pub-...), or each one a FILE holds."
          + " Repeat for several.")
  List<String> addRecipients = new ArrayList<>();

  @Option(
      names = "--add-key-file",
      paramLabel = "FILE",
      description = "Add a raw 256-bit key kept in FILE. Repeat for several.")
  List<Path> addKeyFiles = new ArrayList<>();

  @Option(
      names = "--add-password-file",
      paramLabel = "FILE",
      description = "Add the password FILE holds. Repeat for several.")
  List<Path> addPasswordFiles = new ArrayList<>();

  @Option(
      names = "--remove",
      paramLabel = "ID|password",
      description = "Remove a recipient: its key id (16 hex digits, as verify and images show"
          + " them: 'recipient ID', 'key file ID'), its public key, or 'password' for every"
          + " password. Repeat for several.")
  List<String> remove = new ArrayList<>();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    List<Recipient> add = new ArrayList<>();
    addPasswordFiles.forEach(f -> add.add(KeyArgs.readPassword(f)));
    addKeyFiles.forEach(f -> add.add(KeyArgs.readKeyFile(f)));
    addRecipients.forEach(r -> add.addAll(RecipientArgs.parse(r)));
    if (add.isEmpty() && remove.isEmpty()) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "nothing to do: give --add-recipient, --add-key-file, --add-password-file or --remove");
    }
    String where = image.image();
    Rekey.Outcome o;
    // One writer of an image at a time, and 'cleanup' leaves its copy or upload alone.
    try (ImageLock lock = ImageLock.acquire(RunId.mint(), "rekey", List.of(where), null,
            spec.commandLine().getErr());
        RunLease lease = RunLease.take(lock.run(), "rekey", List.of(), List.of(where), List.of(),
            image.s3.settings())) {
      o = Rekey.run(where, image.s3.settings(), image.keys.keys(), remove, add);
    }
    spec.commandLine().getOut().println(String.format(Locale.ROOT,
        "rekeyed %s: for %s (was for %s); header rewritten, %s %s in %.2fs",
        Printable.text(where), o.after().recipients(), o.before().recipients(),
        Sizes.human(o.bytesCopied()), o.copiedInStore() ? "copied in the store" : "copied beside it",
        o.seconds()));
    return 0;
  }
}

package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.stored.Ledger;
import io.beamsave.transforms.store.Location;
import java.io.PrintWriter;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave history}: the run ledger beside a set of images. */
@Command(
    name = "history",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave history --at /backup",
      "  beamsave history --at s3://backups/nightly --json | jq 'select(.kind==\"save\")'"
    },
    description =
        "Print the run ledgers kept beside images (one record per save and upload: library,"
            + " codec, strategy, start, duration, raw and stored bytes, where), oldest first,"
            + " from every ledger at any depth under --at.")
final class HistoryCommand implements Callable<Integer> {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

  @Option(names = "--at", paramLabel = "DIR|s3://BUCKET/PREFIX", required = true,
      description = "The directory or prefix holding the images: the ledgers (beamsave-ledger/"
          + " beside each set of images) are found at any depth beneath it.")
  String at;

  @Mixin JsonOutput json;

  @Mixin S3Args s3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    if (!Location.of(at).isDirectory(s3.settings())) {
      throw new io.beamsave.transforms.BeamsaveException("--at " + at + ": no such directory");
    }
    List<Ledger.Record> records = Ledger.readBeneath(at, s3.settings());
    PrintWriter out = spec.commandLine().getOut();
    if (json.on()) {
      for (Ledger.Record r : records) {
        java.util.Map<String, Object> m = JsonOutput.object("run");
        m.putAll(r.toJson());
        json.emit(m);
      }
      return 0;
    }
    if (records.isEmpty()) {
      out.println("no runs recorded at " + at);
      return 0;
    }
    int lib = Math.max(7, records.stream().mapToInt(r -> r.library().length()).max().orElse(7));
    String row = "%-19s  %-11s  %-" + lib + "s  %-8s  %-8s  %-27s  %9s  %10s  %10s  %6s  %s%n";
    out.printf(Locale.ROOT, row, "start (UTC)", "kind", "library", "codec", "transfer",
        "strategy", "seconds", "raw", "stored", "ratio", "where");
    for (Ledger.Record r : records) {
      out.printf(
          Locale.ROOT, row, TIME.format(r.start()), r.kind(), r.library(),
          r.isEncrypted() ? "-" : r.codec(), r.transferCodec(),
          r.isEncrypted() ? "-" : r.strategy(), String.format(Locale.ROOT, "%.2f", r.seconds()),
          r.isEncrypted() ? "-" : Sizes.human(r.rawBytes()), Sizes.human(r.storedBytes()),
          r.isEncrypted() ? "-"
              : String.format(Locale.ROOT, "%.2f",
                  (double) r.rawBytes() / Math.max(1, r.storedBytes())),
          r.where());
    }
    return 0;
  }
}

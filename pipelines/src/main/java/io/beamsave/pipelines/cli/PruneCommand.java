package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.retention.Retention;
import io.beamsave.pipelines.retention.StoredImages;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.transforms.BeamsaveException;
import java.io.PrintWriter;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code beamsave prune}: retention for scheduled saves. */
@Command(
    name = "prune",
    mixinStandardHelpOptions = true,
    description = {
      "Remove old images under a directory or prefix, keeping the newest --keep-last of each"
          + " series, the newest of each of the last --keep-daily days and --keep-weekly ISO"
          + " weeks (UTC). A series is the images whose names differ only in their {utc}"
          + " timestamp (save --image ...-{utc}.bsave); other images are each their own series.",
      "Prints what it would do and deletes nothing unless --yes. Never removes the newest image"
          + " of a series, nor an image whose upload (or replacement) is in progress. Removes the"
          + " deleted images' records from the run ledger."
    })
final class PruneCommand implements Callable<Integer> {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC);

  @Option(names = "--at", paramLabel = "DIR|s3://BUCKET/PREFIX", required = true,
      description = "Where the images are (searched at any depth).")
  String at;

  @Option(names = "--keep-last", paramLabel = "N", required = true,
      description = "Keep the N newest images of each series (at least 1).")
  int keepLast;

  @Option(names = "--keep-daily", paramLabel = "N", defaultValue = "0",
      description = "Also keep the newest image of each of the N most recent days that have one."
          + " Default: ${DEFAULT-VALUE}.")
  int keepDaily;

  @Option(names = "--keep-weekly", paramLabel = "N", defaultValue = "0",
      description = "Also keep the newest image of each of the N most recent ISO weeks that"
          + " have one. Default: ${DEFAULT-VALUE}.")
  int keepWeekly;

  @Option(names = "--yes", description = "Delete; without it, only print what would be deleted.")
  boolean yes;

  @Mixin S3Args s3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    Retention policy;
    try {
      policy = new Retention(keepLast, keepDaily, keepWeekly);
    } catch (IllegalArgumentException e) {
      throw new BeamsaveException(e.getMessage());
    }
    PrintWriter out = spec.commandLine().getOut();
    Map<String, List<StoredImages.Image>> series = StoredImages.list(at, s3.settings());
    if (series.isEmpty()) {
      out.println("no images under " + at);
      return 0;
    }
    int gone = 0;
    long freed = 0;
    for (List<StoredImages.Image> images : series.values()) {
      for (Retention.Decision d : policy.decide(images)) {
        StoredImages.Image i = d.image();
        String action;
        String why;
        if (d.keep()) {
          action = "keep";
          why = String.join(", ", d.reasons());
        } else if (i.busy()) {
          action = "keep";
          why = "upload in progress";
        } else {
          action = yes ? "deleted" : "delete";
          why = "";
          if (yes) {
            StoredImages.delete(i, s3.settings());
          }
          gone++;
          freed += i.bytes();
        }
        out.printf(Locale.ROOT, "%-7s  %s  %10s  %s%s%n", action, TIME.format(i.time()),
            Sizes.human(i.bytes()), i.uri(), why.isEmpty() ? "" : "  (" + why + ")");
      }
    }
    if (yes) {
      out.printf(Locale.ROOT, "deleted %d image(s), %s%n", gone, Sizes.human(freed));
    } else {
      out.printf(Locale.ROOT, "would delete %d image(s), %s; run again with --yes to delete%n",
          gone, Sizes.human(freed));
    }
    return 0;
  }
}

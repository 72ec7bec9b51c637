package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.locks.Leases;
import io.beamsave.pipelines.locks.RunLease;
import io.beamsave.pipelines.retention.PrunePlan;
import io.beamsave.pipelines.retention.Retention;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.format.ImageId;
import java.io.PrintWriter;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave prune}: retention for scheduled saves. */
@Command(
    name = "prune",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave prune --at s3://backups/nightly --keep-last 7 --keep-daily 14 --keep-weekly 8",
      "  beamsave prune --at /backup --keep-last 3 --yes",
      "  beamsave prune --at /backup --keep-within 30d --keep-monthly 12 --keep-yearly 5"
    },
    description = {
      "Remove old images under a directory or prefix, keeping the newest --keep-last of each"
          + " series, the newest of each of the last --keep-daily days, --keep-weekly ISO"
          + " weeks, --keep-monthly months and --keep-yearly years (UTC), and every image"
          + " --keep-within a duration of the newest; at least one rule is needed. A series is the images whose names differ only in their {utc}"
          + " timestamp (save --image ...-{utc}.bsave); other images are each their own series.",
      "Never removes an image that a kept image needs: every base of a kept incremental image"
          + " is kept (matched by image id, wherever it moved), and their bases in turn, and so"
          + " is the base of a save in progress (its lease). A consolidated image and the image"
          + " it was folded from count as one, and the consolidated one is kept, once prune has"
          + " read it and found the whole original in it (every entry and digest, every block"
          + " read back); a claim it cannot confirm is warned about, and both are judged by"
          + " themselves. A kept image whose base is not stored there is warned about.",
      "Encrypted images need no key: their headers name their bases. With keys given"
          + " (--identity, --key-file, --password-file), images they do not open (plain ones,"
          + " or for other keys) are neither counted nor deleted, so that images made by"
          + " someone who may only write there cannot push yours out of --keep-last; a"
          + " consolidated encrypted image stands for its original only when they open both.",
      "Prints what it would do, and why, and deletes nothing unless --yes. Never removes the"
          + " newest image of a series, a damaged image, nor an image whose upload (or"
          + " replacement) is in progress. Removes the deleted images' records from the run"
          + " ledger."
    })
final class PruneCommand implements Callable<Integer> {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC);

  @Option(names = "--at", paramLabel = "DIR|s3://BUCKET/PREFIX", required = true,
      description = "Where the images are (searched at any depth).")
  String at;

  @Option(names = "--keep-last", paramLabel = "N", defaultValue = "0",
      description = "Keep the N newest images of each series. The newest is always kept.")
  int keepLast;

  @Option(names = "--keep-daily", paramLabel = "N", defaultValue = "0",
      description = "Also keep the newest image of each of the N most recent days that have one."
          + " Default: ${DEFAULT-VALUE}.")
  int keepDaily;

  @Option(names = "--keep-weekly", paramLabel = "N", defaultValue = "0",
      description = "Also keep the newest image of each of the N most recent ISO weeks that"
          + " have one. Default: ${DEFAULT-VALUE}.")
  int keepWeekly;

  @Option(names = "--keep-monthly", paramLabel = "N", defaultValue = "0",
      description = "Also keep the newest image of each of the N most recent months (UTC) that"
          + " have one. Default: ${DEFAULT-VALUE}.")
  int keepMonthly;

  @Option(names = "--keep-yearly", paramLabel = "N", defaultValue = "0",
      description = "Also keep the newest image of each of the N most recent years (UTC) that"
          + " have one. Default: ${DEFAULT-VALUE}.")
  int keepYearly;

  @Option(names = "--keep-within", paramLabel = "DURATION",
      description = "Also keep every image saved within DURATION of its series' newest image"
          + " (not of now: a series whose saves stopped keeps what it had): numbers with"
          + " units y, m (months), w, d, h, as 30d, 1y6m, 12h.")
  String keepWithin;

  @Option(names = "--tag", paramLabel = "TAG",
      description = "Count and delete only images tagged TAG (save --tag; repeatable: any of"
          + " them); the others are neither counted nor deleted, and the bases they need are"
          + " kept. An encrypted image's tags are in its catalog: without its key it is left.")
  List<String> tags = new java.util.ArrayList<>();

  @Option(names = "--yes", description = "Delete; without it, only print what would be deleted.")
  boolean yes;

  @Mixin S3Args s3;

  @Mixin KeyArgs keys;

  @Mixin JsonOutput json;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    Retention policy;
    try {
      policy = new Retention(keepLast, keepDaily, keepWeekly, keepMonthly, keepYearly,
          keepWithin == null ? null : Retention.Period.parse(keepWithin));
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    PrintWriter out = spec.commandLine().getOut();
    Map<String, List<StoredImages.Image>> series = StoredImages.list(at, s3.settings());
    if (series.isEmpty()) {
      if (json.on()) {
        java.util.Map<String, Object> m = JsonOutput.object("summary");
        m.put("deleted", yes);
        m.put("images", 0);
        m.put("bytes", 0);
        json.emit(m);
      } else {
        out.println("no images under " + at);
      }
      return 0;
    }
    List<PrunePlan.Candidate> candidates = PrunePlan.read(series, s3.settings(), keys.keys(),
        tags);
    // Read after the images, so that a save that began meanwhile is seen using its base.
    Map<ImageId, String> inUse = inUse();
    PrunePlan.Proof proof = PrunePlan.proof(s3.settings(), keys.keys());
    PrunePlan plan = PrunePlan.decide(candidates, policy, inUse, proof);
    RunLease intent = null;
    if (yes && plan.decisions().stream().anyMatch(d -> !d.keep())) {
      // Said before the leases are read again: a save that leases its base after this read
      // sees the intent and refuses the base; one that leased it before is seen here.
      Map<String, ImageId> ids = new java.util.HashMap<>();
      candidates.forEach(c -> ids.put(c.image().uri(),
          c.lineage() == null ? null : c.lineage().id()));
      intent = RunLease.intent(io.beamsave.transforms.run.RunId.mint().value(),
          plan.decisions().stream().filter(d -> !d.keep())
              .map(d -> new RunLease.Use(ids.get(d.image().uri()), d.image().uri())).toList(),
          s3.settings());
      Map<ImageId, String> now = inUse();
      if (!inUse.keySet().containsAll(now.keySet())) {
        inUse.putAll(now);
        plan = PrunePlan.decide(candidates, policy, inUse, proof);
      }
    }
    try {
      return apply(plan);
    } finally {
      if (intent != null) {
        intent.close();
      }
    }
  }

  /** The images the runs in progress under --at use (a save's base), by id, with the run. */
  private Map<ImageId, String> inUse() {
    Map<ImageId, String> inUse = new java.util.HashMap<>();
    for (Leases.Found lease : Leases.under(at, s3.settings())) {
      if (lease.live()) {
        lease.uses().forEach(id -> inUse.putIfAbsent(id, lease.describe()));
      }
    }
    return inUse;
  }

  private int apply(PrunePlan plan) {
    PrintWriter out = spec.commandLine().getOut();
    plan.warnings().forEach(json::warning);
    int gone = 0;
    long freed = 0;
    for (PrunePlan.Decision d : plan.decisions()) {
      StoredImages.Image i = d.image();
      String action = d.keep() ? "keep" : yes ? "deleted" : "delete";
      if (!d.keep()) {
        if (yes) {
          StoredImages.delete(i, s3.settings());
        }
        gone++;
        freed += i.bytes();
      }
      if (json.on()) {
        java.util.Map<String, Object> m = JsonOutput.object("decision");
        m.put("action", action);
        m.put("image", i.uri());
        m.put("series", i.series());
        m.put("time", i.time().toString());
        m.put("bytes", i.bytes());
        m.put("reasons", d.reasons());
        json.emit(m);
        continue;
      }
      String why = String.join(", ", d.reasons());
      out.printf(Locale.ROOT, "%-7s  %s  %10s  %s%s%n", action, TIME.format(i.time()),
          Sizes.human(i.bytes()), i.uri(), why.isEmpty() ? "" : "  (" + why + ")");
    }
    if (json.on()) {
      java.util.Map<String, Object> m = JsonOutput.object("summary");
      m.put("deleted", yes);
      m.put("images", gone);
      m.put("bytes", freed);
      json.emit(m);
    } else if (yes) {
      out.printf(Locale.ROOT, "deleted %s, %s%n", Sizes.count(gone, "image", "images"),
          Sizes.human(freed));
    } else {
      out.printf(Locale.ROOT, "would delete %s, %s; run again with --yes to delete%n",
          Sizes.count(gone, "image", "images"), Sizes.human(freed));
    }
    return 0;
  }
}

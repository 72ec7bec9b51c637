package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.locks.Leftovers;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.store.Location;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave cleanup}: what failed or killed runs left, removed. */
@Command(
    name = "cleanup",
    mixinStandardHelpOptions = true,
    description = {
      "List, and with --yes remove, what runs that failed or were killed left under a"
          + " directory or s3:// prefix, at any depth: unfinished multipart uploads that"
          + " beamsave began (billed by the store until removed), staged shards, upload state,"
          + " partial images (.partial), staging directories, locks and leases no run holds,"
          + " and the btrfs snapshots of saves that were killed (in .beamsave-snapshots under"
          + " DIR, or where a save --snapshot of DIR makes them).",
      "An unfinished upload is beamsave's only where the upload state beamsave left beside"
          + " its key (KEY.beamsave-upload...) names the upload's id; any other upload, and an"
          + " object by such a name that is no upload state of beamsave's, is listed as not"
          + " beamsave's and never touched.",
      "Never touches a complete image, nor the work of a run in progress: a save,"
          + " consolidate, upload, download or rekey holds a lock beside a local image and"
          + " leaves a lease beside the images it reads or writes in object storage, renewed"
          + " every minute; a lease from another host counts as live for 10 minutes after its"
          + " last renewal, one from this host while its process runs. What runs in progress"
          + " hold is listed too."
    },
    footer = {
      "%nExamples:",
      "  beamsave cleanup --at s3://backups/nightly            # what would be removed",
      "  beamsave cleanup --at /backup --yes",
      "  beamsave cleanup --at s3://backups/nightly --yes --json"
    })
final class CleanupCommand implements Callable<Integer> {
  @Option(names = "--at", paramLabel = "DIR|s3://BUCKET/PREFIX", required = true,
      description = "Where the images are (searched at any depth).")
  String at;

  @Option(names = "--yes", description = "Remove; without it, only print what would be removed.")
  boolean yes;

  @Mixin S3Args s3;

  @Mixin JsonOutput json;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    at = Location.of(at).normalized().toString();
    Leftovers.Found found = Leftovers.find(at, s3.settings());
    PrintWriter out = spec.commandLine().getOut();
    String action = yes ? "removed" : "remove";
    int removed = 0;
    for (Leftovers.Item item : found.leftovers()) {
      if (yes) {
        Leftovers.remove(item, s3.settings());
      }
      removed++;
      if (json.on()) {
        Map<String, Object> m = JsonOutput.object("leftover");
        m.put("action", action);
        m.put("kind", item.kind().name().toLowerCase(Locale.ROOT));
        m.put("location", item.location());
        m.put("bytes", item.bytes() < 0 ? null : item.bytes());
        m.put("made", item.made() == null ? null : item.made().toString());
        m.put("uploadId", item.uploadId());
        json.emit(m);
      } else {
        out.printf(Locale.ROOT, "%-7s  %-17s  %10s  %s%n", action, item.kind(),
            item.bytes() < 0 ? "-" : Sizes.human(item.bytes()), Printable.text(item.location()));
      }
    }
    for (Leftovers.NotOurs other : found.notOurs()) {
      if (json.on()) {
        Map<String, Object> m = JsonOutput.object("notOurs");
        m.put("kind", other.kind().name().toLowerCase(Locale.ROOT));
        m.put("location", other.location());
        m.put("uploadId", other.uploadId());
        m.put("why", other.why());
        json.emit(m);
      } else {
        out.printf(Locale.ROOT, "%-7s  %-17s  %10s  %s (not beamsave's: %s)%n", "keep",
            other.kind(), "-", Printable.text(other.location()), other.why());
      }
    }
    for (String run : found.inProgress()) {
      if (json.on()) {
        Map<String, Object> m = JsonOutput.object("inProgress");
        m.put("run", run);
        json.emit(m);
      } else {
        out.println("keep     in progress: " + Printable.text(run));
      }
    }
    if (json.on()) {
      Map<String, Object> m = JsonOutput.object("summary");
      m.put("removed", yes);
      m.put("leftovers", removed);
      m.put("bytes", found.bytes());
      m.put("inProgress", found.inProgress().size());
      m.put("notOurs", found.notOurs().size());
      json.emit(m);
    } else if (removed == 0) {
      out.println("nothing left by failed or killed runs under " + at);
    } else if (yes) {
      out.printf(Locale.ROOT, "removed %d leftover%s, %s%n", removed, removed == 1 ? "" : "s",
          Sizes.human(found.bytes()));
    } else {
      out.printf(Locale.ROOT, "would remove %d leftover%s, %s; run again with --yes to remove"
          + " %s%n", removed, removed == 1 ? "" : "s", Sizes.human(found.bytes()),
          removed == 1 ? "it" : "them");
    }
    return 0;
  }
}

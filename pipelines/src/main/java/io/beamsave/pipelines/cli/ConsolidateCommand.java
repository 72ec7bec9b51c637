package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.consolidate.ConsolidatePipeline;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.save.SaveSpecs;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.pipelines.stored.Ledger;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.consolidate.ConsolidatePlan;
import io.beamsave.transforms.consolidate.ConsolidateTask.Kind;
import io.beamsave.transforms.store.Location;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave consolidate}: an incremental image and its bases into one full image. */
@Command(
    name = "consolidate",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave consolidate --image /backup/data/latest --to /backup/data-full.bsave",
      "  beamsave consolidate --image s3://backups/nightly/data/latest --to 's3://backups/nightly/data/data-{utc}.bsave'",
      "  beamsave consolidate /backup/data-20261130T021500Z.bsave --to /backup/full.bsave --codec zstd:9 --json",
      "%n" + PipelineArgs.BEAM_OPTIONS_HELP
    },
    description = {
      "Fold an image and the base images it references into one self-contained (full) image,"
          + " without reading the library: it restores, lists and verifies by itself, and holds"
          + " the same tree as the image, for the same point in time.",
      "Shards the image still mostly references are copied block for block (in object"
          + " storage by the store itself, so their bytes are not uploaded again); of the"
          + " others, only"
          + " the files still referenced are read, checked and compressed again with --codec"
          + " (--min-live says which shards are copied whole). Every shard copied whole is read"
          + " and checked first (its blocks and the digests of the files kept), so a base"
          + " damaged at rest fails here, naming it."
          + " An image that is already full is copied. The new image appears only when"
          + " complete; a failed or interrupted run leaves nothing behind."
    })
final class ConsolidateCommand implements Callable<Integer> {
  @Mixin ImageArgs image;

  @Option(
      names = "--to",
      paramLabel = "IMAGE",
      required = true,
      description = "The full image to write: a file or s3://BUCKET/KEY (same endpoint as the"
          + " chain), never an image of the chain (the image, its base, its base's base, to the"
          + " first, referenced or not) nor a copy of a base, however spelled (.., a symlinked"
          + " directory, a hard link). {utc} becomes the run's UTC start. An existing image"
          + " there is replaced only once the new one is complete.")
  String to;

  @Option(
      names = "--codec",
      paramLabel = "CODEC",
      completionCandidates = SaveCommand.CodecNames.class,
      description = "The codec of the shards that are rewritten (and of the catalog); copied"
          + " blocks keep their own. Default: the image's codec. See 'beamsave codecs'.")
  String codec;

  @Option(
      names = "--min-live",
      paramLabel = "PERCENT",
      defaultValue = "50",
      description = "Copy a shard whole when at least PERCENT of its raw bytes are still"
          + " referenced, carrying the bytes of files changed or deleted since (dead space no"
          + " reader visits); rewrite the pieces of the others. 100 copies only shards every"
          + " byte of which is referenced, for the smallest image; lower reads less. Default:"
          + " ${DEFAULT-VALUE}.")
  int minLive;

  @Option(
      names = "--recipient",
      paramLabel = "PUBKEY|FILE",
      description = "Encrypt the new image for this X25519 public key (or each a FILE holds),"
          + " besides the --password-file's and --key-file's and each --identity's public key."
          + " Default, for an encrypted chain: the keys that open it; for a plain one, none"
          + " (unless keys are given). Repeat for several.")
  List<String> recipients = new ArrayList<>();

  @Option(
      names = "--drop-recipients",
      description = "Let the new image be for fewer recipients than the newest image of an"
          + " encrypted chain (by default that is refused, naming those it would lose).")
  boolean dropRecipients;

  @Mixin PipelineArgs pipeline;

  @Mixin JsonOutput json;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    if (codec != null) {
      try {
        io.beamsave.transforms.codec.Codecs.parse(codec);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
    }
    PrintWriter progress = pipeline.progress(spec.commandLine().getErr(), json);
    String target = to.replace(SaveSpecs.UTC, SaveSpecs.utcStamp());
    Instant start = Instant.now();
    ConsolidatePipeline.Outcome o;
    try (ImageRef ref = image.open(progress).readCatalogAhead()) {
      if (minLive < 1 || minLive > 100) {
        throw new io.beamsave.transforms.BeamsaveException(
            "--min-live " + minLive + ": give a percentage from 1 to 100");
      }
      o = ConsolidatePipeline.run(ref, target, codec, minLive / 100.0,
          RecipientArgs.recipients(image.keys, recipients), dropRecipients, pipeline.options(),
          progress);
    }
    Instant end = Instant.now();
    ConsolidatePlan plan = o.plan();
    Ledger.Record record = new Ledger.Record("consolidate", o.newest().library(),
        plan.codecSpec(), "none", "consolidate", start, end, o.seconds(), o.newest().rawBytes(),
        o.imageBytes(), o.image());
    Ledger.append(Ledger.besideImage(o.image()), image.s3.settings(),
        o.encrypted() ? record.encrypted() : record);
    if (json.on()) {
      java.util.Map<String, Object> m = JsonOutput.object("summary");
      m.put("image", image.image());
      m.put("to", o.image());
      m.put("chainImages", o.chainLength());
      m.put("imageBytes", o.imageBytes());
      m.put("rawBytes", o.newest().rawBytes());
      m.put("shards", plan.shardCount());
      m.put("shardsCopiedInStore", plan.shards(Kind.COPY_IN_STORE));
      m.put("bytesCopiedInStore", plan.storedBytes(Kind.COPY_IN_STORE));
      m.put("shardsCopied", plan.shards(Kind.COPY));
      m.put("bytesCopied", plan.storedBytes(Kind.COPY));
      m.put("shardsRewritten", plan.shards(Kind.REWRITE));
      m.put("bytesRewritten", plan.rawBytes(Kind.REWRITE));
      m.put("bytesRead", o.bytesFetched());
      m.put("deadBytesCopied", plan.deadBytes());
      m.put("bytesReadToRewrite", o.bytesFetchedToRewrite());
      m.put("origin", plan.origin().toString());
      m.put("id", plan.id().toString());
      m.put("seconds", o.seconds());
      json.emit(m);
      return 0;
    }
    List<String> parts = new ArrayList<>();
    // Where the store copies shards itself, what it did not is said to have come through here.
    boolean inStore = Location.of(o.image()).copiesWithin();
    if (inStore || plan.shards(Kind.COPY_IN_STORE) > 0) {
      parts.add(shards(plan.shards(Kind.COPY_IN_STORE)) + " copied in the store ("
          + Sizes.human(plan.storedBytes(Kind.COPY_IN_STORE)) + ")");
    }
    if (!inStore || plan.shards(Kind.COPY) > 0) {
      parts.add((parts.isEmpty() ? shards(plan.shards(Kind.COPY)) : plan.shards(Kind.COPY) + "")
          + " copied" + (inStore ? " through this job" : "") + " ("
          + Sizes.human(plan.storedBytes(Kind.COPY)) + ")");
    }
    parts.add(plan.shards(Kind.REWRITE) + " rewritten");
    spec.commandLine().getOut().println(String.format(Locale.ROOT,
        "consolidated %s (chain of %d image%s) into %s: %s, %s (%s read); %.1fs",
        Printable.text(image.image()), o.chainLength(), o.chainLength() == 1 ? "" : "s",
        Printable.text(o.image()), Sizes.human(o.imageBytes()), String.join(", ", parts),
        Sizes.human(o.bytesFetchedToRewrite()), o.seconds()));
    return 0;
  }

  private static String shards(int n) {
    return n + " shard" + (n == 1 ? "" : "s");
  }
}

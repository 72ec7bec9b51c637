package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.locks.RunLease;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.stored.Ledger;
import io.beamsave.pipelines.transfer.TransferProgress;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.image.catalog.CatalogReader;
import io.beamsave.transforms.read.ImageLineage;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.transfer.ImageUpload;
import io.beamsave.transforms.transfer.TransferCodec;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave upload}: an image to object storage. */
@Command(
    name = "upload",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave upload --from /backup/data.bsave --to s3://backups/data.bsave",
      "  beamsave upload --from /backup/data-raw.bsave --to s3://backups/data.bsave --transfer-codec zstd:3 --parallel 8",
      "  beamsave upload --from /backup/data.bsave --to s3://backups/data.bsave --resume"
    },
    description = {
      "Upload an image to S3-compatible object storage as a multipart upload with parallel"
          + " parts, each checked by the store on arrival (its signed SHA-256 over plain HTTP,"
          + " its Content-MD5 otherwise); the object appears at its key only once complete.",
      "With --transfer-codec the image is compressed on the way (each part a standalone gzip"
          + " member or zstd frame, so the object is one standard stream); download and"
          + " restore undo it. On failure the upload is aborted; if the process is killed, run"
          + " again with --resume."
    })
final class UploadCommand implements Callable<Integer> {
  Path image;

  @Option(names = "--from", paramLabel = "IMAGE", description = "The image file (required).")
  void from(Path p) {
    Commands.once(spec, image, p, "--from");
    image = p;
  }

  @Option(names = "--image", paramLabel = "IMAGE", hidden = true)
  void deprecatedImage(Path p) {
    Commands.deprecated(spec, "--image", "--from");
    Commands.once(spec, image, p, "--from");
    image = p;
  }

  @Option(names = "--to", paramLabel = "s3://BUCKET/KEY", required = true,
      description = "Where to store it; never over an image of its chain (its base, uploaded"
          + " before it, say).")
  String to;

  @Option(
      names = "--transfer-codec",
      paramLabel = "CODEC",
      defaultValue = "none",
      description = "none, zlib[:1-9] or zstd[:1-22]: compression during the transfer."
          + " Default: ${DEFAULT-VALUE}.")
  String transferCodec;

  @Option(
      names = "--part-size",
      paramLabel = "SIZE",
      defaultValue = "16MiB",
      description = "Raw bytes per part (5MiB-5GiB); raised automatically past 10,000 parts."
          + " Default: ${DEFAULT-VALUE}.")
  String partSize;

  @Option(
      names = "--parallel",
      paramLabel = "N",
      defaultValue = "4",
      description = "Parts compressed and sent at once (1-64). Default: ${DEFAULT-VALUE}.")
  int parallelParts;

  @Option(names = "--parallel-parts", paramLabel = "N", hidden = true)
  void deprecatedParallel(int n) {
    Commands.deprecated(spec, "--parallel-parts", "--parallel");
    parallelParts = n;
  }

  @Option(
      names = "--link-mbps",
      paramLabel = "N",
      defaultValue = "0",
      description = "Throttle the upload to N megabits per second, to emulate a WAN link"
          + " (0: no limit). Default: ${DEFAULT-VALUE}.")
  double linkMbps;

  @Option(
      names = "--resume",
      description = "Continue an interrupted upload of this image to --to, sending only the parts"
          + " the store does not already hold intact.")
  boolean resume;

  @Mixin S3Args s3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    Commands.require(spec, image, "--from");
    Location target = Location.object(to, "--to");
    ImageUpload.Options options;
    try {
      options =
          new ImageUpload.Options(
              TransferCodec.parse(transferCodec), Sizes.parse(partSize), parallelParts, linkMbps,
              resume);
    } catch (IllegalArgumentException e) {
      throw new BeamsaveException(e.getMessage());
    }
    if (!Files.isRegularFile(image)) {
      throw new BeamsaveException(image + ": no such image");
    }
    // An encrypted image's catalog is for its keys: the upload needs none, and its record in the
    // ledger beside it tells nothing the image hides.
    boolean encrypted = Commands.endsOf(image).encrypted();
    if (encrypted && !options.codec().isNone()) {
      throw new BeamsaveException(image + " is encrypted, and encrypted bytes do not shrink:"
          + " --transfer-codec " + options.codec() + " would only cost time; upload it with"
          + " --transfer-codec none");
    }
    CatalogReader.Label label = encrypted ? null : Commands.labelOf(image);
    S3Settings settings = s3.settings();
    if (target.exists(settings)) {
      // The image there may be a copy of one the uploaded image's chain needs (its base,
      // uploaded before it): replacing that would break the chain in the store.
      ImageLineage.walk(image.toString(), image.toAbsolutePath().toString(), settings,
          Keys.NONE, List.of()).refuse("--to", to, settings, "upload it under another name");
    }
    Instant start = Instant.now();
    ImageUpload.Result r;
    // Its lease tells 'cleanup' elsewhere that the upload to the target is in progress.
    try (RunLease lease = RunLease.take(io.beamsave.transforms.run.RunId.mint().value(), "upload", List.of(),
            List.of(target.toString()), List.of(), settings);
        TransferProgress progress =
            new TransferProgress("uploaded", Files.size(image), Commands.progress(spec))) {
      r = ImageUpload.upload(image, target, settings, options, progress);
    }
    Instant end = Instant.now();
    PrintWriter out = spec.commandLine().getOut();
    out.println(
        String.format(
            Locale.ROOT,
            "uploaded %s to %s: %s sent as %s (%s, ratio %.2f) in %.2fs, %.1f MB/s; %d parts%s",
            image, target, Sizes.human(r.rawBytes()), Sizes.human(r.storedBytes()), r.codec(),
            (double) r.rawBytes() / Math.max(1, r.storedBytes()), r.seconds(),
            r.rawBytes() / 1e6 / Math.max(r.seconds(), 1e-3), r.parts(),
            r.partsReused() > 0 ? " (" + r.partsReused() + " already stored, kept)" : ""));
    if (resume && !r.resumed()) {
      out.println("note: there was no interrupted upload to " + target + " to resume; sent it whole");
    }
    Ledger.Record record = encrypted
        ? new Ledger.Record("upload", "", "", r.codec().spec(), "", start, end, r.seconds(), 0,
            r.storedBytes(), target.toString()).encrypted()
        : new Ledger.Record("upload", label.library(), label.codec(), r.codec().spec(),
            Ledger.strategy("upload", label.codec(), r.codec().spec()), start, end,
            r.seconds(), r.rawBytes(), r.storedBytes(), target.toString());
    Ledger.append(Ledger.besideImage(target.toString()), settings, record);
    return 0;
  }
}

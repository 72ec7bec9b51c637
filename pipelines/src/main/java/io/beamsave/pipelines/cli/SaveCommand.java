package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.transfer.Ledger;
import io.beamsave.transforms.io.ListLibrary;
import java.time.Instant;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.save.SavePipeline;
import io.beamsave.pipelines.save.SaveReport;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.io.ImageSummary;
import io.beamsave.transforms.io.SaveSpec;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code beamsave save}: libraries into images. */
@Command(
    name = "save",
    mixinStandardHelpOptions = true,
    description = {
      "Save one or more libraries (directory trees) into save images.",
      "Files are packed into shards of --shard-size raw bytes, compressed in parallel in blocks"
          + " of --block-size with --codec, and assembled into one image per library. Symlinks"
          + " are stored as links, never followed; FIFOs, sockets and devices are skipped."
    })
final class SaveCommand implements Callable<Integer> {
  @Option(
      names = "--library",
      paramLabel = "DIR",
      required = true,
      description = "A library (directory) to save; repeat for several.")
  List<Path> libraries;

  @Option(
      names = "--image",
      paramLabel = "PATH",
      required = true,
      description =
          "The image file to write; with several libraries, a directory that receives"
              + " <library-dir-name>.bsave per library. An existing image is replaced only once"
              + " the new one is complete. s3://BUCKET/KEY (or s3://BUCKET/PREFIX with several"
              + " libraries) assembles the image in staging and uploads it.")
  String image;

  @Option(
      names = "--codec",
      paramLabel = "CODEC",
      defaultValue = "zstd:3",
      description =
          "none, lz4, zlib[:1-9], zstd[:1-22], xz[:0-9], or an IBM i DTACPR name (*NO, *LOW,"
              + " *MEDIUM, *HIGH, *ZLIB); see 'beamsave codecs'. Default: ${DEFAULT-VALUE}.")
  String codec;

  @Option(
      names = "--shard-size",
      paramLabel = "SIZE",
      defaultValue = "64MiB",
      description =
          "Raw bytes per shard (up to 1GiB), the unit of parallel work; each worker holds one"
              + " shard in memory. Default: ${DEFAULT-VALUE}.")
  String shardSize;

  @Option(
      names = "--block-size",
      paramLabel = "SIZE",
      defaultValue = "1MiB",
      description =
          "Raw bytes per independently compressed block (4KiB-64MiB), the unit of random"
              + " access. Default: ${DEFAULT-VALUE}.")
  String blockSize;

  @Option(
      names = "--staging",
      paramLabel = "DIR",
      description =
          "Where the run keeps its working files (each library's listing; shards go straight"
              + " into <image>.partial). Default: a hidden directory beside the image (the"
              + " system's temporary directory for s3:// images), removed afterwards.")
  Path staging;

  @Option(
      names = "--allow-changing",
      description =
          "Keep files that change while being saved (marked as changed in the image) instead"
              + " of failing.")
  boolean allowChanging;

  @Option(
      names = "--report-json",
      paramLabel = "FILE",
      description = "Also write the report as one JSON object to FILE.")
  Path reportJson;

  @Mixin PipelineArgs pipeline;

  @Mixin S3Args s3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    PrintWriter out = spec.commandLine().getOut();
    SaveSpec save;
    try {
      save =
          SavePipeline.spec(libraries, image, staging, s3.settings())
              .withCodec(codec)
              .withShardSize(Sizes.parse(shardSize))
              .withBlockSize(Sizes.parse(blockSize))
              .withAllowChanging(allowChanging);
    } catch (IllegalArgumentException e) {
      throw new BeamsaveException(e.getMessage());
    }
    if (pipeline.runsInThisJvm()) {
      // The walk overlaps the start-up of Beam and its runner (see ListLibrary.walkAhead).
      ListLibrary.walkAhead(save);
    }
    Instant start = Instant.now();
    SavePipeline.Outcome outcome =
        SavePipeline.run(save, pipeline.options(), pipeline.progress(spec.commandLine().getErr()));
    Instant end = Instant.now();
    SaveReport report = new SaveReport(outcome);
    out.println(SaveReport.header());
    report.rows().forEach(out::println);
    out.println(report.stagesLine());
    for (ImageSummary s : outcome.images()) {
      out.println("image: " + s.image());
    }
    long changed = report.json().get("filesChanged") instanceof Long l ? l : 0;
    if (changed > 0) {
      out.println("warning: " + changed + " file(s) changed while being saved; marked in the image");
    }
    if (reportJson != null) {
      report.writeJson(reportJson);
    }
    for (ImageSummary s : outcome.images()) {
      Ledger.append(
          Ledger.besideImage(s.image()),
          save.store(),
          new Ledger.Record(
              "save", s.library(), save.codec(), "none",
              Ledger.strategy("save", save.codec(), "none"), start, end,
              outcome.job().seconds(), s.rawBytes(), s.imageBytes(), s.image()));
    }
    return 0;
  }
}

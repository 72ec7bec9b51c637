package io.beamsave.pipelines.cli;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.store.Location;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave compare}: which strategy gets a library into object storage first. */
@Command(
    name = "compare",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave compare --library /srv/data --to s3://bench/compare --link-mbps 100,1000 --out /tmp/compare",
      "%n" + PipelineArgs.BEAM_OPTIONS_HELP
    },
    description = {
      "Measure, per codec, run and link speed, how long it takes to get a library into object"
          + " storage: raw save + raw transfer (baseline), raw save + compress in transfer (IBM"
          + " ICC's way; zlib and zstd), compress at save + raw transfer, and compress while"
          + " transferring (the image is uploaded while later shards still compress). auto is"
          + " tuned to each link speed (docs/auto-codec.md). Prints every run,"
          + " the averages (sizes in MiB, with the ratio and the save's CPU seconds) and the"
          + " winner at each link speed, under a header naming the machine, the date (UTC) and"
          + " this version; with --out, also results.csv, results.json, chart.png (one panel"
          + " per link speed) and index.html.",
      "Every save and upload is real and goes into the ledger at --to. When compare ends, also"
          + " when it fails, it removes every object it created under --to (images and ledger"
          + " records) unless --keep-objects."
    })
final class CompareCommand implements Callable<Integer> {
  @Mixin ExperimentArgs experiment;

  @Option(names = "--to", paramLabel = "s3://BUCKET/PREFIX", required = true,
      description = "Where the uploads go (one object per strategy, codec, run and link speed).")
  String to;

  @Option(
      names = "--codecs",
      paramLabel = "LIST",
      split = ",",
      defaultValue = "lz4,zlib:6,zstd:3,auto",
      description = "Codecs to compare with the baseline. Default: ${DEFAULT-VALUE}.")
  List<String> codecs;

  @Option(
      names = "--link-mbps",
      paramLabel = "N[,N...]",
      split = ",",
      defaultValue = "0",
      description = "Link speeds to emulate, in Mbit/s (0: unthrottled). Default: ${DEFAULT-VALUE}.")
  List<Integer> links;

  @Option(
      names = "--keep-objects",
      description = "Leave the uploaded images and their ledger records under --to (to restore"
          + " or inspect them); by default they are removed when compare ends.")
  boolean keepObjects;

  @Mixin PipelineArgs pipeline;

  @Mixin S3Args s3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    Location prefix = Location.prefix(to, "--to");
    if (links.stream().anyMatch(l -> l < 0)) {
      throw new BeamsaveException("--link-mbps must not be negative");
    }
    experiment.run(
        "beamsave compare: " + experiment.library.toAbsolutePath() + " to " + prefix, codecs,
        List.of(), pipeline, spec.commandLine(),
        e -> e.compare(prefix, links, s3.settings(), keepObjects));
    return 0;
  }
}

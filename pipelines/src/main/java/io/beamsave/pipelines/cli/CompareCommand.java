package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.compare.Report;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.store.ObjectUri;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

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
          + " the averages and the winner at each link speed; with --out, also results.csv,"
          + " results.json, chart.png and index.html.",
      "Every save and upload is real and goes into the ledger at --to; objects stay under --to."
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

  @Mixin PipelineArgs pipeline;

  @Mixin S3Args s3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    ObjectUri prefix = ObjectUri.parse(to, true);
    if (links.stream().anyMatch(l -> l < 0)) {
      throw new BeamsaveException("--link-mbps must not be negative");
    }
    experiment.run(codecs, pipeline, spec.commandLine().getOut(), spec.commandLine().getErr(),
        e -> new Report(
            "beamsave compare: " + experiment.library.toAbsolutePath() + " to " + prefix,
            e.compare(prefix, links, s3.settings())));
    return 0;
  }
}

package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.compare.Experiments;
import io.beamsave.pipelines.compare.Report;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.io.AssembleImage;
import io.beamsave.transforms.store.ObjectUri;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
    description = {
      "Measure, per codec, run and link speed, how long it takes to get a library into object"
          + " storage: raw save + raw transfer (baseline), raw save + compress in transfer (IBM"
          + " ICC's way; zlib and zstd), and compress at save + raw transfer. Prints every run,"
          + " the averages and the winner at each link speed; with --out, also results.csv,"
          + " results.json, chart.png and index.html.",
      "Every save and upload is real and goes into the ledger at --to; objects stay under --to."
    })
final class CompareCommand implements Callable<Integer> {
  @Option(names = "--library", paramLabel = "DIR", required = true, description = "The library.")
  Path library;

  @Option(names = "--to", paramLabel = "s3://BUCKET/PREFIX", required = true,
      description = "Where the uploads go (one object per strategy, codec, run and link speed).")
  String to;

  @Option(
      names = "--codecs",
      paramLabel = "LIST",
      split = ",",
      defaultValue = "lz4,zlib:6,zstd:3,xz:6",
      description = "Codecs to compare with the baseline. Default: ${DEFAULT-VALUE}.")
  List<String> codecs;

  @Option(names = "--runs", paramLabel = "N", defaultValue = "3",
      description = "Runs of each. Default: ${DEFAULT-VALUE}.")
  int runs;

  @Option(
      names = "--link-mbps",
      paramLabel = "N[,N...]",
      split = ",",
      defaultValue = "0",
      description = "Link speeds to emulate, in Mbit/s (0: unthrottled). Default: ${DEFAULT-VALUE}.")
  List<Integer> links;

  @Option(names = "--out", paramLabel = "DIR", description = "Where to write the report files.")
  Path out;

  @Mixin PipelineArgs pipeline;

  @Mixin S3Args s3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    ObjectUri prefix = ObjectUri.parse(to, true);
    if (links.stream().anyMatch(l -> l < 0)) {
      throw new BeamsaveException("--link-mbps must not be negative");
    }
    Path work = Files.createTempDirectory("beamsave-compare-");
    try {
      Experiments e = new Experiments(library, codecs, runs, work, pipeline.options(),
          pipeline.progress(spec.commandLine().getErr()));
      Report report = new Report("beamsave compare: " + library.toAbsolutePath() + " to " + prefix,
          e.compare(prefix, links, s3.settings()));
      report.print(spec.commandLine().getOut());
      if (out != null) {
        report.write(out);
        spec.commandLine().getOut().println("report: " + out.resolve("index.html"));
      }
    } finally {
      AssembleImage.deleteTree(work);
    }
    return 0;
  }
}

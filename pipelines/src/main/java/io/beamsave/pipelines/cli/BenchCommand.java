package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.compare.Experiments;
import io.beamsave.pipelines.compare.Report;
import io.beamsave.transforms.io.AssembleImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code beamsave bench}: the local codec table, in the spirit of IBM's DTACPR comparison. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
      "Save a library with each codec, --runs times (interleaved), and print each run's"
          + " duration, the average, image size, ratio and save rate, like IBM's SAVLIB DTACPR"
          + " table. With --out, also results.csv, results.json, chart.png and index.html.",
      "Images are written to a temporary directory and removed."
    })
final class BenchCommand implements Callable<Integer> {
  @Option(names = "--library", paramLabel = "DIR", required = true, description = "The library.")
  Path library;

  @Option(
      names = "--codecs",
      paramLabel = "LIST",
      split = ",",
      defaultValue = "none,lz4,zlib:6,zstd:3,xz:6",
      description = "Codecs to measure. Default: ${DEFAULT-VALUE}.")
  List<String> codecs;

  @Option(names = "--runs", paramLabel = "N", defaultValue = "3",
      description = "Runs per codec. Default: ${DEFAULT-VALUE}.")
  int runs;

  @Option(names = "--out", paramLabel = "DIR", description = "Where to write the report files.")
  Path out;

  @Mixin PipelineArgs pipeline;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    Path work = Files.createTempDirectory("beamsave-bench-");
    try {
      Experiments e = new Experiments(library, codecs, runs, work, pipeline.options(),
          pipeline.progress(spec.commandLine().getErr()));
      Report report = new Report("beamsave bench: " + library.toAbsolutePath(), e.bench());
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

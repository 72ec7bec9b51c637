package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.compare.Report;
import java.io.IOException;
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
    footer = {
      "%nExamples:",
      "  beamsave bench --library /srv/data --runs 3 --out /tmp/bench",
      "%n" + PipelineArgs.BEAM_OPTIONS_HELP
    },
    description = {
      "Save a library with each codec, --runs times (interleaved), and print each run's"
          + " duration, the average, image size, ratio and save rate, like IBM's SAVLIB DTACPR"
          + " table. With --out, also results.csv, results.json, chart.png and index.html.",
      "Images are written to a temporary directory and removed."
    })
final class BenchCommand implements Callable<Integer> {
  @Mixin ExperimentArgs experiment;

  @Option(
      names = "--codecs",
      paramLabel = "LIST",
      split = ",",
      defaultValue = "none,lz4,zlib:6,zstd:3,xz:6",
      description = "Codecs to measure. Default: ${DEFAULT-VALUE}.")
  List<String> codecs;

  @Mixin PipelineArgs pipeline;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    experiment.run(codecs, pipeline, spec.commandLine().getOut(), spec.commandLine().getErr(),
        e -> new Report("beamsave bench: " + experiment.library.toAbsolutePath(), e.bench()));
    return 0;
  }
}

package io.beamsave.pipelines.cli;

import io.beamsave.transforms.BeamsaveException;
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
      "Save a library with each codec, --runs times (interleaved), restore each image into a"
          + " temporary directory and check it against the library. Prints, per run and on"
          + " average, the save's and the restore's elapsed and CPU seconds, the image size in"
          + " MiB and the ratio, the MiB stored raw because they did not compress, the read and"
          + " write calls of the save and of the restore (Linux), and the save rate, like IBM's"
          + " SAVLIB DTACPR table. Then the verdict: the fastest save, the fastest restore, the"
          + " smallest image, and the best codec at each --link-mbps (save time plus the"
          + " image's size over the link, computed). The header names the machine, the date"
          + " (UTC) and this version. With --out, also results.csv, results.json, chart.png and"
          + " index.html.",
      "Images and restores are written to a temporary directory and removed."
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

  @Option(
      names = "--link-mbps",
      paramLabel = "N[,N...]",
      split = ",",
      defaultValue = "100,1000,10000",
      description = "Link speeds in Mbit/s to name the best codec at (0: no transfer); nothing"
          + " is sent, compare measures real uploads. Default: ${DEFAULT-VALUE}.")
  List<Integer> links;

  @Mixin PipelineArgs pipeline;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    if (links.stream().anyMatch(l -> l < 0)) {
      throw new BeamsaveException("--link-mbps must not be negative");
    }
    experiment.run("beamsave bench: " + experiment.library.toAbsolutePath(), codecs,
        links.stream().distinct().toList(), pipeline, spec.commandLine(), e -> e.bench());
    return 0;
  }
}

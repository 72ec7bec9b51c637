package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.compare.Experiments;
import io.beamsave.pipelines.compare.Report;
import io.beamsave.transforms.io.AssembleImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/** What {@code bench} and {@code compare} share: the library, the runs, the report's place. */
final class ExperimentArgs {
  @Option(names = "--library", paramLabel = "DIR", required = true, description = "The library.")
  Path library;

  @Option(names = "--runs", paramLabel = "N", defaultValue = "3",
      description = "Runs of each. Default: ${DEFAULT-VALUE}.")
  int runs;

  @Option(names = "--out", paramLabel = "DIR",
      description = "Also write results.csv, results.json, chart.png and index.html here.")
  Path out;

  /** Something measured with an {@link Experiments} and reported under {@code title}. */
  interface Measure {
    Report run(Experiments e) throws IOException;
  }

  /**
   * Runs {@code measure} with images in a temporary directory (removed afterwards), prints the
   * report and writes its files when asked.
   */
  void run(List<String> codecs, PipelineArgs pipeline, PrintWriter out, PrintWriter err,
      Measure measure) throws IOException {
    Path work = Files.createTempDirectory("beamsave-experiment-");
    try {
      Report report =
          measure.run(new Experiments(library, codecs, runs, work, pipeline.options(),
              pipeline.progress(err)));
      report.print(out);
      if (this.out != null) {
        report.write(this.out);
        out.println("report: " + this.out.resolve("index.html"));
      }
    } finally {
      AssembleImage.deleteTree(work);
    }
  }
}

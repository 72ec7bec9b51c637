package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.compare.Experiments;
import io.beamsave.pipelines.compare.Measurement;
import io.beamsave.pipelines.compare.Report;
import io.beamsave.pipelines.compare.ReportHeader;
import io.beamsave.transforms.fs.Removal;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptions;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** What {@code bench} and {@code compare} share: the library, the runs, the report's place. */
final class ExperimentArgs {
  @Option(names = "--library", paramLabel = "DIR", required = true,
      description = "The library (directory tree) to save in every run.")
  Path library;

  @Option(names = "--runs", paramLabel = "N", defaultValue = "3",
      description = "Measured runs of each, after one unmeasured warm-up. Default:"
          + " ${DEFAULT-VALUE}.")
  int runs;

  @Option(names = "--out", paramLabel = "DIR",
      description = "Also write results.csv, results.json, chart.png and index.html here.")
  Path out;

  /** Something measured with an {@link Experiments}. */
  interface Measure {
    List<Measurement> run(Experiments e) throws IOException;
  }

  /**
   * Runs {@code measure} with images in a temporary directory (removed afterwards), prints the
   * report, headed by this machine, the date and this version, and writes its files when asked.
   * {@code targetLinks}: see {@link Report}.
   */
  void run(String title, List<String> codecs, List<Integer> targetLinks, PipelineArgs pipeline,
      CommandLine commandLine, Measure measure) throws IOException {
    PrintWriter out = commandLine.getOut();
    PipelineOptions options = pipeline.options();
    ReportHeader header = ReportHeader.here(BuildInfo.version(),
        library.toAbsolutePath().toString(), options.getRunner().getSimpleName());
    Path work = Files.createTempDirectory("beamsave-experiment-");
    try {
      List<Measurement> rows = measure.run(new Experiments(library, codecs, runs, work, options,
          pipeline.progress(commandLine.getErr())));
      Report report = new Report(title, header, rows, targetLinks);
      report.print(out);
      if (this.out != null) {
        report.write(this.out);
        out.println("report: " + this.out.resolve("index.html"));
      }
    } finally {
      Removal.tree(work);
    }
  }
}

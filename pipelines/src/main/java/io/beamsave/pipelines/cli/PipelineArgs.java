package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.runner.BeamOptions;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptions;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Options every pipeline command shares: Beam options after {@code --}, and {@code --quiet}. */
final class PipelineArgs {
  @Option(names = "--quiet", description = "Do not print progress lines.")
  boolean quiet;

  @Parameters(
      paramLabel = "BEAM_OPTIONS",
      arity = "0..*",
      description =
          "Beam pipeline options, after '--': e.g. --runner=DirectRunner --targetParallelism=2."
              + " Defaults: one worker per core, DirectRunner checks off.")
  List<String> beamArgs = new ArrayList<>();

  PipelineOptions options() {
    return BeamOptions.parse(beamArgs);
  }

  /** Where progress goes: stderr, or nowhere with {@code --quiet}. */
  PrintWriter progress(PrintWriter err) {
    return quiet ? null : err;
  }
}

package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.runner.BeamOptions;
import io.beamsave.pipelines.runner.ProgressOutput;
import java.io.PrintWriter;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptions;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * What every pipeline command shares: the Beam options after {@code --} (split off by {@link
 * BeamsaveCommand#execute}), and where progress goes.
 */
final class PipelineArgs {
  /** Told in every pipeline command's help, since picocli never sees them. */
  static final String BEAM_OPTIONS_HELP =
      "Beam pipeline options follow '--', e.g. '-- --runner=FlinkRunner"
          + " --flinkMaster=host:8081' or '-- --targetParallelism=2'. Default: the DirectRunner"
          + " with one worker per core and its checks off.";

  @Option(
      names = "--progress-interval",
      paramLabel = "SECONDS",
      description =
          "How often progress is shown: default 1 on a terminal (a bar, redrawn), 10 elsewhere"
              + " (a line each time), and with --json a JSON line each time.")
  Double progressInterval;

  @Option(
      names = "--flink-version",
      paramLabel = "VERSION",
      description =
          "The Flink version of the cluster given with --flinkMaster, such as 1.20 or 1.20.5:"
              + " picks the Flink runner of that line (bin/beamsave) instead of asking the"
              + " cluster's REST API. Default: $BEAMSAVE_FLINK_VERSION, else asked of the cluster.")
  String flinkVersion;

  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  List<String> beamArgs() {
    return BeamsaveCommand.of(command).beamArgs;
  }

  PipelineOptions options() {
    return BeamOptions.forRun(beamArgs(), flinkVersion);
  }

  /** The options of a run named {@code jobName} unless the operator gave {@code --jobName}. */
  PipelineOptions options(String jobName) {
    return BeamOptions.forRun(beamArgs(), flinkVersion, jobName);
  }

  /** Where progress goes: to {@code err}, as JSON lines to {@code out} with --json, or nowhere. */
  PrintWriter progress(PrintWriter err) {
    return progress(err, null);
  }

  PrintWriter progress(PrintWriter err, JsonOutput json) {
    if (BeamsaveCommand.of(command).quiet) {
      return null;
    }
    if (json != null && json.on()) {
      return ProgressOutput.json(json.out(), interval(false));
    }
    boolean tty = System.console() != null;
    return ProgressOutput.text(err, tty, interval(tty));
  }

  private double interval(boolean tty) {
    return progressInterval != null ? Math.max(0.05, progressInterval) : tty ? 1 : 10;
  }
}

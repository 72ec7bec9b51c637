package io.beamsave.pipelines.runner;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;

/**
 * Parses the Beam options given after {@code --} and adds what a production run wants unless
 * the operator set it: the DirectRunner's immutability and encodability checks off (they are
 * for tests and cost about a third of the run time), one worker thread per core, a non-blocking
 * run so progress can be shown, and on Flink no defensive copies between operators.
 */
public final class BeamOptions {
  private BeamOptions() {}

  public static PipelineOptions parse(List<String> beamArgs) {
    List<String> args = new ArrayList<>(beamArgs);
    defaultTo(args, "enforceImmutability", "false");
    defaultTo(args, "enforceEncodability", "false");
    defaultTo(args, "targetParallelism", String.valueOf(Runtime.getRuntime().availableProcessors()));
    defaultTo(args, "blockOnRun", "false");
    if (args.stream().anyMatch(a -> a.matches("--runner=(org\\.apache\\.beam\\.runners\\.flink\\.)?FlinkRunner"))) {
      // Elements are never changed after output, so Flink's defensive copies are waste.
      defaultTo(args, "fasterCopy", "true");
    }
    PipelineOptionsFactory.register(DirectOptions.class);
    try {
      return PipelineOptionsFactory.fromArgs(args.toArray(String[]::new))
          .withValidation()
          .create();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("bad Beam option: " + e.getMessage(), e);
    }
  }

  private static void defaultTo(List<String> args, String name, String value) {
    for (String a : args) {
      if (a.equals("--" + name) || a.startsWith("--" + name + "=")) {
        return;
      }
    }
    args.add("--" + name + "=" + value);
  }
}

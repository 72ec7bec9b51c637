package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.restore.ReadRun;
import picocli.CommandLine.Option;

/** What the commands that read images' shards ({@code restore}, {@code verify}) share. */
final class ReadArgs {
  @Option(
      names = "--pipeline",
      paramLabel = "WHEN",
      converter = PipelineUseConverter.class,
      description =
          "When the shards are read by a Beam pipeline: auto (the default) reads work of at most"
              + " 256 MiB of file data in this process, a thread per core, without"
              + " starting a pipeline (a few files, a small image: done before a pipeline would"
              + " have started), and more in a pipeline; with a Flink runner given after '--',"
              + " always in a pipeline. always starts one whatever the size; never reads"
              + " everything in this process.")
  ReadRun.PipelineUse pipelineUse = ReadRun.PipelineUse.AUTO;

  /** What {@code --pipeline} asks for, given the Beam options after {@code --}. */
  ReadRun.PipelineUse use(PipelineArgs pipeline) {
    boolean flink = pipeline.beamArgs().stream()
        .anyMatch(io.beamsave.pipelines.runner.BeamOptions::namesFlink);
    return pipelineUse == ReadRun.PipelineUse.AUTO && flink ? ReadRun.PipelineUse.ALWAYS
        : pipelineUse;
  }

  static final class PipelineUseConverter
      implements picocli.CommandLine.ITypeConverter<ReadRun.PipelineUse> {
    @Override
    public ReadRun.PipelineUse convert(String value) {
      try {
        return ReadRun.PipelineUse.parse(value);
      } catch (IllegalArgumentException e) {
        throw new picocli.CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }
}

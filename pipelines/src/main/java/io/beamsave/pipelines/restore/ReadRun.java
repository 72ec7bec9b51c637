package io.beamsave.pipelines.restore;

import io.beamsave.pipelines.runner.Job;
import io.beamsave.pipelines.runner.JobResult;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.read.ReadShards;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.run.StageMetrics;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Runs the reads of a restore or a verify: in a pipeline, or, when the work is small, here, one
 * shard after another, without starting one. A pipeline's start costs a second or two, which a
 * few files or a small image never win back; {@link #SMALL_WORK} is the line.
 */
public final class ReadRun {
  private ReadRun() {}

  /**
   * Work of at most this many raw bytes is read in the command's own JVM unless a pipeline is
   * asked for: on two cores one thread reads 256 MiB in well under the time a pipeline takes to
   * start and share it out.
   */
  public static final long SMALL_WORK = 256L << 20;

  /** When the reads run in a pipeline ({@code --pipeline}). */
  public enum PipelineUse {
    /** A pipeline for more than {@link #SMALL_WORK} bytes, else here. */
    AUTO,
    /** Always a pipeline, the runner's options honoured whatever the size. */
    ALWAYS,
    /** Never: here, one shard after another, whatever the size. */
    NEVER;

    boolean here(long bytes) {
      return this == NEVER || this == AUTO && bytes <= SMALL_WORK;
    }

    public static PipelineUse parse(String s) {
      try {
        return valueOf(s.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("'" + s + "' is not one of auto, always, never");
      }
    }
  }

  /** What the reads did: raw bytes checked, files whose mtime the target did not keep. */
  public record Done(long bytesChecked, long mtimesClamped, boolean inPipeline) {}

  /** Reads {@code tasks} with {@code read}, {@code bytes} of them in all. */
  public static Done read(List<ReadTask> tasks, ReadShards read, long bytes, PipelineUse use,
      Supplier<PipelineOptions> options, Job.Progress progress, PrintWriter err) {
    if (tasks.isEmpty()) {
      return new Done(0, 0, false);
    }
    if (use.here(bytes)) {
      try {
        long[] done = read.readHere(tasks, new LongAdder());
        return new Done(done[0], done[1], false);
      } catch (IOException e) {
        throw new BeamsaveException(e.getMessage(), e);
      }
    }
    Pipeline p = Pipeline.create(options.get());
    RestorePipeline.build(p, tasks, read);
    JobResult r = Job.run(p, progress, err);
    return new Done(r.counter(StageMetrics.BYTES_CHECKED), r.counter(StageMetrics.MTIMES_CLAMPED),
        true);
  }
}

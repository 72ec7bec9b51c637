package io.beamsave.pipelines.restore;

import io.beamsave.pipelines.runner.Job;
import io.beamsave.pipelines.runner.JobResult;
import io.beamsave.pipelines.runner.ProgressOutput;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.read.ReadShards;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.run.StageMetrics;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Runs the reads of a restore or a verify: in a pipeline, or, when the work is small, here, on
 * a thread per core, without starting one. A pipeline's start costs a second or two, which a
 * few files or a small image never win back; {@link #SMALL_WORK} is the line.
 */
public final class ReadRun {
  private ReadRun() {}

  /**
   * Work of at most this many raw bytes is read in the command's own JVM unless a pipeline is
   * asked for: a thread per core reads 256 MiB in well under the time a pipeline takes to start
   * and share it out, and holds far less (a restore of a million files: 0.75 GB against 1.8).
   */
  public static final long SMALL_WORK = 256L << 20;

  /** When the reads run in a pipeline ({@code --pipeline}). */
  public enum PipelineUse {
    /** A pipeline for more than {@link #SMALL_WORK} bytes, else here. */
    AUTO,
    /** Always a pipeline, the runner's options honoured whatever the size. */
    ALWAYS,
    /** Never: here, a thread per core, whatever the size. */
    NEVER;

    /** Whether work of {@code bytes} runs in this JVM. */
    public boolean here(long bytes) {
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

  /** Shows the bytes read in this JVM against the total, as a pipeline's progress is shown. */
  private static Thread showProgress(ProgressOutput po, Job.Progress progress, LongAdder live) {
    long start = System.nanoTime();
    Thread t = new Thread(() -> {
      long every = (long) (po.intervalSeconds() * 1000);
      try {
        while (!Thread.currentThread().isInterrupted()) {
          Thread.sleep(every);
          po.update(progress.verb(), live.sum(), progress.knownTotal(), -1,
              (System.nanoTime() - start) / 1e9);
        }
      } catch (InterruptedException done) {
        // The reads are over.
      }
    }, "read-progress");
    t.setDaemon(true);
    t.start();
    return t;
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
      try (Here here = new Here(progress, err)) {
        long[] done = here.read(tasks, read);
        return new Done(done[0], done[1], false);
      }
    }
    Pipeline p = Pipeline.create(options.get());
    RestorePipeline.build(p, tasks, read);
    JobResult r = Job.run(p, progress, err);
    return new Done(r.counter(StageMetrics.BYTES_CHECKED), r.counter(StageMetrics.MTIMES_CLAMPED),
        true);
  }

  /**
   * Reads in this JVM, a thread per core, task list after task list (a restore or verify in
   * batches), with one progress display over all of them.
   */
  public static final class Here implements AutoCloseable {
    /** Tasks per thread a task list is cut into, at least, where its pieces allow. */
    private static final int TASKS_PER_THREAD = 4;

    private final LongAdder live = new LongAdder();
    private final PrintWriter err;
    private final Thread shown;
    private final Job.Progress progress;
    private final long start = System.nanoTime();

    public Here(Job.Progress progress, PrintWriter err) {
      this.err = err;
      this.progress = progress;
      this.shown = err instanceof ProgressOutput po && progress != null
          ? showProgress(po, progress, live) : null;
    }

    /**
     * Reads {@code tasks}, cut so that every thread has work (a batch of small files often lies
     * in one shard); returns the raw bytes checked and the mtimes the target clamped.
     */
    public long[] read(List<ReadTask> tasks, ReadShards read) {
      int threads = Runtime.getRuntime().availableProcessors();
      long bytes = 0;
      for (ReadTask t : tasks) {
        for (ShardReader.FileExtent p : t.pieces()) {
          bytes += p.extent().length();
        }
      }
      long span = Math.max(1, bytes / ((long) TASKS_PER_THREAD * threads));
      List<ReadTask> cut = new ArrayList<>();
      for (ReadTask t : tasks) {
        cut.addAll(t.split(span));
      }
      try {
        return read.readHere(cut, live, threads);
      } catch (IOException e) {
        throw new BeamsaveException(e.getMessage(), e);
      }
    }

    @Override
    public void close() {
      if (shown != null) {
        shown.interrupt();
        try {
          shown.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        ProgressOutput po = (ProgressOutput) err;
        // The last state, drawn once more: the bar ends at what was read, not short of it.
        po.update(progress.verb(), live.sum(), progress.knownTotal(), -1,
            (System.nanoTime() - start) / 1e9);
        po.finish();
      }
    }
  }
}

package io.beamsave.pipelines.runner;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.run.LiveProgress;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricResults;
import org.joda.time.Duration;

/**
 * Runs a pipeline to its end, printing a progress line from its metrics meanwhile, and turns a
 * failure into a {@link BeamsaveException} whose message is the operator-facing cause.
 */
public final class Job {
  private Job() {}

  /**
   * What a progress line measures: a counter of bytes done against a counter of the total (or a
   * total known before the run); on Flink, shards done by {@code shardStep} against the shards
   * {@code planStep} planned, or {@code knownShards} (see {@link FlinkProgress}), and bytes from
   * {@code plannedBytes} once the plan is done where {@code knownTotal} is 0 (it may throw,
   * or be null).
   */
  public record Progress(
      String verb, String doneCounter, String totalCounter, long knownTotal,
      String shardStep, String planStep, long knownShards, Callable<Long> plannedBytes) {}

  public static JobResult run(Pipeline p, Progress progress, PrintWriter err) {
    long start = System.nanoTime();
    long startMillis = System.currentTimeMillis();
    PipelineResult result;
    MetricResults finalMetrics = null;
    // Fixed before the options are sent to the workers: a default job name is made where it is
    // first asked for, and the workers' live progress is found by it.
    p.getOptions().setJobName(p.getOptions().getJobName());
    FlinkProgressPrinter flink = FlinkProgressPrinter.start(p.getOptions(), progress, err);
    Interrupts.Registration cancel = null;
    try {
      result = p.run();
      PipelineResult running = result;
      cancel = Interrupts.onInterrupt(p.getOptions().getJobName(), () -> {
        try {
          running.cancel();
        } catch (java.io.IOException | RuntimeException e) {
          // Stopping the process stops an in-process job anyway.
        }
      });
      boolean tty = System.console() != null;
      long every = err instanceof ProgressOutput po ? (long) (po.intervalSeconds() * 1e9)
          : tty ? 1_000_000_000L : 10_000_000_000L;
      // The runner's classes are loaded only on runs that use it (lib/flink-LINE/).
      boolean detachedFlink = Workers.of(p.getOptions()).flink()
          && DetachedFlinkJob.is(result);
      long lastPrint = System.nanoTime();
      if (flink == null && progress != null && err instanceof ProgressOutput po
          && po.showsStart()) {
        po.update(progress.verb(), 0, progress.knownTotal(), -1, (lastPrint - start) / 1e9);
      }
      while (true) {
        PipelineResult.State state = detachedFlink ? stateAfterPause(result)
            : result.waitUntilFinish(Duration.millis(500));
        if (state != null && state.isTerminal()) {
          if (detachedFlink) {
            finalMetrics = DetachedFlinkJob.finalMetrics(result);
          }
          if (state != PipelineResult.State.DONE) {
            throw new BeamsaveException("pipeline ended " + state);
          }
          if (flink == null && progress != null && err != null && !detachedFlink) {
            // The last state, drawn once more: the bar ends at what was done, not short of it.
            printProgress(p, result, progress, (System.nanoTime() - start) / 1e9, err, tty);
          }
          break;
        }
        long now = System.nanoTime();
        if (flink == null && progress != null && err != null
            && now - lastPrint >= every) {
          printProgress(p, result, progress, (now - start) / 1e9, err, tty);
          lastPrint = now;
        }
      }
    } catch (RuntimeException e) {
      RuntimeException shown = translate(e);
      if (p.getOptions().as(ClusterJarOptions.class).getJarOnCluster()
          && shown.getMessage().startsWith("ClassNotFoundException")) {
        throw new BeamsaveException(shown.getMessage() + " (with --jarOnCluster the cluster needs"
            + " this beamsave build's jar on its classpath: start it with BEAMSAVE_JAR=<the jar>,"
            + " or drop --jarOnCluster)", e);
      }
      throw shown;
    } finally {
      if (cancel != null) {
        cancel.close();
      }
      if (flink != null) {
        flink.stop();
      }
      LiveProgress.forget(p.getOptions().getJobName());
      if (err instanceof ProgressOutput po) {
        po.finish();
      } else if (progress != null && err != null && System.console() != null) {
        err.print("\r\033[K");
        err.flush();
      }
    }
    return new JobResult(result, finalMetrics, (System.nanoTime() - start) / 1e9, startMillis);
  }

  /**
   * A job submitted to a Flink cluster without waiting for it: its state, polled every 100 ms.
   * Flink's own wait for a job's result backs off to 2 s between polls, which cost ~1.9 s at the
   * end of a 5 s save.
   */
  private static PipelineResult.State stateAfterPause(PipelineResult result) {
    try {
      Thread.sleep(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("interrupted while the job ran; it may still be running");
    }
    return result.getState();
  }

  private static void printProgress(Pipeline p,
      PipelineResult r, Progress progress, double seconds, PrintWriter err, boolean tty) {
    // Workers in this JVM count as they go; the runner's metrics only as bundles commit.
    String job = p.getOptions().getJobName();
    long done = Math.max(JobResult.counter(r, progress.doneCounter()),
        LiveProgress.read(job, progress.doneCounter()));
    long total =
        progress.totalCounter() == null
            ? progress.knownTotal()
            : JobResult.counter(r, progress.totalCounter());
    if (err instanceof ProgressOutput po) {
      po.update(progress.verb(), done, total, LiveProgress.read(job, LiveProgress.FILES_DONE),
          seconds);
    } else {
      printLine(err, progressLine(progress.verb(), done, total, seconds), tty);
    }
  }

  /** "saved 1.2 GiB of 2.0 GiB (60%), 250.0 MB/s, ETA 3 s" ({@code total} 0 when unknown). */
  public static String progressLine(String verb, long done, long total, double seconds) {
    double rate = done / 1e6 / Math.max(seconds, 1e-3);
    StringBuilder line = new StringBuilder(verb).append(' ').append(Sizes.human(done));
    if (total > 0) {
      line.append(" of ").append(Sizes.human(total));
      line.append(String.format(" (%.0f%%)", 100.0 * done / total));
    }
    line.append(String.format(", %.1f MB/s", rate));
    if (total > 0 && done > 0 && done < total) {
      line.append(String.format(", ETA %.0f s", (total - done) / 1e6 / Math.max(rate, 1e-6)));
    }
    return line.toString();
  }

  /**
   * "verified ~1.2 GiB of 2.0 GiB (60%, 6 of 10 shards), 250.0 MB/s, ETA 3 s" where the bytes
   * are known, else "saved 6 of 17 shards (35%), ETA 9 s" ({@code etaSeconds} -1 when unknown).
   */
  public static String shardLine(
      String verb, FlinkProgress.Shards s, long bytes, double seconds, double etaSeconds) {
    StringBuilder line = new StringBuilder(verb).append(' ');
    double part = s.total() > 0 ? (double) s.done() / s.total() : 0;
    if (bytes > 0 && s.total() > 0) {
      long done = (long) (bytes * part);
      line.append('~').append(Sizes.human(done)).append(" of ").append(Sizes.human(bytes));
      line.append(String.format(" (%.0f%%, %d of %d shards)", 100 * part, s.done(), s.total()));
      line.append(String.format(", %.1f MB/s", done / 1e6 / Math.max(seconds, 1e-3)));
    } else if (s.total() > 0) {
      line.append(String.format("%d of %d shards (%.0f%%)", s.done(), s.total(), 100 * part));
    } else {
      line.append(s.done()).append(" shards");
    }
    if (etaSeconds >= 0) {
      line.append(String.format(", ETA %.0f s", etaSeconds));
    }
    return line.toString();
  }

  /** Prints a line that stays, clearing a progress line on a terminal first. */
  public static void printNote(PrintWriter err, String line, boolean tty) {
    if (err instanceof ProgressOutput po) {
      po.note(line);
      return;
    }
    err.println((tty ? "\r\033[K" : "") + Printable.text(line));
    err.flush();
  }

  /** Overwrites the progress line on a terminal; prints one line per call elsewhere. */
  public static void printLine(PrintWriter err, String line, boolean tty) {
    if (err instanceof ProgressOutput po) {
      po.note(line);
      return;
    }
    line = Printable.text(line);
    if (tty) {
      err.print("\r\033[K" + line);
    } else {
      err.println(line);
    }
    err.flush();
  }

  /** The operator-facing failure in a cause chain: ours if present, else the innermost cause. */
  public static RuntimeException translate(Throwable e) {
    Throwable innermost = e;
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof BeamsaveException) {
        return (BeamsaveException) t;
      }
      if (t instanceof ImageException) {
        return new BeamsaveException(t.getMessage(), t);
      }
      innermost = t;
    }
    String msg = innermost.getMessage();
    return new BeamsaveException(
        innermost.getClass().getSimpleName() + (msg == null ? "" : ": " + msg), e);
  }

}

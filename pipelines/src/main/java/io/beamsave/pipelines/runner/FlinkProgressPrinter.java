package io.beamsave.pipelines.runner;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Prints progress lines for a job on Flink, whose runner blocks until the job ends: a thread
 * polls {@link FlinkProgress} meanwhile, every second on a terminal and every 10 s elsewhere.
 */
final class FlinkProgressPrinter {
  private static final Pattern REST_PORT =
      Pattern.compile("^\\s*rest\\.(?:bind-)?port\\s*:\\s*(\\d+)\\s*$", Pattern.MULTILINE);

  private final Thread thread;
  private volatile boolean stopped;

  private FlinkProgressPrinter(FlinkProgress poller, Job.Progress progress, PrintWriter err) {
    long start = System.nanoTime();
    boolean tty = System.console() != null;
    long every = err instanceof ProgressOutput po ? (long) (po.intervalSeconds() * 1000)
        : tty ? 1000 : 10_000;
    thread = new Thread(() -> {
      long lastPrint = System.nanoTime();
      String last = null;
      FlinkProgress.Shards first = null;
      long firstNanos = 0;
      long bytes = progress.knownTotal();
      long restarts = 0;
      while (!stopped) {
        try {
          Thread.sleep(1000);
        } catch (InterruptedException e) {
          return;
        }
        FlinkProgress.Shards s = poller.poll();
        long now = System.nanoTime();
        if (s != null && s.restarts() > restarts) {
          restarts = s.restarts();
          // A restart is progress, not failure: Flink runs the job again while its restart
          // strategy allows, and beamsave fails only when Flink gives up.
          synchronized (err) {
            Job.printNote(err, "Flink restarted the job (restart " + restarts + ") after a"
                + " failure, such as a lost TaskManager; it runs again from the start", tty);
          }
          first = null;
          last = null;
        }
        if (s != null && first == null && s.done() > 0) {
          first = s;
          firstNanos = now;
        }
        if (s == null || s.done() == 0 && s.total() == 0 || stopped
            || (now - lastPrint) / 1_000_000 < every) {
          continue;
        }
        // The rate counts from the first shard seen done: before it lie the job's submission
        // and deployment, which say nothing about how fast shards go.
        double eta = first == null || s.done() <= first.done() || s.total() <= s.done()
            ? -1
            : (now - firstNanos) / 1e9 * (s.total() - s.done()) / (s.done() - first.done());
        if (bytes == 0 && s.total() > 0 && progress.plannedBytes() != null) {
          bytes = plannedBytes(progress.plannedBytes());
        }
        String line = Job.shardLine(progress.verb(), s, bytes, (now - start) / 1e9, eta);
        if (err instanceof ProgressOutput po && bytes > 0 && s.total() > 0) {
          // Shards are all a remote job tells; the bytes are as far as the shards done go.
          po.update(progress.verb(), bytes * s.done() / s.total(), bytes, -1,
              (now - start) / 1e9);
          lastPrint = now;
        } else if (!line.equals(last)) {
          synchronized (err) {
            Job.printLine(err, line, tty);
          }
          last = line;
          lastPrint = now;
        }
      }
    }, "beamsave-flink-progress");
    thread.setDaemon(true);
  }

  /** The planned bytes, or 0 while they cannot be read (the line then counts shards only). */
  private static long plannedBytes(Callable<Long> planned) {
    try {
      return planned.call();
    } catch (Exception notYet) {
      return 0;
    }
  }

  /** Starts printing if the job runs on Flink with a REST API to ask, else returns null. */
  static FlinkProgressPrinter start(PipelineOptions options, Job.Progress progress, PrintWriter err) {
    if (progress == null || err == null
        || !Workers.of(options).flink()) {
      return null;
    }
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    URI rest = restAddress(flink.getFlinkMaster(), flink.getFlinkConfDir());
    if (rest == null) {
      return null;
    }
    FlinkProgress poller = new FlinkProgress(
        rest, flink.getJobName(), progress.shardStep(), progress.planStep(), progress.knownShards());
    FlinkProgressPrinter p = new FlinkProgressPrinter(poller, progress, err);
    p.thread.start();
    return p;
  }

  /**
   * The REST address of the cluster: the master itself for a session cluster, or for the embedded
   * one the port its configuration fixes (see {@link BeamOptions}); null when there is none.
   */
  static URI restAddress(String master, String confDir) {
    if (master != null && !master.isBlank() && !master.matches("\\[(local|auto)]")) {
      try {
        return FlinkRunnerLine.rest(master);
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
    if (confDir == null) {
      return null;
    }
    for (String name : new String[] {"config.yaml", "flink-conf.yaml"}) {
      try {
        Matcher m = REST_PORT.matcher(Files.readString(Path.of(confDir, name)));
        if (m.find()) {
          return URI.create("http://127.0.0.1:" + m.group(1));
        }
      } catch (IOException missing) {
        // Try the other name.
      }
    }
    return null;
  }

  void stop() {
    stopped = true;
    thread.interrupt();
  }
}

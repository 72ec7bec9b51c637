package io.beamsave.transforms.run;

import java.util.concurrent.atomic.LongAdder;

/**
 * Work done so far by the workers that run in this JVM, by job and counter, for progress only.
 * Beam's DirectRunner publishes a counter when a bundle commits, which for a save is when a
 * whole shard is done: a progress line from metrics alone jumps by shards and reads 0 for the
 * first of them. Workers add here as they go, and the command line reads it while the job runs.
 * Nothing a run reports or decides comes from here; where the workers run elsewhere it stays
 * empty and progress falls back to the metrics.
 */
public final class LiveProgress {
  /** Files whose last byte a save has read, or a restore or verify has checked. */
  public static final String FILES_DONE = "filesDone";

  private LiveProgress() {}

  /** The counter {@code name} of job {@code job} (Beam's job name, unique per run). */
  public static LongAdder counter(String job, String name) {
    return RunState.of(job).counter(name);
  }

  /** The counter's value, or -1 if no worker in this JVM has counted it. */
  public static long read(String job, String name) {
    RunState run = RunState.find(job);
    return run == null ? -1 : run.read(name);
  }

  /** Drops the job's counters once it has ended. */
  public static void forget(String job) {
    RunState.end(job);
  }
}

package io.beamsave.transforms.sink;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.run.RunState;
import io.beamsave.transforms.store.StoreException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;

/**
 * Which runs of this JVM may still write to their image's upload, and the writes of its workers
 * in flight, by upload id. A run is stopped for a while when its store cannot be reached (a job
 * a cluster restarts in the same worker JVM once the store is back must not fail for it), and
 * for good when its driver discards it. Every write of a worker passes {@link #write}, which
 * refuses it for a stopped run and counts it while it is in flight, so that a discarded run
 * aborts its upload only once none is left: a part that lands after its upload was aborted
 * brings the upload back on some stores (S3Proxy's filesystem). The state is per JVM, as the
 * driver and the workers of a run that share a JVM share no object but the sink they carry.
 */
final class UploadGate {
  private UploadGate() {}

  /** The run's part of a staging prefix ({@code .../.beamsave-staging-RUN/LIBRARY/shards/}). */
  private static final Pattern RUN = Pattern.compile("\\.beamsave-staging-[^/]+");

  /**
   * The name of the run whose shards are staged under {@code staging}: the same for every
   * library of one run, wherever its images go.
   */
  static String runOf(String staging) {
    return RUN.matcher(staging).results().map(MatchResult::group).findFirst().orElse(staging);
  }

  /** The run's state in this JVM, known by its upload id. */
  private static RunState run(String uploadId) {
    return RunState.of("upload " + uploadId);
  }

  /** Fails at once, saying why, if the run of upload {@code uploadId} is stopped. */
  static void check(String uploadId) {
    RunState.Stop s = run(uploadId).stopped();
    if (s != null) {
      throw new BeamsaveException(s.why());
    }
  }

  /** Runs {@code write} for upload {@code uploadId} unless its run is stopped, counted. */
  static <T> T write(String uploadId, Supplier<T> write) {
    AtomicInteger n = run(uploadId).inFlight("writes");
    n.incrementAndGet();
    try {
      check(uploadId);
      return write.get();
    } finally {
      synchronized (n) {
        n.decrementAndGet();
        n.notifyAll();
      }
    }
  }

  /** Stops the run of upload {@code uploadId} for {@code pause}, unless it is stopped for good. */
  static void stopFor(String uploadId, String why, Duration pause) {
    run(uploadId).stop(why, false, System.nanoTime() + pause.toNanos());
  }

  /**
   * {@code e}; where it says the store cannot be reached, or kept failing until the retries
   * were spent, no worker of this JVM sends a shard of the run of upload {@code uploadId} for
   * {@code pause}: the DirectRunner lets every running bundle go on after a failure, and each
   * would compress its shard for nothing. Other failures (a part refused, a worker interrupted
   * by its cluster) stop only their own shard.
   */
  static StoreException stopIfStoreDown(String uploadId, StoreException e, Duration pause) {
    if (e.kind() == StoreException.Kind.UNREACHABLE || e.attempts() > 1) {
      stopFor(uploadId, e.getMessage(), pause);
    }
    return e;
  }

  /**
   * Stops the run of upload {@code uploadId} for good, then waits until none of its writes in
   * this JVM is in flight, for at most {@code patience}.
   */
  static void stopForGood(String uploadId, String why, Duration patience) {
    RunState state = run(uploadId);
    state.stop(why, true, 0);
    AtomicInteger n = state.inFlight("writes");
    long end = System.nanoTime() + patience.toNanos();
    synchronized (n) {
      while (n.get() > 0 && System.nanoTime() < end) {
        try {
          n.wait(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }
}

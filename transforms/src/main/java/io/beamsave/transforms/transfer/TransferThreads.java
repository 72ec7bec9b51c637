package io.beamsave.transforms.transfer;

import io.beamsave.transforms.BeamsaveException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The worker threads of an upload or a download: how they are made (daemons, so that a transfer
 * never keeps the JVM alive), how their results and failures reach the thread that waits, and
 * how a transfer waits for them at its end, so that no request of theirs outlives it.
 */
final class TransferThreads {
  private TransferThreads() {}

  static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  /** What {@code f} gave, its failure rethrown as it was thrown. */
  static <T> T get(Future<T> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("transfer interrupted");
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof RuntimeException r) {
        throw r;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new BeamsaveException(c.toString(), c);
    }
  }

  static <T> Future<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  /**
   * Waits up to a minute for the threads of {@code pool}, already shut down, to end: a request
   * still in flight could otherwise land after the transfer gave up (a part after its abort).
   */
  static void awaitQuietly(ExecutorService pool) {
    try {
      pool.awaitTermination(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

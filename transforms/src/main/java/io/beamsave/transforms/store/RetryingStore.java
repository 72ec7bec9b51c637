package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * The one retry policy, around any {@link Store}: a {@linkplain StoreException#isTransient
 * transient} failure (a server error, throttling, a timeout, a broken connection) is tried
 * again with exponential backoff and full jitter, up to a number of attempts and within a time
 * budget (no attempt begins once the budget is spent, so a store that stops answering fails a
 * request after about the budget, not after attempts times the socket timeout); any other failure
 * (a refused connection, a failed TLS handshake, wrong credentials, a missing bucket) passes at
 * once. What is transient is the store's to say ({@link S3Failure} for S3), so that this is the
 * only loop. A failure that outlasts the attempts says how many were made; {@link
 * StoreException#attempts} tells them either way.
 */
public final class RetryingStore implements Store {
  private static final long BASE_MILLIS = 100;
  private static final long CAP_MILLIS = 5_000;

  private final Store store;
  private final int attempts;
  private final long budgetNanos;
  private final long silenceNanos;

  /** Retries up to {@code attempts} times, with no bound on the time they take. */
  public RetryingStore(Store store, int attempts) {
    this(store, attempts, Duration.ofDays(365), Duration.ofDays(365));
  }

  /**
   * Retries up to {@code attempts} times, beginning none once {@code budget} has passed since
   * the request began or since an attempt that made progress ended. An attempt made progress
   * if it lasted longer than {@code silence}, the longest an attempt waits for an answer (the
   * socket timeout): a part that took a minute to send and then broke gets its attempts like
   * one that broke at once.
   */
  public RetryingStore(Store store, int attempts, Duration budget, Duration silence) {
    if (attempts < 1) {
      throw new IllegalArgumentException("attempts must be at least 1");
    }
    this.store = store;
    this.attempts = attempts;
    this.budgetNanos = budget.toNanos();
    this.silenceNanos = silence.toNanos();
  }

  private <T> T call(Supplier<T> op) {
    long start = System.nanoTime();
    for (int attempt = 1; ; attempt++) {
      long began = System.nanoTime();
      try {
        return op.get();
      } catch (StoreException e) {
        long ended = System.nanoTime();
        if (ended - began > silenceNanos + 1_000_000_000L) {
          start = ended;
        }
        long pause = pauseMillis(attempt);
        boolean late = ended - start + pause * 1_000_000 >= budgetNanos;
        if (!e.isTransient() || attempt >= attempts || late) {
          throw e.after(attempt);
        }
        sleep(pause);
      }
    }
  }

  private void run(Runnable op) {
    call(() -> {
      op.run();
      return null;
    });
  }

  private static long pauseMillis(int attempt) {
    long ceiling = Math.min(CAP_MILLIS, BASE_MILLIS << Math.min(attempt - 1, 20));
    return ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("interrupted while waiting to retry");
    }
  }

  @Override
  public String where(String key) {
    return store.where(key);
  }

  @Override
  public void check(String key) {
    run(() -> store.check(key));
  }

  @Override
  public Optional<Stat> stat(String key) {
    return call(() -> store.stat(key));
  }

  @Override
  public void read(String key, String etag, long offset, byte[] buf, int off, int len) {
    run(() -> store.read(key, etag, offset, buf, off, len));
  }

  @Override
  public byte[] get(String key) {
    return call(() -> store.get(key));
  }

  @Override
  public void put(String key, Body body, String contentType) {
    run(() -> store.put(key, body, contentType));
  }

  @Override
  public List<Item> list(String prefix) {
    return call(() -> store.list(prefix));
  }

  @Override
  public void delete(String key) {
    run(() -> store.delete(key));
  }

  @Override
  public String createMultipart(String key, String contentType, Map<String, String> metadata) {
    return call(() -> store.createMultipart(key, contentType, metadata));
  }

  @Override
  public String uploadPart(String key, String uploadId, int number, Body body, byte[] md5) {
    return call(() -> store.uploadPart(key, uploadId, number, body, md5));
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from) {
    return call(() -> store.copyPart(key, uploadId, number, from));
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from, String fromEtag,
      long offset, long length) {
    return call(() -> store.copyPart(key, uploadId, number, from, fromEtag, offset, length));
  }

  @Override
  public List<Part> parts(String key, String uploadId) {
    return call(() -> store.parts(key, uploadId));
  }

  @Override
  public String complete(String key, String uploadId, List<Part> parts, String expect) {
    return call(() -> store.complete(key, uploadId, parts, expect));
  }

  @Override
  public void abort(String key, String uploadId) {
    run(() -> store.abort(key, uploadId));
  }

  @Override
  public List<Upload> uploads(String prefix) {
    return call(() -> store.uploads(prefix));
  }

  @Override
  public boolean wantsPartMd5() {
    return store.wantsPartMd5();
  }
}

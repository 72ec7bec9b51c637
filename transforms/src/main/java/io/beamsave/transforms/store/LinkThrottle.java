package io.beamsave.transforms.store;

import io.beamsave.transforms.run.RunState;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;

/**
 * A token bucket emulating a WAN link of a given speed on one machine, shared by every write
 * that crosses the link: a {@link ThrottledStore} sends its bodies through it, and bytes are
 * paid for as the HTTP client reads them from a body.
 */
public final class LinkThrottle {
  private final double bytesPerSecond;
  private final double burst;
  private double tokens;
  private long last = System.nanoTime();

  private LinkThrottle(double megabitsPerSecond) {
    this.bytesPerSecond = megabitsPerSecond * 1_000_000 / 8;
    // A tenth of a second of traffic: enough to keep socket writes large, small enough that the
    // rate holds over short transfers.
    this.burst = Math.max(64 * 1024, bytesPerSecond / 10);
  }

  /** A throttle of {@code mbps} megabits per second, or {@code null} (no limit) when 0. */
  public static LinkThrottle of(double mbps) {
    if (mbps < 0) {
      throw new IllegalArgumentException("--link-mbps must not be negative");
    }
    return mbps == 0 ? null : new LinkThrottle(mbps);
  }

  /**
   * The throttle every transfer of run {@code run} in this JVM to a link of {@code mbps} shares
   * (null when 0), so that its workers sending at once share the link's speed as they would
   * share the link. It is the run's ({@link RunState}).
   */
  public static LinkThrottle shared(String run, double mbps) {
    return mbps == 0 ? null : RunState.of("link " + run).shared(mbps, LinkThrottle::of);
  }

  /** Blocks until {@code n} bytes may pass. */
  public void acquire(int n) throws InterruptedException {
    long waitNanos;
    synchronized (this) {
      long now = System.nanoTime();
      tokens = Math.min(burst, tokens + (now - last) / 1e9 * bytesPerSecond);
      last = now;
      tokens -= n;
      waitNanos = tokens >= 0 ? 0 : (long) (-tokens / bytesPerSecond * 1e9);
    }
    if (waitNanos > 0) {
      Thread.sleep(waitNanos / 1_000_000, (int) (waitNanos % 1_000_000));
    }
  }

  /** {@code in}, slowed to this link's speed ({@code in} itself when {@code t} is null). */
  public static InputStream wrap(InputStream in, LinkThrottle t) {
    if (t == null) {
      return in;
    }
    return new FilterInputStream(in) {
      @Override
      public int read() throws IOException {
        pay(1);
        return super.read();
      }

      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        int n = super.read(b, off, Math.min(len, 64 * 1024));
        if (n > 0) {
          pay(n);
        }
        return n;
      }

      private void pay(int n) throws InterruptedIOException {
        try {
          t.acquire(n);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("transfer interrupted");
        }
      }
    };
  }
}

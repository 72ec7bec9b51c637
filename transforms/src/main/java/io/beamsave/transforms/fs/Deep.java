package io.beamsave.transforms.fs;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Runs a walk of a tree as deep as {@link Removal#MAX_DEPTH} on a thread of its own with a stack
 * that holds it: a walk takes a frame per level, and a thread's default stack ends between 2,000
 * and 2,500 levels, which anyone who may write in a tree can nest it beyond. The stack is
 * address space reserved, not memory used, until it is.
 */
public final class Deep {
  private Deep() {}

  /** Frames of a walk per level, with room: measured at about 250 bytes, given 16 KiB. */
  private static final long STACK = (long) Removal.MAX_DEPTH * 16 * 1024;

  /** A walk's step that may fail as I/O does. */
  @FunctionalInterface
  public interface Work<T> {
    T run() throws IOException;
  }

  /** A thread with the stack a walk needs; what runs on it runs the walks it starts in line. */
  private static final class DeepThread extends Thread {
    DeepThread(Runnable r) {
      super(null, r, "fs-deep", STACK);
    }
  }

  /**
   * Runs {@code work} on a thread with a stack deep enough for a walk of {@link
   * Removal#MAX_DEPTH} levels (in line if this is one), and returns what it returns or throws
   * what it throws.
   */
  public static <T> T run(Work<T> work) throws IOException {
    if (Thread.currentThread() instanceof DeepThread) {
      return work.run();
    }
    Object[] result = new Object[1];
    Throwable[] failed = new Throwable[1];
    Thread t = new DeepThread(() -> {
      try {
        result[0] = work.run();
      } catch (Throwable e) {
        failed[0] = e;
      }
    });
    t.start();
    try {
      t.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted");
    }
    Throwable f = failed[0];
    if (f instanceof IOException io) {
      throw io;
    }
    if (f instanceof UncheckedIOException u) {
      throw u.getCause();
    }
    if (f instanceof RuntimeException r) {
      throw r;
    }
    if (f instanceof Error err) {
      throw err;
    }
    @SuppressWarnings("unchecked")
    T t0 = (T) result[0];
    return t0;
  }
}

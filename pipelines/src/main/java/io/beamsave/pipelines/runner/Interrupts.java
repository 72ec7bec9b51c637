package io.beamsave.pipelines.runner;

import java.io.PrintStream;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import sun.misc.Signal;

/**
 * What Ctrl-C (SIGINT) and SIGTERM do: print {@code beamsave: interrupted}, run the running
 * command's cleanups, newest first (cancel the job, abort uploads, remove the partial image and
 * the staging directory), and exit with 128 + the signal's number: 130 or 143, as a shell
 * reports a process killed by it. A second signal exits at once. Only the program's {@code main}
 * installs the handlers, so commands run in-process by tests keep their JVM.
 */
public final class Interrupts {
  private Interrupts() {}

  private static final Deque<Runnable> CLEANUPS = new ConcurrentLinkedDeque<>();
  private static volatile int signal;

  /** Something to undo should the command be interrupted; closing it withdraws it. */
  public static final class Registration implements AutoCloseable {
    private final Runnable cleanup;

    private Registration(Runnable cleanup) {
      this.cleanup = cleanup;
    }

    @Override
    public void close() {
      CLEANUPS.remove(cleanup);
    }
  }

  public static Registration onInterrupt(Runnable cleanup) {
    CLEANUPS.push(cleanup);
    return new Registration(cleanup);
  }

  /** Whether a signal has ended the command: its failure is then not worth reporting. */
  public static boolean interrupted() {
    return signal != 0;
  }

  /** Installs the handlers for SIGINT and SIGTERM. */
  public static void install(PrintStream err) {
    for (String name : new String[] {"INT", "TERM"}) {
      Signal.handle(new Signal(name), s -> interrupt(s.getNumber(), err));
    }
  }

  private static void interrupt(int number, PrintStream err) {
    synchronized (Interrupts.class) {
      if (signal != 0) {
        Runtime.getRuntime().halt(128 + signal);
      }
      signal = number;
    }
    err.println("beamsave: interrupted");
    err.flush();
    // Taken now: cancelling the job lets the command's thread unwind and withdraw the rest.
    java.util.List<Runnable> todo = new java.util.ArrayList<>(CLEANUPS);
    for (Runnable cleanup : todo) {
      try {
        cleanup.run();
      } catch (RuntimeException e) {
        err.println("beamsave: warning: while cleaning up: " + e.getMessage());
      }
    }
    System.exit(128 + number);
  }

  /** Blocks the main thread of an interrupted command while the handler ends the process. */
  public static void awaitExitIfInterrupted() {
    while (interrupted()) {
      try {
        Thread.sleep(1000);
      } catch (InterruptedException e) {
        return;
      }
    }
  }
}

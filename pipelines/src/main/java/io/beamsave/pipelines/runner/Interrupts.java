package io.beamsave.pipelines.runner;

import io.beamsave.transforms.run.RunState;
import java.io.PrintStream;
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

  /** The signal that ended the command, once one has: a process gets signals as a whole. */
  private static volatile int signal;

  /** Something to undo should the command be interrupted; closing it withdraws it. */
  public static final class Registration implements AutoCloseable {
    private final AutoCloseable registered;

    private Registration(AutoCloseable registered) {
      this.registered = registered;
    }

    @Override
    public void close() {
      try {
        registered.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /**
   * Registers {@code cleanup}, something run {@code run} (a name unique to it) must undo should
   * the command be interrupted, with the run's state ({@link RunState}).
   */
  public static Registration onInterrupt(String run, Runnable cleanup) {
    return new Registration(RunState.of(run).onInterrupt(cleanup));
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
    // The bar closed where it stood first: the word starts a line, and nothing is drawn after.
    ProgressOutput.interrupted();
    err.println("beamsave: interrupted");
    err.flush();
    // Taken now: cancelling the job lets the command's thread unwind and withdraw the rest.
    java.util.List<Runnable> todo = RunState.interruptCleanups();
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

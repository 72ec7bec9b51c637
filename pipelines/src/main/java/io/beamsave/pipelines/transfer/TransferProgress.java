package io.beamsave.pipelines.transfer;

import io.beamsave.pipelines.runner.Job;
import io.beamsave.pipelines.runner.ProgressOutput;
import java.io.PrintWriter;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * A progress line for an upload or download, printed from its own thread every second on a
 * terminal and every ten seconds elsewhere (logs of scheduled runs). Silent without a writer.
 */
public final class TransferProgress implements LongConsumer, AutoCloseable {
  private final AtomicLong done = new AtomicLong();
  private final PrintWriter err;
  private final Thread printer;
  private final boolean tty = System.console() != null;

  public TransferProgress(String verb, long total, PrintWriter err) {
    this.err = err;
    long start = System.nanoTime();
    this.printer =
        new Thread(
            () -> {
              long period = err instanceof ProgressOutput po ? (long) (po.intervalSeconds() * 1000)
                  : tty ? 1_000 : 10_000;
              try {
                while (true) {
                  Thread.sleep(period);
                  if (err instanceof ProgressOutput po) {
                    po.update(verb, done.get(), total, -1, (System.nanoTime() - start) / 1e9);
                    continue;
                  }
                  Job.printLine(
                      err,
                      Job.progressLine(verb, done.get(), total, (System.nanoTime() - start) / 1e9),
                      tty);
                }
              } catch (InterruptedException e) {
                // Closed: the transfer is over.
              }
            },
            "beamsave-progress");
    printer.setDaemon(true);
    if (err != null) {
      printer.start();
    }
  }

  @Override
  public void accept(long bytes) {
    done.addAndGet(bytes);
  }

  @Override
  public void close() {
    printer.interrupt();
    try {
      printer.join(1_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (err instanceof ProgressOutput po) {
      po.finish();
    } else if (err != null && tty) {
      err.print("\r\033[K");
      err.flush();
    }
  }
}

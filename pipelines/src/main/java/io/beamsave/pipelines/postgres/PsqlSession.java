package io.beamsave.pipelines.postgres;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One {@code psql} session, for as long as the server is to keep what it holds (a backup mode,
 * a replication slot): statements go in one at a time, each followed by an echo that tells
 * where its rows end, since the session's output never ends while it lives. What psql says on
 * its error stream is kept, its first 4 KiB, to say why the session ended.
 */
final class PsqlSession {
  private static final String DONE = "beamsave:done";

  private final Process psql;
  private final Writer in;
  private final BufferedReader out;
  private final StringBuilder err = new StringBuilder();
  private final Thread errors;

  /** A session on {@code conninfo}'s server; fails where psql cannot be run. */
  PsqlSession(Conninfo conninfo) throws IOException {
    ProcessBuilder pb = PostgresSave.psql(conninfo);
    psql = pb.start();
    in = new OutputStreamWriter(psql.getOutputStream(), StandardCharsets.UTF_8);
    out = new BufferedReader(new InputStreamReader(psql.getInputStream(),
        StandardCharsets.UTF_8));
    errors = new Thread(() -> {
      try (BufferedReader e = new BufferedReader(new InputStreamReader(psql.getErrorStream(),
          StandardCharsets.UTF_8))) {
        for (String line; (line = e.readLine()) != null; ) {
          synchronized (err) {
            if (err.length() < 4096) {
              err.append(line).append('\n');
            }
          }
        }
      } catch (IOException gone) {
        // The session has ended; what it said is kept.
      }
    }, "psql-errors");
    errors.setDaemon(true);
    errors.start();
  }

  /** Runs {@code then} once psql has ended, however it ended. */
  void onEnd(Runnable then) {
    psql.onExit().thenRun(then);
  }

  /** Waits, up to 5 seconds, until what psql said is all read: its stderr ends with it. */
  void awaitErrors() throws InterruptedException {
    errors.join(5000);
  }

  /** Rows of {@code sql}, run in the session; fails on the server's first error. */
  synchronized List<String[]> call(String sql) {
    try {
      in.write(sql + ";\n\\echo " + DONE + "\n");
      in.flush();
      List<String[]> rows = new ArrayList<>();
      for (String line; (line = out.readLine()) != null; ) {
        if (line.equals(DONE)) {
          return rows;
        }
        if (!line.isEmpty()) {
          rows.add(line.split("\u001f", -1));
        }
      }
    } catch (IOException ended) {
      // Said below, with what psql said.
    }
    try {
      psql.waitFor(5, TimeUnit.SECONDS);
      // What psql said is all read once its stderr ends.
      errors.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new BeamsaveException("--postgres: " + Printable.text(cause()));
  }

  /** What psql said of why it ended: the cause, where it says one, before what followed. */
  String cause() {
    synchronized (err) {
      List<String> lines = err.toString().lines().filter(l -> !l.isBlank()).toList();
      return lines.stream().filter(l -> l.startsWith("FATAL:")).findFirst()
          .or(() -> lines.stream().filter(l -> l.startsWith("ERROR:")).findFirst())
          .or(() -> lines.stream().findFirst())
          .orElse("psql ended (exit " + (psql.isAlive() ? "?" : psql.exitValue()) + ")")
          .strip();
    }
  }

  /**
   * Ends the session: its input closed, which psql ends at, and psql killed where it has not
   * ended within 10 seconds. What the session held on the server ends with it.
   */
  void close() {
    try {
      in.close();
    } catch (IOException gone) {
      // The session has ended already.
    }
    try {
      if (!psql.waitFor(10, TimeUnit.SECONDS)) {
        psql.destroyForcibly();
      }
    } catch (InterruptedException e) {
      psql.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}

package io.beamsave.pipelines.runner;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.transforms.Printable;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.LinkedHashMap;
import java.util.Map;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * Where a command's progress goes, and how it looks: a bar redrawn in place on a terminal, a
 * line every {@link #intervalSeconds} in a log, or JSON lines ({@code "type":"progress"} and
 * {@code "type":"note"}) with {@code --json}. Text written to it as to any writer is a note: a
 * line that stays.
 */
public final class ProgressOutput extends PrintWriter {
  private static final ObjectMapper JSON = new ObjectMapper();

  private enum Mode { BAR, LINES, JSON }

  private final Mode mode;
  private final PrintWriter to;
  private final double interval;
  private final StringBuilder pending = new StringBuilder();
  private ProgressBar bar;
  private String barVerb;
  /** A status line is drawn in place of a bar while the total is unknown. */
  private boolean statusShown;
  /** The command was interrupted: the last state stays as it was, nothing more is drawn. */
  private boolean silenced;

  /** The bar of this process, which an interrupt closes before it says so. */
  private static volatile ProgressOutput drawing;

  private ProgressOutput(PrintWriter to, Mode mode, double interval) {
    super(Writer.nullWriter());
    this.to = to;
    this.mode = mode;
    this.interval = interval;
    if (mode == Mode.BAR) {
      drawing = this;
    }
  }

  /**
   * The command is being interrupted: the bar is closed where it stands, so that what is said
   * next starts on a line of its own and the bar is not drawn again after it.
   */
  static void interrupted() {
    ProgressOutput p = drawing;
    if (p != null) {
      synchronized (p) {
        p.finish();
        p.silenced = true;
      }
    }
  }

  /** Progress for people: a bar on a terminal ({@code tty}), else plain lines. */
  public static ProgressOutput text(PrintWriter err, boolean tty, double intervalSeconds) {
    return new ProgressOutput(err, tty ? Mode.BAR : Mode.LINES, intervalSeconds);
  }

  /** Progress as JSON lines, for programs. */
  public static ProgressOutput json(PrintWriter out, double intervalSeconds) {
    return new ProgressOutput(out, Mode.JSON, intervalSeconds);
  }

  public double intervalSeconds() {
    return interval;
  }

  /** Whether progress is shown from the start (a log gets its first line after an interval). */
  public boolean showsStart() {
    return mode != Mode.LINES;
  }

  /** Whether a line is redrawn in place (so the last one is cleared when work ends). */
  public boolean redraws() {
    return mode == Mode.BAR;
  }

  /**
   * Work done: {@code done} of {@code total} bytes ({@code total} 0 while unknown), {@code
   * files} files (-1 if not counted), {@code seconds} since the work began.
   */
  public synchronized void update(String verb, long done, long total, long files, double seconds) {
    double rate = done / Math.max(seconds, 1e-3);
    double eta = total > 0 && done > 0 && done < total ? (total - done) / rate : -1;
    switch (mode) {
      case JSON -> {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "progress");
        m.put("verb", verb);
        m.put("bytesDone", done);
        m.put("bytesTotal", total > 0 ? total : null);
        m.put("percent", total > 0 ? Math.min(100.0, Math.round(1000.0 * done / total) / 10.0)
            : null);
        m.put("filesDone", files >= 0 ? files : null);
        m.put("seconds", Math.round(seconds * 1000) / 1000.0);
        m.put("bytesPerSecond", Math.round(rate));
        m.put("etaSeconds", eta >= 0 ? Math.round(eta) : null);
        jsonLine(m);
      }
      case LINES -> {
        to.println(Printable.text(line(verb, done, total, files, seconds, rate, eta)));
        to.flush();
      }
      case BAR -> {
        if (silenced) {
          return;
        }
        if (total <= 0 && bar == null) {
          // No total yet (a save still listing): what is known, without a percentage of '?'.
          System.err.print("\r\033[K" + Printable.text(verb + " " + Sizes.human(done)
              + (files >= 0 ? ", " + Sizes.count(files, "file", "files") : "")
              + String.format(java.util.Locale.ROOT, ", %.1f MB/s", rate / 1e6)));
          System.err.flush();
          statusShown = true;
          return;
        }
        if (bar == null || !verb.equals(barVerb)) {
          closeBar();
          barVerb = verb;
          to.flush();
          // MB and MB/s, as the tables print rates.
          bar = new ProgressBarBuilder()
              .setTaskName(verb)
              .setInitialMax(total > 0 ? total : -1)
              .setStyle(ProgressBarStyle.ASCII)
              .setUnit("MB", 1_000_000)
              .showSpeed(new java.text.DecimalFormat("0.0"))
              .setUpdateIntervalMillis((int) Math.max(100, interval * 1000))
              .setConsumer(new ConsoleProgressBarConsumer(System.err))
              .hideEta()
              .build();
        }
        bar.maxHint(total > 0 ? total : -1);
        bar.stepTo(Math.min(done, total > 0 ? total : done));
        bar.setExtraMessage((files >= 0 ? " " + Sizes.count(files, "file", "files") : "")
            + (eta >= 0 ? (files >= 0 ? "," : "") + " ETA " + duration(eta) : ""));
      }
    }
  }

  /** "saved 1.2 GiB of 2.0 GiB (60%), 1,204 files, 250.0 MB/s, 4 s, ETA 3 s". */
  static String line(String verb, long done, long total, long files, double seconds, double rate,
      double eta) {
    StringBuilder line = new StringBuilder(verb).append(' ').append(Sizes.human(done));
    if (total > 0) {
      line.append(" of ").append(Sizes.human(total));
      line.append(String.format(" (%.0f%%)", 100.0 * done / total));
    }
    if (files >= 0) {
      line.append(", ").append(files).append(files == 1 ? " file" : " files");
    }
    line.append(String.format(", %.1f MB/s, %s", rate / 1e6, duration(seconds)));
    if (eta >= 0) {
      line.append(", ETA ").append(duration(eta));
    }
    return line.toString();
  }

  static String duration(double seconds) {
    long s = Math.round(seconds);
    return s < 60 ? s + " s" : s < 3600 ? String.format("%dm%02ds", s / 60, s % 60)
        : String.format("%dh%02dm", s / 3600, s / 60 % 60);
  }

  /** A line that stays. */
  public synchronized void note(String line) {
    switch (mode) {
      case JSON -> {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "note");
        m.put("message", Printable.text(line));
        jsonLine(m);
      }
      case LINES -> {
        to.println(Printable.text(line));
        to.flush();
      }
      case BAR -> {
        System.err.print("\r\033[K");
        System.err.flush();
        statusShown = false;
        to.println(Printable.text(line));
        to.flush();
      }
    }
  }

  /** Work is over: the bar shows its last state and stays. */
  public synchronized void finish() {
    closeBar();
  }

  private void closeBar() {
    if (statusShown) {
      System.err.print("\r\033[K");
      System.err.flush();
      statusShown = false;
    }
    if (bar != null) {
      bar.close();
      bar = null;
    }
  }

  private void jsonLine(Map<String, Object> m) {
    try {
      to.println(JSON.writeValueAsString(m));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    to.flush();
  }

  // Text written as to any writer: each line is a note.

  @Override
  public synchronized void write(int c) {
    write(new char[] {(char) c}, 0, 1);
  }

  @Override
  public synchronized void write(char[] buf, int off, int len) {
    for (int i = off; i < off + len; i++) {
      if (buf[i] == '\n') {
        note(pending.toString());
        pending.setLength(0);
      } else if (buf[i] != '\r') {
        pending.append(buf[i]);
      }
    }
  }

  @Override
  public synchronized void write(String s, int off, int len) {
    write(s.toCharArray(), off, len);
  }

  @Override
  public void println() {
    write('\n');
  }

  @Override
  public synchronized void flush() {
    to.flush();
  }
}

package io.beamsave.pipelines.compare;

import io.beamsave.pipelines.compare.Report.Average;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The columns of a report's tables, one list for the runs and one for the averages, and how
 * their figures are shown (MiB, seconds, CPU and call counts, "-" where not measured): laid out
 * by {@link TextReport} and {@link HtmlReport} alike. Static methods only.
 */
final class ReportColumns {
  /** One column of the tables, for a run and for an average alike. */
  record Column(String header, boolean text, Function<Figures, String> value) {}

  private ReportColumns() {}

  /** The columns of {@code report}'s table of runs, or with {@code averaged} of averages. */
  static List<Column> of(Report report, boolean averaged) {
    List<Column> c = new ArrayList<>();
    if (!report.local()) {
      c.add(new Column("link", true, f -> Report.link(f.linkMbps())));
      c.add(new Column("strategy", true, f -> Strategy.byId(f.strategy()).label()));
    }
    c.add(new Column("codec", true, Figures::codec));
    c.add(new Column(averaged ? "runs" : "run", false, f -> Integer.toString(
        f instanceof Average a ? a.runs() : ((Measurement) f).run())));
    c.add(new Column("save s", false, f -> f2(f.saveSeconds())));
    c.add(new Column("save CPU s", false, f -> cpu(f.saveUsage())));
    if (report.local()) {
      c.add(new Column("restore s", false, f -> f2(f.restoreSeconds())));
      c.add(new Column("restore CPU s", false, f -> cpu(f.restoreUsage())));
      c.add(new Column("image MiB", false, f -> mib(f.imageBytes())));
    } else {
      c.add(new Column("transfer s", false, f -> f2(f.transferSeconds())));
      c.add(new Column("total s", false, f -> f2(f.totalSeconds())));
      c.add(new Column("image MiB", false, f -> mib(f.imageBytes())));
      c.add(new Column("stored MiB", false,
          f -> f.storedBytes() == 0 ? "-" : mib(f.storedBytes())));
    }
    c.add(new Column("ratio", false, f -> f2(f.ratio())));
    c.add(new Column("raw MiB", false, f -> mib(f.rawBytes())));
    c.add(new Column("not compressed MiB", false, f -> mib(f.bytesStoredRaw())));
    if (report.local()) {
      c.add(new Column("save reads", false, f -> calls(f.saveUsage(), true)));
      c.add(new Column("save writes", false, f -> calls(f.saveUsage(), false)));
      c.add(new Column("restore reads", false, f -> calls(f.restoreUsage(), true)));
      c.add(new Column("restore writes", false, f -> calls(f.restoreUsage(), false)));
    }
    c.add(new Column(report.local() ? "save MB/s" : "MB/s", false,
        f -> String.format(Locale.ROOT, "%.1f", f.rateMbPerSecond())));
    if (averaged) {
      c.add(new Column("best", true, f -> report.marks((Average) f)));
    }
    return c;
  }

  /** The cells of {@code rows}, each row's in the order of {@code columns}. */
  static List<List<String>> cells(List<Column> columns, List<? extends Figures> rows) {
    List<List<String>> out = new ArrayList<>();
    for (Figures f : rows) {
      out.add(columns.stream().map(c -> c.value().apply(f)).toList());
    }
    return out;
  }

  private static String f2(double d) {
    return String.format(Locale.ROOT, "%.2f", d);
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.2f", bytes / Report.MIB);
  }

  /** CPU seconds as the tables and verdicts show them, "-" where not measured. */
  static String cpu(ProcessUsage u) {
    return u == null || u.cpuSeconds() < 0 ? "-" : f2(u.cpuSeconds());
  }

  private static String calls(ProcessUsage u, boolean reads) {
    long v = u == null ? -1 : reads ? u.readCalls() : u.writeCalls();
    return v < 0 ? "-" : Long.toString(v);
  }
}

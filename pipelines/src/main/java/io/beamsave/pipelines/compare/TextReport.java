package io.beamsave.pipelines.compare;

import io.beamsave.pipelines.compare.Report.Verdict;
import io.beamsave.pipelines.compare.ReportColumns.Column;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A report as the text {@code bench} and {@code compare} print: the header, every run, the
 * averages, then the verdicts, in columns padded to their widest cell. Static methods only.
 */
final class TextReport {
  private TextReport() {}

  /** The header, every run, the averages, then the verdicts. */
  static void print(Report report, PrintWriter out) {
    out.println(report.title());
    report.header().lines().forEach(out::println);
    out.println();
    List<Column> runs = ReportColumns.of(report, false);
    text(out, runs, ReportColumns.cells(runs, report.rows()));
    out.println();
    out.println("averages");
    List<Column> averages = ReportColumns.of(report, true);
    text(out, averages, ReportColumns.cells(averages, report.averages()));
    out.println();
    for (Verdict v : report.verdicts()) {
      out.println(v.line());
    }
    for (String line : report.linkLines()) {
      out.println(line);
    }
    if (report.local() && !report.targetLinks().isEmpty()) {
      out.println("(best at a link: the save time plus the image's size over the link's rate,"
          + " computed; compare measures real uploads)");
    }
    out.flush();
  }

  private static void text(PrintWriter out, List<Column> columns, List<List<String>> cells) {
    int[] width = new int[columns.size()];
    for (int i = 0; i < width.length; i++) {
      width[i] = columns.get(i).header().length();
      for (List<String> r : cells) {
        width[i] = Math.max(width[i], r.get(i).length());
      }
    }
    List<String> headers = columns.stream().map(Column::header).toList();
    for (List<String> r : concat(headers, cells)) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < width.length; i++) {
        String cell = r.get(i);
        String pad = " ".repeat(width[i] - cell.length());
        b.append(i == 0 ? "" : "  ").append(columns.get(i).text() ? cell + pad : pad + cell);
      }
      out.println(b.toString().stripTrailing());
    }
  }

  private static List<List<String>> concat(List<String> first, List<List<String>> rest) {
    List<List<String>> all = new ArrayList<>();
    all.add(first);
    all.addAll(rest);
    return all;
  }
}

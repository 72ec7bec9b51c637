package io.beamsave.pipelines.compare;

import io.beamsave.pipelines.compare.Report.Average;
import io.beamsave.pipelines.compare.Report.Verdict;
import io.beamsave.pipelines.compare.ReportColumns.Column;
import java.util.List;

/**
 * A report as {@code index.html}: the header, the verdicts, the chart, the averages with the
 * winners marked, every run, and links to the CSV and JSON beside it. One page, its style
 * inline. Static methods only.
 */
final class HtmlReport {
  private HtmlReport() {}

  /** The page's text. */
  static String page(Report report) {
    String title = report.title();
    boolean local = report.local();
    StringBuilder b = new StringBuilder();
    b.append("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>")
        .append(escape(title)).append("</title>\n<style>"
            + "body{font-family:sans-serif;margin:2em;font-size:16px}"
            + "table{border-collapse:collapse;margin-bottom:1em}"
            + "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
            + "th{background:#f4f4f4}table.runs{font-size:15px}"
            + "table.averages td:last-child{min-width:20em}"
            + "td.t,th.t{text-align:left}"
            + "table.header th{text-align:left;background:#f4f4f4}"
            + "tr.win td{background:#fdebd3;font-weight:bold}"
            + ".win{color:#a04f00;font-weight:bold}"
            + "img{max-width:100%}</style></head><body>\n");
    b.append("<h1>").append(escape(title)).append("</h1>\n<table class=\"header\">\n");
    report.header().fields().forEach((k, v) -> b.append("<tr><th>").append(escape(k))
        .append("</th><td class=\"t\">").append(escape(v)).append("</td></tr>\n"));
    b.append("</table>\n<h2>Verdict</h2>\n<ul>\n");
    for (Verdict v : report.verdicts()) {
      b.append("<li class=\"win\">★ ").append(escape(v.line())).append("</li>\n");
    }
    b.append("</ul>\n");
    for (String u : report.linkLines()) {
      b.append("<p>").append(escape(u)).append("</p>\n");
    }
    if (local && !report.targetLinks().isEmpty()) {
      b.append("<p>Best at a link: the save time plus the image's size over the link's rate,"
          + " computed; <code>compare</code> measures real uploads.</p>\n");
    }
    b.append("<img src=\"chart.png\" alt=\"one panel per ")
        .append(local ? "measure and target link speed" : "link speed")
        .append(", the best of each marked\">\n");
    b.append("<h2>Averages</h2>\n")
        .append(table(report, "averages", ReportColumns.of(report, true), report.averages()));
    b.append("<h2>Every run</h2>\n")
        .append(table(report, "runs", ReportColumns.of(report, false), report.rows()));
    b.append("<p>Sizes in MiB (2<sup>20</sup> bytes); ratio: raw over ")
        .append(local ? "image" : "stored")
        .append(" bytes; not compressed: raw bytes of blocks the codec could not shrink, stored"
            + " raw; reads and writes: the read and write calls the kernel counted for the"
            + " process. Also: <a href=\"results.csv\">results.csv</a>, "
            + "<a href=\"results.json\">results.json</a>.</p>\n</body></html>\n");
    return b.toString();
  }

  private static String table(Report report, String kind, List<Column> columns,
      List<? extends Figures> figures) {
    StringBuilder b = new StringBuilder("<table class=\"runs " + kind + "\">\n<tr>");
    for (Column c : columns) {
      b.append(c.text() ? "<th class=\"t\">" : "<th>").append(escape(c.header())).append("</th>");
    }
    b.append("</tr>\n");
    for (Figures f : figures) {
      boolean won = f instanceof Average a && !report.marks(a).isEmpty();
      b.append(won ? "<tr class=\"win\">" : "<tr>");
      for (Column c : columns) {
        b.append(c.text() ? "<td class=\"t\">" : "<td>").append(escape(c.value().apply(f)))
            .append("</td>");
      }
      b.append("</tr>\n");
    }
    return b.append("</table>\n").toString();
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }
}

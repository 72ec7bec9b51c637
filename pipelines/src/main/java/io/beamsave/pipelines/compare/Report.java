package io.beamsave.pipelines.compare;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.pipelines.runner.Sizes;
import java.awt.Color;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.CombinedDomainCategoryPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * The results of {@code bench} or {@code compare}: every run and the averages, laid out like
 * IBM's SAVLIB and ICC tables, with the winner at each link speed; as text, {@code
 * results.csv}, {@code results.json}, {@code chart.png} and {@code index.html}.
 */
public final class Report {
  /** The average of one (link speed, strategy, codec) over its runs. */
  public record Average(
      int linkMbps, String strategy, String codec, int runs, double saveSeconds,
      double transferSeconds, double totalSeconds, long rawBytes, long imageBytes,
      long storedBytes) {
    String label() {
      return Strategy.byId(strategy).label() + " / " + codec;
    }
  }

  private final String title;
  private final List<Measurement> rows;
  private final List<Average> averages;

  public Report(String title, List<Measurement> rows) {
    this.title = title;
    this.rows = List.copyOf(rows);
    this.averages = average(rows);
  }

  public List<Measurement> rows() {
    return rows;
  }

  public List<Average> averages() {
    return averages;
  }

  private static List<Average> average(List<Measurement> rows) {
    Map<String, List<Measurement>> groups = new LinkedHashMap<>();
    for (Measurement m : rows) {
      groups.computeIfAbsent(m.linkMbps() + "|" + m.strategy() + "|" + m.codec(), k -> new ArrayList<>())
          .add(m);
    }
    List<Average> out = new ArrayList<>();
    for (List<Measurement> g : groups.values()) {
      Measurement f = g.get(0);
      out.add(new Average(
          f.linkMbps(), f.strategy(), f.codec(), g.size(),
          g.stream().mapToDouble(Measurement::saveSeconds).average().orElse(0),
          g.stream().mapToDouble(Measurement::transferSeconds).average().orElse(0),
          g.stream().mapToDouble(Measurement::totalSeconds).average().orElse(0),
          f.rawBytes(),
          Math.round(g.stream().mapToLong(Measurement::imageBytes).average().orElse(0)),
          Math.round(g.stream().mapToLong(Measurement::storedBytes).average().orElse(0))));
    }
    return out;
  }

  private boolean local() {
    return rows.stream().allMatch(m -> m.strategy().equals(Strategy.LOCAL_SAVE.id()));
  }

  /** The fastest average at each link speed (for {@code bench}: the fastest codec). */
  public Map<Integer, Average> winners() {
    Map<Integer, Average> best = new TreeMap<>();
    for (Average a : averages) {
      best.merge(a.linkMbps(), a, (x, y) -> x.totalSeconds() <= y.totalSeconds() ? x : y);
    }
    return best;
  }

  /** How much of one emulated link the raw transfers used. */
  public record LinkUse(int linkMbps, double linkMBps, double bestTransferMBps) {
    /** Whether the link, rather than the client or the store, set the transfer times. */
    public boolean linkBound() {
      return bestTransferMBps >= linkMBps / 2;
    }
  }

  /**
   * Per emulated link, the fastest raw transfer (the baseline's or a compressed image's; the
   * others also wait for compression) in stored MB/s against the link's rate. Far below it,
   * the link was not what the strategies competed for: the client's cores or the store were.
   */
  public List<LinkUse> linkUse() {
    Map<Integer, Double> best = new TreeMap<>();
    for (Measurement m : rows) {
      boolean raw = m.strategy().equals(Strategy.BASELINE.id())
          || m.strategy().equals(Strategy.COMPRESS_AT_SAVE.id());
      if (raw && m.linkMbps() > 0 && m.transferSeconds() > 0) {
        best.merge(m.linkMbps(), m.storedBytes() / 1e6 / m.transferSeconds(), Math::max);
      }
    }
    List<LinkUse> uses = new ArrayList<>();
    best.forEach((mbps, mbs) -> uses.add(new LinkUse(mbps, mbps / 8.0, mbs)));
    return uses;
  }

  List<String> linkLines() {
    List<String> lines = new ArrayList<>();
    for (LinkUse u : linkUse()) {
      lines.add(String.format(Locale.ROOT, "%s (%.1f MB/s): raw transfers reached %.1f MB/s,"
              + " %.0f %% of it: %s", link(u.linkMbps()), u.linkMBps(), u.bestTransferMBps(),
          100 * u.bestTransferMBps() / u.linkMBps(),
          u.linkBound() ? "the link set the transfer times"
              : "the link was not the limit; the client or the store was"));
    }
    return lines;
  }

  static String link(int mbps) {
    return mbps == 0 ? "unthrottled" : mbps + " Mbit/s";
  }

  /** The tables: every run, then the averages, then the winners. */
  public void print(PrintWriter out) {
    out.println(title);
    out.println();
    String row = "%-12s  %-34s  %-7s  %3s  %8s  %10s  %8s  %11s  %11s  %6s  %8s%n";
    out.printf(Locale.ROOT, row, "link", "strategy", "codec", "run", "save s", "transfer s",
        "total s", "image", "stored", "ratio", "MB/s");
    for (Measurement m : rows) {
      out.printf(Locale.ROOT, row, link(m.linkMbps()), Strategy.byId(m.strategy()).label(),
          m.codec(), m.run(), f2(m.saveSeconds()), f2(m.transferSeconds()), f2(m.totalSeconds()),
          Sizes.human(m.imageBytes()), m.storedBytes() == 0 ? "-" : Sizes.human(m.storedBytes()),
          String.format(Locale.ROOT, "%.2f", m.ratio()),
          String.format(Locale.ROOT, "%.1f", m.rateMbPerSecond()));
    }
    out.println();
    out.println("averages");
    out.printf(Locale.ROOT, row, "link", "strategy", "codec", "n", "save s", "transfer s",
        "total s", "image", "stored", "ratio", "MB/s");
    for (Average a : averages) {
      out.printf(Locale.ROOT, row, link(a.linkMbps()), Strategy.byId(a.strategy()).label(),
          a.codec(), a.runs(), f2(a.saveSeconds()), f2(a.transferSeconds()), f2(a.totalSeconds()),
          Sizes.human(a.imageBytes()), a.storedBytes() == 0 ? "-" : Sizes.human(a.storedBytes()),
          String.format(Locale.ROOT, "%.2f",
              (double) a.rawBytes() / Math.max(1, a.storedBytes() > 0 ? a.storedBytes() : a.imageBytes())),
          String.format(Locale.ROOT, "%.1f", a.rawBytes() / 1e6 / Math.max(a.totalSeconds(), 1e-9)));
    }
    out.println();
    for (String line : winnerLines()) {
      out.println(line);
    }
    for (String line : linkLines()) {
      out.println(line);
    }
    out.flush();
  }

  List<String> winnerLines() {
    List<String> lines = new ArrayList<>();
    for (Average w : winners().values()) {
      lines.add(String.format(Locale.ROOT, "%s %s: %s with %s, %.2f s",
          local() ? "fastest" : "winner at", local() ? "codec" : link(w.linkMbps()),
          Strategy.byId(w.strategy()).label(), w.codec(), w.totalSeconds()));
    }
    return lines;
  }

  /** Writes results.csv, results.json, chart.png and index.html into {@code dir}. */
  public void write(Path dir) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("results.csv"), csv(), StandardCharsets.UTF_8);
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("title", title);
    json.put("runs", rows);
    json.put("averages", averages);
    json.put("winners", winners().values().stream()
        .map(w -> Map.of("linkMbps", w.linkMbps(), "strategy", w.strategy(), "codec", w.codec(),
            "totalSeconds", w.totalSeconds()))
        .collect(Collectors.toList()));
    json.put("links", linkUse().stream()
        .map(u -> Map.of("linkMbps", u.linkMbps(), "linkMBps", u.linkMBps(),
            "bestTransferMBps", u.bestTransferMBps(), "linkBound", u.linkBound()))
        .collect(Collectors.toList()));
    new ObjectMapper().findAndRegisterModules().writerWithDefaultPrettyPrinter()
        .writeValue(dir.resolve("results.json").toFile(), json);
    chart(dir.resolve("chart.png"));
    Files.writeString(dir.resolve("index.html"), html(), StandardCharsets.UTF_8);
  }

  String csv() {
    StringBuilder b = new StringBuilder(
        "link_mbps,strategy,codec,run,save_seconds,transfer_seconds,total_seconds,raw_bytes,"
            + "image_bytes,stored_bytes,object\n");
    for (Measurement m : rows) {
      b.append(String.format(Locale.ROOT, "%d,%s,%s,%d,%.3f,%.3f,%.3f,%d,%d,%d,%s%n",
          m.linkMbps(), m.strategy(), m.codec(), m.run(), m.saveSeconds(), m.transferSeconds(),
          m.totalSeconds(), m.rawBytes(), m.imageBytes(), m.storedBytes(),
          m.object() == null ? "" : m.object()));
    }
    return b.toString();
  }

  /** Average total time per strategy and codec (one bar per link speed) over stored size. */
  void chart(Path png) throws IOException {
    System.setProperty("java.awt.headless", "true");
    DefaultCategoryDataset time = new DefaultCategoryDataset();
    DefaultCategoryDataset size = new DefaultCategoryDataset();
    for (Average a : averages) {
      String category = local() ? a.codec() : a.label();
      time.addValue(a.totalSeconds(), link(a.linkMbps()), category);
      long bytes = a.storedBytes() > 0 ? a.storedBytes() : a.imageBytes();
      size.addValue(bytes / 1048576.0, local() ? "image" : "stored", category);
    }
    CategoryAxis categories = new CategoryAxis(local() ? "codec" : "strategy / codec");
    categories.setCategoryLabelPositions(CategoryLabelPositions.UP_45);
    CombinedDomainCategoryPlot plot = new CombinedDomainCategoryPlot(categories);
    CategoryPlot timePlot = new CategoryPlot(time, null,
        new NumberAxis(local() ? "save seconds (average)" : "total seconds (average)"),
        new BarRenderer());
    CategoryPlot sizePlot = new CategoryPlot(size, null, new NumberAxis("MiB"), new BarRenderer());
    ((BarRenderer) sizePlot.getRenderer()).setSeriesPaint(0, new Color(0x55, 0x88, 0x55));
    for (CategoryPlot p : List.of(timePlot, sizePlot)) {
      BarRenderer r = (BarRenderer) p.getRenderer();
      r.setBarPainter(new StandardBarPainter());
      r.setShadowVisible(false);
    }
    plot.add(timePlot, 2);
    plot.add(sizePlot, 1);
    JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    ChartUtils.saveChartAsPNG(png.toFile(), chart, 1100, 800);
  }

  String html() {
    StringWriter text = new StringWriter();
    print(new PrintWriter(text));
    StringBuilder b = new StringBuilder();
    b.append("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>")
        .append(escape(title)).append("</title>\n<style>body{font-family:sans-serif;margin:2em}"
            + "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;"
            + "text-align:right}td:nth-child(2),td:nth-child(3){text-align:left}"
            + ".win{font-weight:bold}</style></head><body>\n");
    b.append("<h1>").append(escape(title)).append("</h1>\n");
    for (String w : winnerLines()) {
      b.append("<p class=\"win\">").append(escape(w)).append("</p>\n");
    }
    for (String u : linkLines()) {
      b.append("<p>").append(escape(u)).append("</p>\n");
    }
    b.append("<img src=\"chart.png\" alt=\"total time and stored size by strategy and codec\">\n");
    b.append("<h2>Averages</h2>\n").append(table(averages.stream().map(a -> List.of(
        link(a.linkMbps()), Strategy.byId(a.strategy()).label(), a.codec(),
        Integer.toString(a.runs()), f2(a.saveSeconds()), f2(a.transferSeconds()),
        f2(a.totalSeconds()), Long.toString(a.imageBytes()), Long.toString(a.storedBytes())))
        .toList(), "runs"));
    b.append("<h2>Every run</h2>\n").append(table(rows.stream().map(m -> List.of(
        link(m.linkMbps()), Strategy.byId(m.strategy()).label(), m.codec(),
        Integer.toString(m.run()), f2(m.saveSeconds()), f2(m.transferSeconds()),
        f2(m.totalSeconds()), Long.toString(m.imageBytes()), Long.toString(m.storedBytes())))
        .toList(), "run"));
    b.append("<p>Also: <a href=\"results.csv\">results.csv</a>, "
        + "<a href=\"results.json\">results.json</a>.</p>\n</body></html>\n");
    return b.toString();
  }

  private static String table(List<List<String>> cells, String runHeader) {
    StringBuilder b = new StringBuilder("<table>\n<tr>");
    for (String h : List.of("link", "strategy", "codec", runHeader, "save s", "transfer s",
        "total s", "image bytes", "stored bytes")) {
      b.append("<th>").append(h).append("</th>");
    }
    b.append("</tr>\n");
    for (List<String> r : cells) {
      b.append("<tr>");
      r.forEach(c -> b.append("<td>").append(escape(c)).append("</td>"));
      b.append("</tr>\n");
    }
    return b.append("</table>\n").toString();
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  private static String f2(double d) {
    return String.format(Locale.ROOT, "%.2f", d);
  }
}

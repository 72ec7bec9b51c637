package io.beamsave.pipelines.compare;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * The results of {@code bench} or {@code compare}: where and when they were measured, every run
 * and the averages, laid out like IBM's SAVLIB and ICC tables (sizes in MiB, with the ratio),
 * and the verdicts: the winner at each link speed, or for {@code bench} the fastest, the
 * smallest and the best codec at each target link speed; as text, {@code results.csv}, {@code
 * results.json}, {@code chart.png} and {@code index.html}.
 */
public final class Report {
  /** The average of one (link speed, strategy, codec) over its runs. */
  public record Average(
      int linkMbps, String strategy, String codec, int runs, double saveSeconds,
      double transferSeconds, double totalSeconds, long rawBytes, long imageBytes,
      long storedBytes, long bytesStoredRaw, ProcessUsage saveUsage, double restoreSeconds,
      ProcessUsage restoreUsage)
      implements Figures {
    String label() {
      return Strategy.byId(strategy).label() + " / " + codec;
    }
  }

  /**
   * A codec (and strategy) that is best for one target, by {@code value} in {@code unit}, and
   * the sentence that says so.
   */
  public record Verdict(
      String target, String strategy, String codec, double value, String unit, String line) {}

  private static final double MIB = 1024.0 * 1024;
  /** Below this ratio a codec saved nothing worth naming: it did not compress the data. */
  private static final double COMPRESSES = 1.01;

  private final String title;
  private final ReportHeader header;
  private final List<Measurement> rows;
  private final List<Average> averages;
  private final List<Integer> targetLinks;

  /**
   * {@code targetLinks}: for {@code bench}, the link speeds (Mbit/s) to name the best codec at,
   * from each codec's save time and image size; {@code compare} measures its links instead.
   */
  public Report(
      String title, ReportHeader header, List<Measurement> rows, List<Integer> targetLinks) {
    this.title = title;
    this.header = header;
    this.rows = List.copyOf(rows);
    this.averages = average(rows);
    this.targetLinks = List.copyOf(targetLinks);
  }

  public List<Measurement> rows() {
    return rows;
  }

  public List<Average> averages() {
    return averages;
  }

  public ReportHeader header() {
    return header;
  }

  private static List<Average> average(List<Measurement> rows) {
    Map<String, List<Measurement>> groups = new LinkedHashMap<>();
    for (Measurement m : rows) {
      groups.computeIfAbsent(m.linkMbps() + "|" + m.strategy() + "|" + m.codec(),
          k -> new ArrayList<>()).add(m);
    }
    List<Average> out = new ArrayList<>();
    for (List<Measurement> g : groups.values()) {
      Measurement f = g.get(0);
      out.add(new Average(
          f.linkMbps(), f.strategy(), f.codec(), g.size(),
          mean(g, Measurement::saveSeconds),
          mean(g, Measurement::transferSeconds),
          mean(g, Measurement::totalSeconds),
          f.rawBytes(),
          Math.round(mean(g, Measurement::imageBytes)),
          Math.round(mean(g, Measurement::storedBytes)),
          Math.round(mean(g, Measurement::bytesStoredRaw)),
          ProcessUsage.average(g.stream().map(Measurement::saveUsage).toList()),
          mean(g, Measurement::restoreSeconds),
          ProcessUsage.average(g.stream().map(Measurement::restoreUsage).toList())));
    }
    return out;
  }

  private static double mean(List<Measurement> g, ToDoubleFunction<Measurement> f) {
    return g.stream().mapToDouble(f).average().orElse(0);
  }

  private boolean local() {
    return rows.stream().allMatch(m -> m.strategy().equals(Strategy.LOCAL_SAVE.id()));
  }

  /** The fastest average at each link speed (for {@code bench}: the fastest save). */
  public Map<Integer, Average> winners() {
    Map<Integer, Average> best = new TreeMap<>();
    for (Average a : averages) {
      best.merge(a.linkMbps(), a, (x, y) -> x.totalSeconds() <= y.totalSeconds() ? x : y);
    }
    return best;
  }

  /**
   * What the operator came for. For {@code compare}, the winner at each measured link speed.
   * For {@code bench}: the fastest save (and, when that one stores the data raw, the fastest
   * that compresses), the fastest restore, the smallest image, and at each target link the
   * codec whose save followed by sending its image would finish first.
   */
  public List<Verdict> verdicts() {
    List<Verdict> v = new ArrayList<>();
    if (averages.isEmpty()) {
      return v;
    }
    if (!local()) {
      for (Average w : winners().values()) {
        v.add(new Verdict("winner at " + link(w.linkMbps()), w.strategy(), w.codec(),
            w.totalSeconds(), "s", String.format(Locale.ROOT, "winner at %s: %s with %s, %.2f s",
                link(w.linkMbps()), Strategy.byId(w.strategy()).label(), w.codec(),
                w.totalSeconds())));
      }
      return v;
    }
    Average fastest = lowest(averages, Average::saveSeconds);
    String line = String.format(Locale.ROOT, "fastest save: %s, %.2f s, ratio %.2f",
        fastest.codec(), fastest.saveSeconds(), fastest.ratio());
    List<Average> compressing =
        averages.stream().filter(a -> a.ratio() >= COMPRESSES).toList();
    if (fastest.ratio() < COMPRESSES && !compressing.isEmpty()) {
      Average c = lowest(compressing, Average::saveSeconds);
      line += String.format(Locale.ROOT, "; fastest that compresses: %s, %.2f s, ratio %.2f",
          c.codec(), c.saveSeconds(), c.ratio());
    } else if (compressing.isEmpty()) {
      line += "; no codec compressed this data: store it raw";
    }
    v.add(new Verdict("fastest save", fastest.strategy(), fastest.codec(), fastest.saveSeconds(),
        "s", line));
    if (averages.stream().anyMatch(a -> a.restoreSeconds() > 0)) {
      Average r = lowest(averages, Average::restoreSeconds);
      v.add(new Verdict("fastest restore", r.strategy(), r.codec(), r.restoreSeconds(), "s",
          String.format(Locale.ROOT, "fastest restore: %s, %.2f s (%s s CPU)", r.codec(),
              r.restoreSeconds(), cpu(r.restoreUsage()))));
    }
    Average small = lowest(averages, Average::imageBytes);
    v.add(new Verdict("smallest image", small.strategy(), small.codec(), small.imageBytes() / MIB,
        "MiB", String.format(Locale.ROOT, "smallest image: %s, %.2f MiB, ratio %.2f",
            small.codec(), small.imageBytes() / MIB, small.ratio())));
    for (int mbps : targetLinks) {
      Average b = lowest(averages, a -> saveAndSend(a, mbps));
      String how = mbps == 0 ? "no transfer time" : String.format(Locale.ROOT,
          "%.2f s save + %.2f s to send %.2f MiB", b.saveSeconds(), sendSeconds(b, mbps),
          b.imageBytes() / MIB);
      v.add(new Verdict("best at " + link(mbps), b.strategy(), b.codec(), saveAndSend(b, mbps),
          "s", String.format(Locale.ROOT, "best at %s: %s, %.2f s (%s)", link(mbps), b.codec(),
              saveAndSend(b, mbps), how)));
    }
    return v;
  }

  private static <T> T lowest(List<T> all, ToDoubleFunction<T> by) {
    return all.stream().min(Comparator.comparingDouble(by)).orElseThrow();
  }

  /** Seconds to send a bench image over {@code mbps}: computed from its size, not measured. */
  static double sendSeconds(Figures a, int mbps) {
    return mbps == 0 ? 0 : a.imageBytes() * 8.0 / (mbps * 1e6);
  }

  /** A save, then its image sent over {@code mbps}: compress at save + raw transfer. */
  static double saveAndSend(Figures a, int mbps) {
    return a.saveSeconds() + sendSeconds(a, mbps);
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

  /** One column of the tables, for a run and for an average alike. */
  private record Column(String header, boolean text, Function<Figures, String> value) {}

  private List<Column> columns(boolean averaged) {
    List<Column> c = new ArrayList<>();
    if (!local()) {
      c.add(new Column("link", true, f -> link(f.linkMbps())));
      c.add(new Column("strategy", true, f -> Strategy.byId(f.strategy()).label()));
    }
    c.add(new Column("codec", true, Figures::codec));
    c.add(new Column(averaged ? "runs" : "run", false, f -> Integer.toString(
        f instanceof Average a ? a.runs() : ((Measurement) f).run())));
    c.add(new Column("save s", false, f -> f2(f.saveSeconds())));
    c.add(new Column("save CPU s", false, f -> cpu(f.saveUsage())));
    if (local()) {
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
    if (local()) {
      c.add(new Column("save reads", false, f -> calls(f.saveUsage(), true)));
      c.add(new Column("save writes", false, f -> calls(f.saveUsage(), false)));
      c.add(new Column("restore reads", false, f -> calls(f.restoreUsage(), true)));
      c.add(new Column("restore writes", false, f -> calls(f.restoreUsage(), false)));
    }
    c.add(new Column(local() ? "save MB/s" : "MB/s", false,
        f -> String.format(Locale.ROOT, "%.1f", f.rateMbPerSecond())));
    if (averaged) {
      c.add(new Column("best", true, f -> marks((Average) f)));
    }
    return c;
  }

  /** The verdicts {@code a} won, e.g. "★ fastest save, best at 100 Mbit/s"; or "". */
  String marks(Average a) {
    List<String> won = verdicts().stream()
        .filter(v -> v.codec().equals(a.codec()) && v.strategy().equals(a.strategy())
            && (local() || v.target().equals("winner at " + link(a.linkMbps()))))
        .map(Verdict::target).toList();
    return won.isEmpty() ? "" : "★ " + String.join(", ", won);
  }

  private static List<List<String>> cells(List<Column> columns, List<? extends Figures> rows) {
    List<List<String>> out = new ArrayList<>();
    for (Figures f : rows) {
      out.add(columns.stream().map(c -> c.value().apply(f)).toList());
    }
    return out;
  }

  /** The header, every run, the averages, then the verdicts. */
  public void print(PrintWriter out) {
    out.println(title);
    header.lines().forEach(out::println);
    out.println();
    text(out, columns(false), cells(columns(false), rows));
    out.println();
    out.println("averages");
    text(out, columns(true), cells(columns(true), averages));
    out.println();
    for (Verdict v : verdicts()) {
      out.println(v.line());
    }
    for (String line : linkLines()) {
      out.println(line);
    }
    if (local() && !targetLinks.isEmpty()) {
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

  /** The verdict lines (kept for the callers that print only them). */
  List<String> winnerLines() {
    return verdicts().stream().map(Verdict::line).toList();
  }

  /** Writes results.csv, results.json, chart.png and index.html into {@code dir}. */
  public void write(Path dir) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("results.csv"), csv(), StandardCharsets.UTF_8);
    new ObjectMapper().findAndRegisterModules().writerWithDefaultPrettyPrinter()
        .writeValue(dir.resolve("results.json").toFile(), json());
    Chart.write(chartTitle(), panels(), local() ? 2 : 1, dir.resolve("chart.png"));
    Files.writeString(dir.resolve("index.html"), html(), StandardCharsets.UTF_8);
  }

  Map<String, Object> json() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("title", title);
    Map<String, Object> h = new LinkedHashMap<>();
    h.put("version", header.version());
    h.put("dateUtc", header.date().toString());
    h.put("library", header.library());
    h.put("cores", header.cores());
    h.put("memoryBytes", header.memoryBytes());
    h.put("system", header.os());
    h.put("java", header.java());
    h.put("runner", header.runner());
    json.put("header", h);
    json.put("verdicts", verdicts());
    json.put("winners", winners().values().stream()
        .map(w -> Map.of("linkMbps", w.linkMbps(), "strategy", w.strategy(), "codec", w.codec(),
            "totalSeconds", w.totalSeconds()))
        .collect(Collectors.toList()));
    json.put("links", linkUse().stream()
        .map(u -> Map.of("linkMbps", u.linkMbps(), "linkMBps", u.linkMBps(),
            "bestTransferMBps", u.bestTransferMBps(), "linkBound", u.linkBound()))
        .collect(Collectors.toList()));
    json.put("runs", rows);
    json.put("averages", averages);
    return json;
  }

  String csv() {
    StringBuilder b = new StringBuilder(
        "link_mbps,strategy,codec,run,save_seconds,save_cpu_seconds,transfer_seconds,"
            + "total_seconds,restore_seconds,restore_cpu_seconds,raw_bytes,image_bytes,"
            + "stored_bytes,ratio,bytes_stored_raw,save_read_calls,save_write_calls,"
            + "save_read_bytes,save_write_bytes,restore_read_calls,restore_write_calls,"
            + "restore_read_bytes,restore_write_bytes,object\n");
    for (Measurement m : rows) {
      b.append(String.format(Locale.ROOT, "%d,%s,%s,%d,%.3f,%s,%.3f,%.3f,%.3f,%s,%d,%d,%d,%.3f,%d,",
          m.linkMbps(), m.strategy(), m.codec(), m.run(), m.saveSeconds(),
          csvCpu(m.saveUsage()), m.transferSeconds(), m.totalSeconds(), m.restoreSeconds(),
          csvCpu(m.restoreUsage()), m.rawBytes(), m.imageBytes(), m.storedBytes(), m.ratio(),
          m.bytesStoredRaw()));
      b.append(csvIo(m.saveUsage())).append(',').append(csvIo(m.restoreUsage())).append(',')
          .append(m.object() == null ? "" : m.object()).append('\n');
    }
    return b.toString();
  }

  private static String csvCpu(ProcessUsage u) {
    return u == null || u.cpuSeconds() < 0 ? ""
        : String.format(Locale.ROOT, "%.3f", u.cpuSeconds());
  }

  private static String csvIo(ProcessUsage u) {
    if (u == null) {
      return ",,,";
    }
    return List.of(u.readCalls(), u.writeCalls(), u.readBytes(), u.writeBytes()).stream()
        .map(v -> v < 0 ? "" : Long.toString(v)).collect(Collectors.joining(","));
  }

  private List<String> chartTitle() {
    return List.of(title, header.fields().entrySet().stream()
        .filter(e -> !e.getKey().equals("library") && !e.getKey().equals("system"))
        .map(e -> e.getKey().equals("beamsave") ? "beamsave " + e.getValue() : e.getValue())
        .collect(Collectors.joining(" · ")));
  }

  /**
   * The chart's panels. {@code compare}: one per link speed, the total time of every strategy
   * and codec. {@code bench}: save and restore, elapsed and CPU; the image size; and one per
   * target link speed, the save plus sending the image.
   */
  List<Chart.Panel> panels() {
    List<Chart.Panel> panels = new ArrayList<>();
    if (!local()) {
      Map<Integer, List<Average>> byLink = new TreeMap<>();
      averages.forEach(a -> byLink.computeIfAbsent(a.linkMbps(), k -> new ArrayList<>()).add(a));
      byLink.forEach((mbps, as) -> panels.add(Chart.Panel.lowestWins(
          "at " + link(mbps) + ": start of the save to the stored object", "s",
          as.stream().map(a -> new Chart.Bar(a.label(), a.totalSeconds())).toList())));
      return panels;
    }
    panels.add(bench("save, elapsed", "s", Average::saveSeconds));
    if (averages.stream().allMatch(a -> a.saveUsage() != null)) {
      panels.add(bench("save, CPU", "s", a -> a.saveUsage().cpuSeconds()));
    }
    if (averages.stream().allMatch(a -> a.restoreUsage() != null)) {
      panels.add(bench("restore, elapsed", "s", Average::restoreSeconds));
      panels.add(bench("restore, CPU", "s", a -> a.restoreUsage().cpuSeconds()));
    }
    panels.add(bench("image size", "MiB", a -> a.imageBytes() / MIB));
    for (int mbps : targetLinks) {
      panels.add(bench("save + send at " + link(mbps) + " (computed)", "s",
          a -> saveAndSend(a, mbps)));
    }
    return panels;
  }

  private Chart.Panel bench(String title, String unit, ToDoubleFunction<Average> value) {
    return Chart.Panel.lowestWins(title, unit,
        averages.stream().map(a -> new Chart.Bar(a.codec(), value.applyAsDouble(a))).toList());
  }

  String html() {
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
    header.fields().forEach((k, v) -> b.append("<tr><th>").append(escape(k))
        .append("</th><td class=\"t\">").append(escape(v)).append("</td></tr>\n"));
    b.append("</table>\n<h2>Verdict</h2>\n<ul>\n");
    for (Verdict v : verdicts()) {
      b.append("<li class=\"win\">★ ").append(escape(v.line())).append("</li>\n");
    }
    b.append("</ul>\n");
    for (String u : linkLines()) {
      b.append("<p>").append(escape(u)).append("</p>\n");
    }
    if (local() && !targetLinks.isEmpty()) {
      b.append("<p>Best at a link: the save time plus the image's size over the link's rate,"
          + " computed; <code>compare</code> measures real uploads.</p>\n");
    }
    b.append("<img src=\"chart.png\" alt=\"one panel per ")
        .append(local() ? "measure and target link speed" : "link speed")
        .append(", the best of each marked\">\n");
    b.append("<h2>Averages</h2>\n").append(table("averages", columns(true), averages));
    b.append("<h2>Every run</h2>\n").append(table("runs", columns(false), rows));
    b.append("<p>Sizes in MiB (2<sup>20</sup> bytes); ratio: raw over ")
        .append(local() ? "image" : "stored")
        .append(" bytes; not compressed: raw bytes of blocks the codec could not shrink, stored"
            + " raw; reads and writes: the read and write calls the kernel counted for the"
            + " process. Also: <a href=\"results.csv\">results.csv</a>, "
            + "<a href=\"results.json\">results.json</a>.</p>\n</body></html>\n");
    return b.toString();
  }

  private String table(String kind, List<Column> columns, List<? extends Figures> figures) {
    StringBuilder b = new StringBuilder("<table class=\"runs " + kind + "\">\n<tr>");
    for (Column c : columns) {
      b.append(c.text() ? "<th class=\"t\">" : "<th>").append(escape(c.header())).append("</th>");
    }
    b.append("</tr>\n");
    for (Figures f : figures) {
      boolean won = f instanceof Average a && !marks(a).isEmpty();
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

  private static String f2(double d) {
    return String.format(Locale.ROOT, "%.2f", d);
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.2f", bytes / MIB);
  }

  private static String cpu(ProcessUsage u) {
    return u == null || u.cpuSeconds() < 0 ? "-" : f2(u.cpuSeconds());
  }

  private static String calls(ProcessUsage u, boolean reads) {
    long v = u == null ? -1 : reads ? u.readCalls() : u.writeCalls();
    return v < 0 ? "-" : Long.toString(v);
  }
}

package io.beamsave.pipelines.compare;

import java.io.IOException;
import java.io.PrintWriter;
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
import java.util.function.ToDoubleFunction;

/**
 * The results of {@code bench} or {@code compare}: where and when they were measured, every run
 * and the averages, laid out like IBM's SAVLIB and ICC tables (sizes in MiB, with the ratio),
 * and the verdicts: the winner at each link speed, or for {@code bench} the fastest, the
 * smallest and the best codec at each target link speed; as text, {@code results.csv}, {@code
 * results.json}, {@code chart.png} and {@code index.html}.
 *
 * <p>This class holds the runs and what every format shows of them: the averages, the verdicts
 * and the links' use. {@link TextReport}, {@link CsvReport}, {@link JsonReport}, {@link
 * ChartReport} and {@link HtmlReport} lay them out, the tables by {@link ReportColumns}.
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

  static final double MIB = 1024.0 * 1024;
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

  String title() {
    return title;
  }

  /** For {@code bench}, the link speeds (Mbit/s) to name the best codec at; else empty. */
  List<Integer> targetLinks() {
    return targetLinks;
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

  /** Whether every run saved to a local image: a {@code bench}, not a {@code compare}. */
  boolean local() {
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
        Strategy s = Strategy.byId(w.strategy());
        v.add(new Verdict("winner at " + link(w.linkMbps()), w.strategy(), w.codec(),
            w.totalSeconds(), "s", String.format(Locale.ROOT, "winner at %s: %s with %s, %.2f s;"
                + " apply with: %s%s", link(w.linkMbps()), s.label(), w.codec(),
                w.totalSeconds(), s.command(w.codec()),
                s.caveat() == null ? "" : " (note: " + s.caveat() + ")")));
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
              r.restoreSeconds(), ReportColumns.cpu(r.restoreUsage()))));
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
    /**
     * Whether the link, rather than the client or the store, set the transfer times: the
     * fastest transfer used at least {@link #BOUND} of it.
     */
    public boolean linkBound() {
      return bestTransferMBps >= linkMBps * BOUND;
    }

    /** The share of a link a transfer that the link limits reaches, at least. */
    static final double BOUND = 0.8;
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
              : u.bestTransferMBps() >= u.linkMBps() / 2
                  ? "the link and the client or the store set them together"
                  : "the link was not the limit; the client or the store was"));
    }
    return lines;
  }

  static String link(int mbps) {
    return mbps == 0 ? "unthrottled" : mbps + " Mbit/s";
  }

  /** The verdicts {@code a} won, e.g. "★ fastest save, best at 100 Mbit/s"; or "". */
  String marks(Average a) {
    List<String> won = verdicts().stream()
        .filter(v -> v.codec().equals(a.codec()) && v.strategy().equals(a.strategy())
            && (local() || v.target().equals("winner at " + link(a.linkMbps()))))
        .map(Verdict::target).toList();
    return won.isEmpty() ? "" : "★ " + String.join(", ", won);
  }

  /** The header, every run, the averages, then the verdicts. */
  public void print(PrintWriter out) {
    TextReport.print(this, out);
  }

  /** The verdict lines (kept for the callers that print only them). */
  List<String> winnerLines() {
    return verdicts().stream().map(Verdict::line).toList();
  }

  /** Writes results.csv, results.json, chart.png and index.html into {@code dir}. */
  public void write(Path dir) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("results.csv"), CsvReport.text(this), StandardCharsets.UTF_8);
    JsonReport.write(this, dir.resolve("results.json"));
    ChartReport.write(this, dir.resolve("chart.png"));
    Files.writeString(dir.resolve("index.html"), HtmlReport.page(this), StandardCharsets.UTF_8);
  }
}

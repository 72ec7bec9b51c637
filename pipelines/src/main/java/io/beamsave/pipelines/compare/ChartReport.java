package io.beamsave.pipelines.compare;

import io.beamsave.pipelines.compare.Report.Average;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * A report as {@code chart.png}: which panels it has and what each compares, drawn by {@link
 * Chart}. Static methods only.
 */
final class ChartReport {
  private ChartReport() {}

  /** Draws {@code report}'s panels, two columns of them for {@code bench}, into {@code file}. */
  static void write(Report report, Path file) throws IOException {
    Chart.write(title(report), panels(report), report.local() ? 2 : 1, file);
  }

  private static List<String> title(Report report) {
    return List.of(report.title(), report.header().fields().entrySet().stream()
        .filter(e -> !e.getKey().equals("library") && !e.getKey().equals("system"))
        .map(e -> e.getKey().equals("beamsave") ? "beamsave " + e.getValue() : e.getValue())
        .collect(Collectors.joining(" · ")));
  }

  /**
   * The chart's panels. {@code compare}: one per link speed, the total time of every strategy
   * and codec. {@code bench}: save and restore, elapsed and CPU; the image size; and one per
   * target link speed, the save plus sending the image.
   */
  static List<Chart.Panel> panels(Report report) {
    List<Average> averages = report.averages();
    List<Chart.Panel> panels = new ArrayList<>();
    if (!report.local()) {
      Map<Integer, List<Average>> byLink = new TreeMap<>();
      averages.forEach(a -> byLink.computeIfAbsent(a.linkMbps(), k -> new ArrayList<>()).add(a));
      byLink.forEach((mbps, as) -> panels.add(Chart.Panel.lowestWins(
          "at " + Report.link(mbps) + ": start of the save to the stored object", "s",
          as.stream().map(a -> new Chart.Bar(a.label(), a.totalSeconds())).toList())));
      return panels;
    }
    panels.add(bench(averages, "save, elapsed", "s", Average::saveSeconds));
    if (averages.stream().allMatch(a -> a.saveUsage() != null)) {
      panels.add(bench(averages, "save, CPU", "s", a -> a.saveUsage().cpuSeconds()));
    }
    if (averages.stream().allMatch(a -> a.restoreUsage() != null)) {
      panels.add(bench(averages, "restore, elapsed", "s", Average::restoreSeconds));
      panels.add(bench(averages, "restore, CPU", "s", a -> a.restoreUsage().cpuSeconds()));
    }
    panels.add(bench(averages, "image size", "MiB", a -> a.imageBytes() / Report.MIB));
    for (int mbps : report.targetLinks()) {
      panels.add(bench(averages, "save + send at " + Report.link(mbps) + " (computed)", "s",
          a -> Report.saveAndSend(a, mbps)));
    }
    return panels;
  }

  private static Chart.Panel bench(List<Average> averages, String title, String unit,
      ToDoubleFunction<Average> value) {
    return Chart.Panel.lowestWins(title, unit,
        averages.stream().map(a -> new Chart.Bar(a.codec(), value.applyAsDouble(a))).toList());
  }
}

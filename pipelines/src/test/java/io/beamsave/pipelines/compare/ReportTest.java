package io.beamsave.pipelines.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report of given measurements: its header, tables, verdicts, chart panels and page. */
class ReportTest {
  static final long MIB = 1 << 20;
  static final ReportHeader HEADER = new ReportHeader("9.8.7", Instant.parse(
      "2025-03-04T05:06:07Z"), "/data/lib", 6, 16L << 30, "Linux 6.1 amd64", "OpenJDK 17",
      "DirectRunner");

  static ProcessUsage usage(double cpu, long calls) {
    return new ProcessUsage(cpu, calls, calls / 2, 0, 0);
  }

  /** 100 MiB: none fast and big, lz4 quick, xz slow and small. */
  static List<Measurement> bench() {
    return List.of(
        Measurement.local("none", 1, 1.0, 100 * MIB, 100 * MIB, 0, usage(1.2, 900), 0.8,
            usage(0.9, 800)),
        Measurement.local("lz4", 1, 1.5, 100 * MIB, 50 * MIB, 5 * MIB, usage(2.0, 900), 0.6,
            usage(0.7, 700)),
        Measurement.local("xz:6", 1, 20.0, 100 * MIB, 20 * MIB, 0, usage(38.0, 900), 3.0,
            usage(5.5, 600)));
  }

  @Test
  void benchVerdictNamesTheFastestTheSmallestAndTheBestAtEachLink() {
    Report r = new Report("bench", HEADER, bench(), List.of(10, 1000));
    assertThat(r.winnerLines()).containsExactly(
        "fastest save: none, 1.00 s, ratio 1.00; fastest that compresses: lz4, 1.50 s,"
            + " ratio 2.00",
        "fastest restore: lz4, 0.60 s (0.70 s CPU)",
        "smallest image: xz:6, 20.00 MiB, ratio 5.00",
        // 10 Mbit/s: xz 20 + 16.8 s beats lz4 1.5 + 41.9 s; at 1000, none's 1 + 0.84 s wins.
        "best at 10 Mbit/s: xz:6, 36.78 s (20.00 s save + 16.78 s to send 20.00 MiB)",
        "best at 1000 Mbit/s: none, 1.84 s (1.00 s save + 0.84 s to send 100.00 MiB)");
  }

  @Test
  void tablesShowMegabytesRatiosCpuAndCallsUnderTheHeader() {
    Report r = new Report("bench", HEADER, bench(), List.of(100));
    StringWriter text = new StringWriter();
    r.print(new PrintWriter(text));
    String[] lines = text.toString().split("\n");
    assertThat(lines[0]).isEqualTo("bench");
    assertThat(text.toString()).contains("beamsave: 9.8.7").contains("2025-03-04 05:06:07 UTC")
        .contains("6 cores, 16.0 GiB memory").contains("library:  /data/lib");
    String columns = List.of(lines).stream().filter(l -> l.startsWith("codec")).findFirst()
        .orElseThrow();
    assertThat(columns.split("  +")).containsSubsequence("codec", "run", "save s",
        "save CPU s", "restore s", "restore CPU s", "image MiB", "ratio", "raw MiB",
        "not compressed MiB", "save reads", "save writes", "restore reads", "restore writes");
    String lz4 = List.of(lines).stream().filter(l -> l.startsWith("lz4 ")).findFirst()
        .orElseThrow();
    assertThat(lz4.split(" +")).containsSubsequence("lz4", "1", "1.50", "2.00", "0.60", "0.70",
        "50.00", "2.00", "100.00", "5.00", "900", "450", "700", "350");
    assertThat(text.toString()).doesNotContain(Long.toString(50 * MIB));
    // The averages say which codec won what.
    String lz4Average = List.of(lines).stream().filter(l -> l.startsWith("lz4 ")).skip(1)
        .findFirst().orElseThrow();
    assertThat(lz4Average).endsWith("★ fastest restore, best at 100 Mbit/s");
  }

  @Test
  void benchChartHasAPanelPerMeasureAndTargetLinkEachWithItsWinner() {
    Report r = new Report("bench", HEADER, bench(), List.of(10, 1000));
    List<Chart.Panel> panels = ChartReport.panels(r);
    assertThat(panels).extracting(Chart.Panel::title).containsExactly("save, elapsed",
        "save, CPU", "restore, elapsed", "restore, CPU", "image size",
        "save + send at 10 Mbit/s (computed)", "save + send at 1000 Mbit/s (computed)");
    assertThat(panels).extracting(p -> p.best().label())
        .containsExactly("none", "none", "lz4", "lz4", "xz:6", "xz:6", "none");
  }

  static Measurement upload(int link, Strategy s, String codec, double save, double transfer,
      long stored) {
    return Measurement.sequential(link, s.id(), codec, 1, save, transfer, 100 * MIB, stored,
        stored, "s3://b/x", 0, usage(save, 10));
  }

  @Test
  void compareChartHasOnePanelPerLinkWithItsOwnWinnerAndThePageMarksIt(@TempDir Path dir)
      throws Exception {
    // The slow link's baseline is 80 s: on a shared scale the fast link's bars would vanish.
    List<Measurement> rows = List.of(
        upload(10, Strategy.BASELINE, "none", 1, 80, 100 * MIB),
        upload(10, Strategy.COMPRESS_AT_SAVE, "zstd:3", 2, 30, 40 * MIB),
        upload(1000, Strategy.BASELINE, "none", 1, 0.9, 100 * MIB),
        upload(1000, Strategy.COMPRESS_AT_SAVE, "zstd:3", 2, 0.3, 40 * MIB));
    Report r = new Report("compare", HEADER, rows, List.of());
    List<Chart.Panel> panels = ChartReport.panels(r);
    assertThat(panels).hasSize(2);
    assertThat(panels.get(0).title()).startsWith("at 10 Mbit/s");
    assertThat(panels.get(0).best().label()).isEqualTo(
        "compress at save + raw transfer / zstd:3");
    assertThat(panels.get(1).title()).startsWith("at 1000 Mbit/s");
    assertThat(panels.get(1).best().label()).isEqualTo("raw save + raw transfer / none");
    // Each panel's axis is set by its own bars only.
    assertThat(Chart.chart(panels.get(1)).getCategoryPlot().getRangeAxis().getUpperBound())
        .isLessThan(10);

    r.write(dir);
    String html = Files.readString(dir.resolve("index.html"));
    assertThat(html).contains("<th>beamsave</th><td class=\"t\">9.8.7</td>")
        .contains("2025-03-04 05:06:07 UTC").contains("6 cores, 16.0 GiB memory")
        .contains("<th>stored MiB</th>").contains("<th>ratio</th>")
        .contains("<li class=\"win\">★ winner at 10 Mbit/s: compress at save + raw transfer"
            + " with zstd:3, 32.00 s; apply with: beamsave save --codec zstd:3 --image DATA.bsave"
            + " ...; beamsave upload --from DATA.bsave --to s3://BUCKET/KEY</li>")
        .contains("<img src=\"chart.png\"");
    assertThat(html.split("<tr class=\"win\">", -1)).hasSize(3);
    assertThat(html).contains("<td>40.00</td>").doesNotContain(Long.toString(40 * MIB));
    assertThat(Files.readString(dir.resolve("results.json"))).contains("\"version\" : \"9.8.7\"")
        .contains("\"cores\" : 6").contains("\"dateUtc\" : \"2025-03-04T05:06:07Z\"");
    assertThat(Files.readAllLines(dir.resolve("results.csv")).get(0))
        .contains("save_cpu_seconds").contains("ratio");
    byte[] png = Files.readAllBytes(dir.resolve("chart.png"));
    assertThat(new String(png, 1, 3, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("PNG");
  }

  @Test
  void linkLinesSayWhatSetTheTimesAndATransferCompressedWinnerSaysWhatItCosts() {
    // 100 Mbit/s is 12.5 MB/s: 104.9 MB in 9 s is 93 %, in 20 s 42 %; 1000 Mbit/s: 55 %.
    List<Measurement> rows = List.of(
        upload(100, Strategy.BASELINE, "none", 1, 9, 100 * MIB),
        upload(100, Strategy.COMPRESS_IN_TRANSFER, "zstd:3", 1, 3, 40 * MIB),
        upload(1000, Strategy.BASELINE, "none", 1, 1.526, 100 * MIB),
        upload(1000, Strategy.COMPRESS_AT_SAVE, "zstd:3", 2, 0.9, 40 * MIB));
    Report r = new Report("compare", HEADER, rows, List.of());
    assertThat(r.linkLines()).containsExactly(
        "100 Mbit/s (12.5 MB/s): raw transfers reached 11.7 MB/s, 93 % of it: the link set"
            + " the transfer times",
        "1000 Mbit/s (125.0 MB/s): raw transfers reached 68.7 MB/s, 55 % of it: the link and"
            + " the client or the store set them together");
    assertThat(r.winnerLines()).anySatisfy(l -> assertThat(l)
        .startsWith("winner at 100 Mbit/s: raw save + compress in transfer with zstd:3")
        .contains("apply with: beamsave save --codec none --image DATA.bsave ...; beamsave"
            + " upload --from DATA.bsave --to s3://BUCKET/KEY --transfer-codec zstd:3")
        .contains("note: the object is stored transfer-compressed: list, verify, restore and"
            + " mount download it whole"));
  }
}

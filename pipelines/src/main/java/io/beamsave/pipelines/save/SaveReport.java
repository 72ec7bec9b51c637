package io.beamsave.pipelines.save;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.save.ImageSummary;
import io.beamsave.transforms.walk.Unreadable;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The figures of a save, as the IBM i SAVLIB comparison lays them out (codec, duration, size,
 * ratio, rate) and as one JSON object for scripts.
 */
public final class SaveReport {
  static final String[] STAGES = {"list", "plan", "compress", "assemble"};

  private final SavePipeline.Outcome outcome;

  public SaveReport(SavePipeline.Outcome outcome) {
    this.outcome = outcome;
  }

  public long rawBytes() {
    return outcome.images().stream().mapToLong(ImageSummary::rawBytes).sum();
  }

  public long imageBytes() {
    return outcome.images().stream().mapToLong(ImageSummary::imageBytes).sum();
  }

  public long files() {
    return outcome.images().stream().mapToLong(ImageSummary::files).sum();
  }

  /** Entries {@code --skip-unreadable} skipped, in all images. */
  public long filesUnreadable() {
    return outcome.images().stream().mapToLong(s -> s.unreadable().size()).sum();
  }

  /** Paths {@code --files-from} listed that a library does not hold, counted per library. */
  public long listedMissing() {
    return outcome.images().stream().mapToLong(s -> s.missing().size()).sum();
  }

  /** The line that says how much was skipped, or null when nothing was. */
  public String unreadableLine() {
    long n = filesUnreadable();
    return n == 0 ? null : "unreadable: " + n + " entr" + (n == 1 ? "y" : "ies")
        + " could not be read and were skipped (marked ? in 'beamsave list')";
  }

  public int shards() {
    return outcome.images().stream().mapToInt(ImageSummary::shards).sum();
  }

  public List<ImageSummary> images() {
    return outcome.images();
  }

  /** Each stage's wall time in seconds. */
  public Map<String, Double> stageSeconds() {
    return outcome.job().stageSeconds(STAGES);
  }

  public long counter(String name) {
    return outcome.job().counter(name);
  }

  public double seconds() {
    return outcome.job().seconds();
  }

  /** raw / image bytes; above 1 means the image is smaller. */
  public double ratio() {
    return imageBytes() == 0 ? 0 : (double) rawBytes() / imageBytes();
  }

  /** Raw MB (10^6 bytes) saved per second of the whole run. */
  public double rateMBps() {
    return rawBytes() / 1e6 / Math.max(seconds(), 1e-9);
  }

  public Map<String, Object> json() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("codec", outcome.spec().codec().spec());
    m.put("files", files());
    m.put("rawBytes", rawBytes());
    m.put("imageBytes", imageBytes());
    m.put("ratio", round(ratio()));
    m.put("shards", shards());
    m.put("saveSeconds", round(seconds()));
    m.put("rateMBps", round(rateMBps()));
    Map<String, Object> stages = new LinkedHashMap<>();
    outcome.job().stageSeconds(STAGES).forEach((k, v) -> stages.put(k, round(v)));
    m.put("stages", stages);
    Map<String, Object> spans = new LinkedHashMap<>();
    outcome.job().stageSpans(STAGES).forEach((k, v) -> spans.put(k, new double[] {round(v[0]), round(v[1])}));
    m.put("stageSpans", spans);
    m.put("blocksStoredRaw", outcome.job().counter(StageMetrics.BLOCKS_STORED_RAW));
    m.put("filesChanged", outcome.job().counter(StageMetrics.FILES_CHANGED));
    m.put("specialFilesSkipped", outcome.job().counter(StageMetrics.SPECIAL_FILES_SKIPPED));
    m.put("filesUnreadable", filesUnreadable());
    m.put("listedMissing", listedMissing());
    List<Map<String, Object>> images = new ArrayList<>();
    for (ImageSummary s : outcome.images()) {
      Map<String, Object> i = new LinkedHashMap<>();
      i.put("library", s.library());
      i.put("image", s.image());
      i.put("files", s.files());
      i.put("rawBytes", s.rawBytes());
      i.put("imageBytes", s.imageBytes());
      i.put("shards", s.shards());
      i.put("imageId", s.imageId());
      if (!s.base().isEmpty()) {
        i.put("base", s.base());
        i.put("referencedBytes", s.referencedBytes());
        i.put("comparedBytes", s.comparedBytes());
      }
      List<Map<String, Object>> unreadable = new ArrayList<>();
      for (Unreadable u : s.unreadable()) {
        unreadable.add(Map.of("path", u.path().toString(), "reason", u.reason()));
      }
      i.put("unreadable", unreadable);
      i.put("missing", s.missing().stream().map(Object::toString).toList());
      images.add(i);
    }
    m.put("images", images);
    return m;
  }

  public void writeJson(Path file) throws IOException {
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), json());
  }

  /** The table header; rows come from {@link #row}. */
  public static String header() {
    return String.format(
        Locale.ROOT, "%-24s %-8s %10s %12s %12s %7s %10s", "library", "codec", "duration",
        "raw", "image", "ratio", "rate MB/s");
  }

  /** One row per image, then a total row when there are several. */
  public List<String> rows() {
    List<String> rows = new ArrayList<>();
    for (ImageSummary s : outcome.images()) {
      rows.add(row(s.library(), s.rawBytes(), s.imageBytes(), seconds(), !s.base().isEmpty()));
    }
    if (outcome.images().size() > 1) {
      rows.add(row("(all)", rawBytes(), imageBytes(), seconds(),
          outcome.images().stream().anyMatch(i -> !i.base().isEmpty())));
    }
    return rows;
  }

  /**
   * A row: {@code raw} the bytes read and stored. An incremental image's ratio is shown as
   * "-": its catalog of the whole tree weighs against the few bytes it holds.
   */
  private String row(String library, long raw, long image, double secs, boolean incremental) {
    return String.format(
        Locale.ROOT,
        "%-24s %-8s %9.2fs %12s %12s %7s %10.1f",
        library,
        outcome.spec().codec().spec(),
        secs,
        Sizes.human(raw),
        Sizes.human(image),
        incremental ? "-" : String.format(Locale.ROOT, "%.2f", image == 0 ? 0
            : (double) raw / image),
        raw / 1e6 / Math.max(secs, 1e-9));
  }

  /** A line with the stage times, e.g. {@code stages: list 0.4s, plan 0.1s, ...}. */
  public String stagesLine() {
    StringBuilder b = new StringBuilder("stages:");
    outcome.job().stageSeconds(STAGES)
        .forEach((k, v) -> b.append(String.format(Locale.ROOT, " %s %.2fs", k, v)));
    return b.toString();
  }

  /** The report as {@code save} prints it: the table, the stages, then each image. */
  public void print(PrintWriter out) {
    out.println(header());
    rows().forEach(out::println);
    out.println(stagesLine());
    for (ImageSummary s : outcome.images()) {
      out.println("image: " + Printable.text(s.image()));
      if (!s.base().isEmpty()) {
        out.println("incremental: " + Sizes.human(s.rawBytes()) + " new in the image, "
            + Sizes.human(s.referencedBytes()) + " unchanged referenced in "
            + Printable.text(s.base()) + (s.comparedBytes() == 0 ? "" : " (of files and of"
                + " the ranges of changed files that did not change; "
                + Sizes.human(s.comparedBytes()) + " of changed files read to find them)")
            + "; the tree it stands for: " + Sizes.human(s.rawBytes() + s.referencedBytes()));
      }
    }
    if (unreadableLine() != null) {
      out.println(unreadableLine());
    }
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}

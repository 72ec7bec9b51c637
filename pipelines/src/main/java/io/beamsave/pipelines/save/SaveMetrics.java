package io.beamsave.pipelines.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Rename;
import io.beamsave.transforms.save.ImageSummary;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A save's figures in Prometheus' text format, for node_exporter's textfile collector: written
 * whole to a temporary file beside {@code file} and renamed over it, so a scrape never reads
 * half a file. A failed save writes its failure and keeps the time of the last success.
 */
public final class SaveMetrics {
  private static final String LAST_SUCCESS = "beamsave_save_last_success_timestamp_seconds";
  private static final Pattern LAST_SUCCESS_LINE =
      Pattern.compile("^" + LAST_SUCCESS + "\\s+(\\S+)\\s*$", Pattern.MULTILINE);

  private SaveMetrics() {}

  /**
   * Writes the figures of a run that began at {@code start}; {@code report} null if it failed;
   * with the exit code and time of each hook that {@code ran}.
   */
  public static void write(Path file, SaveReport report, Instant start, Instant end,
      List<Hooks.Ran> ran) {
    PrometheusRegistry registry = new PrometheusRegistry();
    if (!ran.isEmpty()) {
      Gauge code = Gauge.builder().name("beamsave_save_hook_exit_code")
          .help("Exit code of each hook of the last save (-1: killed at its time limit)")
          .labelNames("phase", "index").register(registry);
      Gauge took = Gauge.builder().name("beamsave_save_hook_seconds")
          .help("Wall time of each hook of the last save").labelNames("phase", "index")
          .register(registry);
      for (Hooks.Ran r : ran) {
        code.labelValues(r.phase(), Integer.toString(r.index())).set(r.exitCode());
        took.labelValues(r.phase(), Integer.toString(r.index())).set(r.seconds());
      }
    }
    gauge(registry, "beamsave_save_success", "1 if the last save succeeded, else 0")
        .set(report != null ? 1 : 0);
    gauge(registry, "beamsave_save_last_run_timestamp_seconds",
        "When the last save ended, in seconds since the epoch").set(seconds(end));
    double lastSuccess = report != null ? seconds(end) : previousSuccess(file);
    if (lastSuccess > 0) {
      gauge(registry, LAST_SUCCESS, "When the last successful save ended").set(lastSuccess);
    }
    gauge(registry, "beamsave_save_duration_seconds", "Wall time of the last save")
        .set((end.toEpochMilli() - start.toEpochMilli()) / 1000.0);
    if (report != null) {
      Gauge stage = Gauge.builder().name("beamsave_save_stage_seconds")
          .help("Wall time of each stage of the last save").labelNames("stage").register(registry);
      report.stageSeconds().forEach((k, v) -> stage.labelValues(k).set(v));
      Gauge raw = labelled(registry, "beamsave_save_raw_bytes", "Bytes of files saved");
      Gauge image = labelled(registry, "beamsave_save_image_bytes", "Bytes of the image");
      Gauge ratio = labelled(registry, "beamsave_save_compression_ratio", "Raw over image bytes");
      Gauge files = labelled(registry, "beamsave_save_files", "Files saved");
      for (ImageSummary s : report.images()) {
        raw.labelValues(s.library()).set(s.rawBytes());
        image.labelValues(s.library()).set(s.imageBytes());
        ratio.labelValues(s.library()).set(
            s.imageBytes() == 0 ? 0 : (double) s.rawBytes() / s.imageBytes());
        files.labelValues(s.library()).set(s.files());
      }
      gauge(registry, "beamsave_save_files_changed", "Files that changed while being saved")
          .set(report.counter(io.beamsave.transforms.run.StageMetrics.FILES_CHANGED));
      gauge(registry, "beamsave_save_blocks_stored_raw", "Blocks that did not compress")
          .set(report.counter(io.beamsave.transforms.run.StageMetrics.BLOCKS_STORED_RAW));
    }
    Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
    try {
      try (OutputStream out = Files.newOutputStream(tmp)) {
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
      }
      Rename.replacing(tmp, file);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot write --metrics-file", file, e);
    }
  }

  private static Gauge gauge(PrometheusRegistry registry, String name, String help) {
    return Gauge.builder().name(name).help(help).register(registry);
  }

  private static Gauge labelled(PrometheusRegistry registry, String name, String help) {
    return Gauge.builder().name(name).help(help).labelNames("library").register(registry);
  }

  private static double seconds(Instant t) {
    return t.toEpochMilli() / 1000.0;
  }

  /** The last success recorded in {@code file} by an earlier run, or 0. */
  private static double previousSuccess(Path file) {
    try {
      Matcher m = LAST_SUCCESS_LINE.matcher(Files.readString(file));
      return m.find() ? Double.parseDouble(m.group(1)) : 0;
    } catch (IOException | NumberFormatException | java.io.UncheckedIOException none) {
      return 0;
    }
  }
}

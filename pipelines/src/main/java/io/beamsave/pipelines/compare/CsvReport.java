package io.beamsave.pipelines.compare;

import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * A report as {@code results.csv}: one line per run, every figure in bytes and seconds, empty
 * where not measured. Static methods only.
 */
final class CsvReport {
  private CsvReport() {}

  /** The file's text: a header line, then a line per run of {@code report}. */
  static String text(Report report) {
    StringBuilder b = new StringBuilder(
        "link_mbps,strategy,codec,run,save_seconds,save_cpu_seconds,transfer_seconds,"
            + "total_seconds,restore_seconds,restore_cpu_seconds,raw_bytes,image_bytes,"
            + "stored_bytes,ratio,bytes_stored_raw,save_read_calls,save_write_calls,"
            + "save_read_bytes,save_write_bytes,restore_read_calls,restore_write_calls,"
            + "restore_read_bytes,restore_write_bytes,object\n");
    for (Measurement m : report.rows()) {
      b.append(String.format(Locale.ROOT, "%d,%s,%s,%d,%.3f,%s,%.3f,%.3f,%.3f,%s,%d,%d,%d,%.3f,%d,",
          m.linkMbps(), m.strategy(), m.codec(), m.run(), m.saveSeconds(),
          cpu(m.saveUsage()), m.transferSeconds(), m.totalSeconds(), m.restoreSeconds(),
          cpu(m.restoreUsage()), m.rawBytes(), m.imageBytes(), m.storedBytes(), m.ratio(),
          m.bytesStoredRaw()));
      b.append(io(m.saveUsage())).append(',').append(io(m.restoreUsage())).append(',')
          .append(m.object() == null ? "" : m.object()).append('\n');
    }
    return b.toString();
  }

  private static String cpu(ProcessUsage u) {
    return u == null || u.cpuSeconds() < 0 ? ""
        : String.format(Locale.ROOT, "%.3f", u.cpuSeconds());
  }

  private static String io(ProcessUsage u) {
    if (u == null) {
      return ",,,";
    }
    return List.of(u.readCalls(), u.writeCalls(), u.readBytes(), u.writeBytes()).stream()
        .map(v -> v < 0 ? "" : Long.toString(v)).collect(Collectors.joining(","));
  }
}

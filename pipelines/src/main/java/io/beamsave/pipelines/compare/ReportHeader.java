package io.beamsave.pipelines.compare;

import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where and when a report was measured: figures from another machine, day or version are not
 * comparable, so every form of the report starts with them.
 */
public record ReportHeader(
    String version,
    Instant date,
    String library,
    int cores,
    long memoryBytes,
    String os,
    String java,
    String runner) {

  /** This machine, now. */
  public static ReportHeader here(String version, String library, String runner) {
    long memory = -1;
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      // The JDK reports a container's limit, not the host's memory, where there is one.
      memory = os.getTotalMemorySize();
    }
    return new ReportHeader(version, Instant.now().truncatedTo(ChronoUnit.SECONDS), library,
        Runtime.getRuntime().availableProcessors(), memory,
        System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
            + System.getProperty("os.arch"),
        System.getProperty("java.vm.name") + " " + System.getProperty("java.version"), runner);
  }

  /** "2025-01-31 14:05:09 UTC". */
  public String dateUtc() {
    return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'", Locale.ROOT)
        .withZone(ZoneOffset.UTC).format(date);
  }

  /** "2 cores, 7.8 GiB memory". */
  public String machine() {
    return String.format(Locale.ROOT, "%d cores, %s memory", cores,
        memoryBytes < 0 ? "unknown" : String.format(Locale.ROOT, "%.1f GiB", memoryBytes / GIB));
  }

  private static final double GIB = 1024.0 * 1024 * 1024;

  /** Label and value, in the order every form shows them. */
  public Map<String, String> fields() {
    Map<String, String> f = new LinkedHashMap<>();
    f.put("beamsave", version);
    f.put("date", dateUtc());
    f.put("library", library);
    f.put("machine", machine());
    f.put("system", os + ", " + java);
    f.put("runner", runner);
    return f;
  }

  List<String> lines() {
    return fields().entrySet().stream()
        .map(e -> String.format(Locale.ROOT, "%-9s %s", e.getKey() + ":", e.getValue()))
        .toList();
  }
}

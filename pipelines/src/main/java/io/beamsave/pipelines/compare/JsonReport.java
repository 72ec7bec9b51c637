package io.beamsave.pipelines.compare;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A report as {@code results.json}: the title, the header's fields, the verdicts, the winners,
 * the links' use, every run and the averages, pretty-printed. Static methods only.
 */
final class JsonReport {
  private JsonReport() {}

  /** Writes {@code report} to {@code file}. */
  static void write(Report report, Path file) throws IOException {
    new ObjectMapper().findAndRegisterModules().writerWithDefaultPrettyPrinter()
        .writeValue(file.toFile(), tree(report));
  }

  /** What the file holds, as maps, lists and records in the order written. */
  private static Map<String, Object> tree(Report report) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("title", report.title());
    ReportHeader header = report.header();
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
    json.put("verdicts", report.verdicts());
    json.put("winners", report.winners().values().stream()
        .map(w -> Map.of("linkMbps", w.linkMbps(), "strategy", w.strategy(), "codec", w.codec(),
            "totalSeconds", w.totalSeconds()))
        .collect(Collectors.toList()));
    json.put("links", report.linkUse().stream()
        .map(u -> Map.of("linkMbps", u.linkMbps(), "linkMBps", u.linkMBps(),
            "bestTransferMBps", u.bestTransferMBps(), "linkBound", u.linkBound()))
        .collect(Collectors.toList()));
    json.put("runs", report.rows());
    json.put("averages", report.averages());
    return json;
  }
}

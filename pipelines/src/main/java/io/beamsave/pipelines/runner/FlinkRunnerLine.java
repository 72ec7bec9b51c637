package io.beamsave.pipelines.runner;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.transforms.Printable;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The Flink line a run's runner is built for, and whether the cluster it submits to runs the same
 * one. A Flink client and the cluster it submits to must be of one line (1.20, 2.0, ...): the job
 * graph is Java-serialised Flink classes. The runner is not in beamsave's jar: each line's lives
 * in a directory of its own beside it (lib/flink-LINE/), which bin/beamsave adds to the class path
 * of runs on Flink after asking the cluster's REST API which line it runs. This class checks that
 * choice from inside, for runs started some other way (the container image, {@code java -cp}).
 */
public final class FlinkRunnerLine {
  private FlinkRunnerLine() {}

  static final String RUNNER_PACKAGE = "org.apache.beam.runners.flink";

  /** Names the cluster's Flink version, as {@code --flink-version} does. */
  public static final String ENVIRONMENT = "BEAMSAVE_FLINK_VERSION";

  /** Throws, in one line, when no Flink runner is on the class path. */
  static void requireRunner() {
    try {
      Class.forName(RUNNER_PACKAGE + ".FlinkRunner", false, FlinkRunnerLine.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      throw new IllegalArgumentException("the Flink runner is not on the class path: run beamsave"
          + " through bin/beamsave, which adds lib/flink-LINE/ for runs on Flink, or add that"
          + " directory's jars to the class path");
    }
  }

  /** The Flink version the runner on the class path runs with, such as 1.20.5. */
  static String runnerVersion() {
    try {
      Object v = Class.forName("org.apache.flink.runtime.util.EnvironmentInformation")
          .getMethod("getVersion").invoke(null);
      return String.valueOf(v);
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new IllegalStateException("cannot tell the Flink runner's version", e);
    }
  }

  /** The line of a Flink version: its first two numbers ({@code 1.20.5} is of 1.20). */
  public static String line(String version) {
    String[] parts = version.trim().split("\\.");
    if (parts.length < 2 || !parts[0].matches("\\d+") || !parts[1].matches("\\d+")) {
      throw new IllegalArgumentException("not a Flink version: '" + version + "' (such as 1.20)");
    }
    return parts[0] + "." + parts[1];
  }

  /**
   * Refuses a run whose runner is of another line than the cluster's: {@code told} (from
   * {@code --flink-version} or {@link #ENVIRONMENT}) when given, else what the cluster at {@code
   * master} (HOST:PORT) says on its REST API. A cluster that cannot be reached, or a server that
   * is no Flink REST API, is refused too, in one line and within seconds (Flink's client would
   * take a minute and say "Channel became inactive").
   */
  static void checkCluster(String master, String told) {
    String runner = line(runnerVersion());
    if (told != null && !told.isBlank()) {
      if (!line(told).equals(runner)) {
        throw new IllegalArgumentException("the Flink version given (" + told + ", from"
            + " --flink-version or $" + ENVIRONMENT + ") is of Flink " + line(told)
            + ", but this run carries the runner for Flink " + runner + " (lib/flink-" + runner
            + "); bin/beamsave picks the runner of the line named");
      }
      return;
    }
    String cluster;
    try {
      cluster = askVersion(master);
    } catch (IOException e) {
      throw new IllegalArgumentException("no Flink cluster answers at " + master + ": "
          + reason(e) + " (check --flinkMaster; --flink-version " + runner
          + " skips this question)");
    }
    if (cluster == null) {
      throw new IllegalArgumentException("what answers at " + master + " is not a Flink REST API"
          + " (its GET /config names no flink-version; check --flinkMaster, or give"
          + " --flink-version " + runner + " to submit anyway)");
    }
    if (!cluster.matches("\\d+\\.\\d+.*")) {
      throw new IllegalArgumentException("the Flink cluster at " + master + " reports version '"
          + Printable.text(cluster) + "', which is no Flink version; give --flink-version to"
          + " say which it runs");
    }
    if (!line(cluster).equals(runner)) {
      throw new IllegalArgumentException("the Flink cluster at " + master + " runs Flink " + cluster
          + ", but this run carries the runner for Flink " + runner + " (lib/flink-" + runner
          + "); bin/beamsave --flink-version " + line(cluster) + " picks that line's runner"
          + " where this beamsave carries one");
    }
  }

  /**
   * The REST address of a session cluster's {@code --flinkMaster} as Flink's client reads it:
   * HOST:PORT, HOST (port 8081) or http(s)://HOST[:PORT]; the one reading of it, for the line
   * check and for progress ({@link FlinkProgressPrinter}).
   */
  static URI rest(String master) {
    String m = master.trim();
    if (!m.matches("(?i)https?://.*")) {
      m = "http://" + m;
    }
    URI u = URI.create(m);
    if (u.getHost() == null) {
      throw new IllegalArgumentException("--flinkMaster " + master + ": not HOST:PORT");
    }
    return u.getPort() < 0
        ? URI.create(u.getScheme() + "://" + u.getRawAuthority() + ":8081") : u;
  }

  /**
   * The Flink version at {@code /config}; null when the answer holds none (not a Flink REST
   * API, say); throws when nothing answers.
   */
  private static String askVersion(String master) throws IOException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    HttpResponse<java.io.InputStream> r;
    URI config;
    try {
      config = rest(master).resolve("/config");
      r = http.send(HttpRequest.newBuilder(config).timeout(Duration.ofSeconds(10)).GET().build(),
          HttpResponse.BodyHandlers.ofInputStream());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    } catch (IllegalArgumentException e) {
      throw new IOException("not HOST:PORT", e);
    }
    // A Flink's answer is a few hundred bytes: read no more than 64 KiB of whatever answers.
    byte[] body;
    try (java.io.InputStream in = r.body()) {
      body = in.readNBytes(64 << 10);
    }
    if (r.statusCode() != 200) {
      return null;
    }
    try {
      JsonNode v = new ObjectMapper().readTree(body).path("flink-version");
      return v.isTextual() ? v.asText() : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static String reason(IOException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.nio.channels.UnresolvedAddressException
          || t instanceof java.net.UnknownHostException) {
        return "unknown host";
      }
    }
    if (e instanceof java.net.ConnectException) {
      return "connection refused";
    }
    if (e instanceof java.net.http.HttpConnectTimeoutException) {
      return "no connection within 5 s";
    }
    if (e instanceof java.net.http.HttpTimeoutException) {
      return "no answer within 10 s";
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}

package io.beamsave.pipelines.runner;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads a running Flink job's progress through shards from the cluster's REST API.
 *
 * <p>Beam's own metrics cannot serve here: the Flink runner runs each batch ParDo as one bundle
 * per task and hands its counters to Flink only when the task closes, so a byte counter stands
 * still until a whole task is done. Flink's per-operator record counters are live, and the steps
 * that matter emit exactly one element per shard: the shard step's {@code numRecordsOut} is the
 * shards done. The total is the shard count when the driver knows it (restore, verify), or the
 * records the planning step's vertex wrote once that vertex has finished (save).
 *
 * <p>Flink refreshes the metrics its REST API serves every {@code metrics.fetcher.update-interval}
 * (10 s by default; the clusters deploy/flink starts use 1 s). Every failure to reach or parse the
 * API reads as "nothing known yet": progress must never fail a job.
 */
public final class FlinkProgress {
  /**
   * Shards done of shards in all ({@code total} 0 while unknown), and how many times the job
   * has restarted (after a lost TaskManager, say: Flink runs it again from the start, and the
   * shards done count again from 0).
   */
  public record Shards(long done, long total, long restarts) {
    public Shards(long done, long total) {
      this(done, total, 0);
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final URI rest;
  private final String jobName;
  private final String shardStep;
  private final String planStep;
  private final long knownShards;
  private String jobId;
  private final Map<String, String> doneMetricIds = new HashMap<>();

  /**
   * @param rest the cluster's REST address, e.g. {@code http://127.0.0.1:8081}
   * @param jobName the Flink job's name (Beam's {@code --jobName})
   * @param shardStep the Beam step that outputs one element per shard done
   * @param planStep the Beam step whose vertex writes one record per shard planned, or null
   * @param knownShards the shard count when known before the run (then {@code planStep} is null)
   */
  public FlinkProgress(
      URI rest, String jobName, String shardStep, String planStep, long knownShards) {
    this.rest = rest;
    this.jobName = jobName;
    this.shardStep = shardStep;
    this.planStep = planStep;
    this.knownShards = knownShards;
  }

  /** The job's progress now, or null while the job is not visible or its metrics not yet read. */
  public Shards poll() {
    try {
      if (jobId == null) {
        jobId = findJob();
        if (jobId == null) {
          return null;
        }
      }
      JsonNode job = get("/jobs/" + jobId);
      long total = knownShards;
      long done = 0;
      // A finished vertex's live counters are gone from the API: its shards are all done.
      boolean shardsFinished = false;
      for (JsonNode v : job.path("vertices")) {
        String name = v.path("name").asText();
        boolean finished = v.path("status").asText().equals("FINISHED");
        if (planStep != null && name.contains("at " + planStep + "/") && finished) {
          total = v.path("metrics").path("write-records").asLong();
        }
        if (name.contains("at " + shardStep + "/")) {
          shardsFinished = finished;
          done = finished ? 0 : recordsOut(v.path("id").asText());
        }
      }
      return new Shards(shardsFinished ? total : done, total, restarts());
    } catch (IOException | RuntimeException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** The job's {@code numRestarts} metric, 0 while unknown. */
  private long restarts() throws IOException, InterruptedException {
    for (JsonNode m : get("/jobs/" + jobId + "/metrics?get=numRestarts")) {
      return m.path("value").asLong();
    }
    return 0;
  }

  private String findJob() throws IOException, InterruptedException {
    for (JsonNode j : get("/jobs/overview").path("jobs")) {
      if (j.path("name").asText().equals(jobName)) {
        return j.path("jid").asText();
      }
    }
    return null;
  }

  /** The summed live record-out counter of the shard step's operator in vertex {@code vertex}. */
  private long recordsOut(String vertex) throws IOException, InterruptedException {
    String base = "/jobs/" + jobId + "/vertices/" + vertex + "/subtasks/metrics";
    String id = doneMetricIds.get(vertex);
    if (id == null) {
      // Operator metric ids read "FlatMap_(FlatMap_at_<step>/<inner>).numRecordsOut"; the
      // ".output" twin Beam chains after each ParDo counts the same records, and is skipped.
      for (JsonNode m : get(base)) {
        String candidate = m.path("id").asText();
        if (candidate.contains("_at_" + shardStep + "/")
            && candidate.endsWith(".numRecordsOut")
            && !candidate.contains("_output")) {
          id = candidate;
          break;
        }
      }
      if (id == null) {
        return 0;
      }
      doneMetricIds.put(vertex, id);
    }
    JsonNode values = get(base + "?get=" + URLEncoder.encode(id, StandardCharsets.UTF_8));
    return values.isArray() && values.size() > 0 ? values.get(0).path("sum").asLong() : 0;
  }

  private JsonNode get(String path) throws IOException, InterruptedException {
    HttpResponse<byte[]> r =
        http.send(
            HttpRequest.newBuilder(rest.resolve(path)).timeout(Duration.ofSeconds(2)).build(),
            HttpResponse.BodyHandlers.ofByteArray());
    if (r.statusCode() != 200) {
      throw new IOException(path + ": HTTP " + r.statusCode());
    }
    return JSON.readTree(r.body());
  }
}

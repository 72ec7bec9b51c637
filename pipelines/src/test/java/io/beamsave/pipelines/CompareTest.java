package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.pipelines.stored.Ledger;
import io.beamsave.testing.S3TestServer;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.Stores;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code compare} and {@code bench} end to end against S3Proxy: the report and what it claims. */
class CompareTest {
  @TempDir static Path dir;
  static S3TestServer server;
  static Path library;

  @BeforeAll
  static void start() throws Exception {
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), "trials");
    library = Files.createDirectories(dir.resolve("ledgers"));
    Trees.mixedData(library, 6L << 20);
    Trees.unicodeNames(library);
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @Test
  void aSmallComparisonReportsWhatWasMeasuredAndStored() throws Exception {
    Path out = dir.resolve("report");
    Cli c = Cli.ok("compare", "--library", library, "--to", "s3://trials/cmp", "--codecs",
        "lz4,zstd:3,auto", "--runs", "1", "--link-mbps", "0,200", "--out", out, "--quiet",
        "--keep-objects", "--s3-endpoint", server.endpoint());
    assertThat(c.out()).contains("winner at unthrottled:").contains("winner at 200 Mbit/s:");

    JsonNode json = new ObjectMapper().readTree(out.resolve("results.json").toFile());
    JsonNode runs = json.get("runs");
    // Per link: the baseline; lz4, zstd and auto at save and while transferring; zstd in transfer (lz4
    // and auto have no transfer form).
    assertThat(runs).hasSize(2 * 8);
    assertThat(json.get("winners")).hasSize(2);
    Map<String, Long> ledgerStored =
        Ledger.read("s3://trials/cmp", server.settings()).stream()
            .filter(r -> r.kind().equals("upload") || r.kind().equals("save-upload"))
            .collect(Collectors.toMap(Ledger.Record::where, Ledger.Record::storedBytes));
    assertThat(ledgerStored).hasSize(16);
    assertThat(runs).filteredOn(r -> r.get("strategy").asText().equals("compress-while-transferring"))
        .hasSize(6);
    for (JsonNode r : runs) {
      double save = r.get("saveSeconds").asDouble();
      double transfer = r.get("transferSeconds").asDouble();
      assertThat(save).isPositive();
      assertThat(transfer).isPositive();
      String object = r.get("object").asText();
      ObjectUri uri = ObjectUri.parse(object, false);
      long stored = r.get("storedBytes").asLong();
      assertThat(Files.size(server.file("trials", uri.key()))).as(object).isEqualTo(stored);
      assertThat(ledgerStored.get(object)).as("ledger for " + object).isEqualTo(stored);
      Path target = dir.resolve("restored-" + uri.key().replaceAll("[^A-Za-z0-9]+", "-"));
      Cli.ok("restore", "--image", object, "--target", target, "--quiet",
          "--s3-endpoint", server.endpoint());
      assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).as(object).isNull();
    }
    for (JsonNode a : json.get("averages")) {
      double save = a.get("saveSeconds").asDouble();
      double transfer = a.get("transferSeconds").asDouble();
      double total = a.get("totalSeconds").asDouble();
      if (a.get("strategy").asText().equals("compress-while-transferring")) {
        // Measured from the start of the save to the stored object: it holds the whole save.
        assertThat(total).isGreaterThanOrEqualTo(save);
        assertThat(a.get("storedBytes").asLong()).isEqualTo(a.get("imageBytes").asLong());
      } else {
        assertThat(total).isCloseTo(save + transfer, org.assertj.core.data.Offset.offset(1e-9));
      }
    }
    // How much of the emulated link the raw transfers used: the unthrottled link has no rate.
    JsonNode links = json.get("links");
    assertThat(links).hasSize(1);
    assertThat(links.get(0).get("linkMbps").asInt()).isEqualTo(200);
    assertThat(links.get(0).get("linkMBps").asDouble()).isEqualTo(25.0);
    double fastestRaw = 0;
    for (JsonNode r : runs) {
      String strategy = r.get("strategy").asText();
      if (r.get("linkMbps").asInt() == 200 && (strategy.equals("raw-save-raw-transfer")
          || strategy.equals("compress-then-raw-transfer"))) {
        fastestRaw = Math.max(fastestRaw,
            r.get("storedBytes").asLong() / 1e6 / r.get("transferSeconds").asDouble());
      }
    }
    assertThat(links.get(0).get("bestTransferMBps").asDouble())
        .isCloseTo(fastestRaw, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(c.out()).contains("200 Mbit/s (25.0 MB/s): raw transfers reached");
    // The unmeasured warm-up leaves nothing behind.
    try (var stored = Files.walk(server.file("trials", "cmp"))) {
      assertThat(stored.map(Path::toString)).noneMatch(f -> f.contains("warm-up"));
    }
    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    assertThat(csv).hasSize(1 + 16);
    byte[] png = Files.readAllBytes(out.resolve("chart.png"));
    assertThat(new String(png, 1, 3, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("PNG");
    assertThat(Files.readString(out.resolve("index.html")))
        .contains("<img src=\"chart.png\"").contains("winner at 200 Mbit/s");
  }

  @Test
  void withoutKeepObjectsACompareLeavesNothingOfItsOwnInTheBucket() throws Exception {
    Path tiny = Files.createDirectories(dir.resolve("tiny"));
    Trees.mixedData(tiny, 256L << 10);
    Store bucket = Stores.bucketOf(ObjectUri.parse("s3://trials/", true), server.settings());
    // Something of the operator's under the same prefix, which compare did not make.
    bucket.put("tidy/keep-me.txt", new byte[] {1, 2, 3}, 3, "text/plain");

    Cli.ok("compare", "--library", tiny, "--to", "s3://trials/tidy", "--codecs", "lz4",
        "--runs", "1", "--quiet", "--s3-endpoint", server.endpoint());
    assertThat(bucket.list("tidy/")).extracting(Store.Item::key)
        .containsExactly("tidy/keep-me.txt");

    Cli c = Cli.ok("compare", "--library", tiny, "--to", "s3://trials/kept", "--codecs", "lz4",
        "--runs", "1", "--keep-objects", "--quiet", "--s3-endpoint", server.endpoint());
    List<String> kept = bucket.list("kept/").stream().map(Store.Item::key).toList();
    // The baseline, lz4 at save and lz4 while transferring, and the ledger's records.
    assertThat(kept).filteredOn(k -> k.endsWith(".bsave")).hasSize(3);
    assertThat(kept).filteredOn(k -> k.startsWith("kept/" + Ledger.DIRECTORY + "/")).isNotEmpty();
    assertThat(c.out()).contains("winner at unthrottled:");
  }

  @Test
  void benchTabulatesEveryRunOfEveryCodecWithItsRestoreAndCalls() throws Exception {
    Path out = dir.resolve("bench");
    Cli c = Cli.ok("bench", "--library", library, "--codecs", "none,zstd:3", "--runs", "2",
        "--link-mbps", "100", "--out", out, "--quiet");
    assertThat(c.out()).contains("fastest save:").contains("smallest image: zstd:3")
        .contains("best at 100 Mbit/s:").contains("fastest restore:")
        .contains("restore CPU s").contains("image MiB").contains("ratio")
        .contains("save reads").contains("restore writes").contains("beamsave: " + io.beamsave.pipelines.cli.BuildInfo.version())
        .contains("UTC").contains("cores");
    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    assertThat(csv).hasSize(1 + 4);
    assertThat(csv.subList(1, 5)).allMatch(l -> l.startsWith("0,save,"));
    List<String> columns = List.of(csv.get(0).split(","));
    assertThat(columns).contains("restore_seconds", "save_cpu_seconds", "restore_cpu_seconds",
        "save_read_calls", "save_write_calls", "restore_read_calls", "restore_write_calls",
        "bytes_stored_raw");
    for (String line : csv.subList(1, 5)) {
      String[] v = line.split(",", -1);
      java.util.function.ToDoubleFunction<String> at =
          name -> Double.parseDouble(v[columns.indexOf(name)]);
      assertThat(at.applyAsDouble("restore_seconds")).as(line).isPositive();
      assertThat(at.applyAsDouble("save_cpu_seconds")).as(line).isPositive();
      assertThat(at.applyAsDouble("restore_cpu_seconds")).as(line).isPositive();
      // Every file is read by the save and written by the restore.
      assertThat(at.applyAsDouble("save_read_calls")).as(line).isPositive();
      assertThat(at.applyAsDouble("save_write_calls")).as(line).isPositive();
      assertThat(at.applyAsDouble("restore_read_calls")).as(line).isPositive();
      assertThat(at.applyAsDouble("restore_write_calls")).as(line).isPositive();
    }
    JsonNode json = new ObjectMapper().readTree(out.resolve("results.json").toFile());
    assertThat(json.get("averages")).hasSize(2);
    JsonNode none = json.get("averages").get(0);
    JsonNode zstd = json.get("averages").get(1);
    assertThat(zstd.get("imageBytes").asLong()).isLessThan(none.get("imageBytes").asLong());
    // mixedData holds random bytes zstd cannot shrink; codec none tries nothing.
    assertThat(zstd.get("bytesStoredRaw").asLong()).isPositive()
        .isLessThan(zstd.get("rawBytes").asLong());
    assertThat(none.get("bytesStoredRaw").asLong()).isZero();
    assertThat(json.get("header").get("cores").asInt()).isPositive();
    assertThat(json.get("verdicts")).extracting(v -> v.get("target").asText())
        .contains("fastest save", "smallest image", "best at 100 Mbit/s");
  }
}

package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line as scripts and operators meet it: JSON Lines in one schema, {@code images}
 * and {@code latest}, ledgers at any depth, progress in bytes, metrics for Prometheus, and
 * usage errors in one line.
 */
class CommandLineTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dir;
  static Path backups;
  static Path payroll;
  static Path ledger;

  /** Two libraries, each saved twice into its own directory, as a nightly schedule does. */
  @BeforeAll
  static void saveTwoLibrariesTwice() throws Exception {
    payroll = dir.resolve("payroll");
    ledger = dir.resolve("ledger");
    for (Path lib : List.of(payroll, ledger)) {
      Files.createDirectories(lib.resolve("sub"));
      Files.writeString(lib.resolve("a.txt"), "alpha ".repeat(10_000));
      byte[] b = new byte[200_000];
      new Random(7).nextBytes(b);
      Files.write(lib.resolve("sub/b.bin"), b);
    }
    backups = dir.resolve("backups");
    for (int run = 0; run < 2; run++) {
      for (Path lib : List.of(payroll, ledger)) {
        String name = lib.getFileName().toString();
        // Distinct {utc} stamps: the clock's seconds are the stamp's resolution.
        Path image = backups.resolve(name).resolve(name + "-2026120" + (run + 1) + "T021500Z.bsave");
        Cli.ok("save", "--library", lib, "--image", image, "-q");
      }
    }
  }

  private static List<JsonNode> lines(String out) throws IOException {
    List<JsonNode> nodes = new ArrayList<>();
    for (String line : out.split("\n")) {
      if (!line.isBlank()) {
        JsonNode n = JSON.readTree(line);
        assertThat(n.path("type").isTextual()).as("every line has a type: %s", line).isTrue();
        nodes.add(n);
      }
    }
    return nodes;
  }

  private static List<JsonNode> ofType(List<JsonNode> nodes, String type) {
    return nodes.stream().filter(n -> n.path("type").asText().equals(type)).toList();
  }

  @Test
  void imagesGroupsByLibraryNewestFirst() throws IOException {
    Cli text = Cli.ok("images", "--at", backups);
    assertThat(text.out()).contains("library ledger: 2 images").contains("library payroll: 2 images")
        .contains("4 images under");
    assertThat(text.out().indexOf("payroll-20261202T021500Z"))
        .isLessThan(text.out().indexOf("payroll-20261201T021500Z"));

    List<JsonNode> images = lines(Cli.ok("images", "--at", backups, "--json").out());
    assertThat(images).hasSize(4).allSatisfy(n -> {
      assertThat(n.path("type").asText()).isEqualTo("image");
      assertThat(n.path("status").asText()).isEqualTo("ok");
      assertThat(n.path("codec").asText()).isEqualTo("zstd:3");
      assertThat(n.path("rawBytes").asLong()).isGreaterThan(n.path("bytes").asLong());
      assertThat(n.path("ratio").asDouble()).isGreaterThan(1);
    });
    assertThat(images.get(0).path("library").asText()).isEqualTo("ledger");
    assertThat(images.get(0).path("time").asText()).isEqualTo("2026-12-02T02:15:00Z");
    assertThat(images.get(1).path("time").asText()).isEqualTo("2026-12-01T02:15:00Z");
  }

  @Test
  void imagesMarksADamagedImage() throws IOException {
    Path odd = dir.resolve("odd");
    Files.createDirectories(odd);
    Files.writeString(odd.resolve("junk.bsave"), "not an image");
    List<JsonNode> images = lines(Cli.ok("images", "--at", odd, "--json").out());
    assertThat(images).singleElement()
        .satisfies(n -> assertThat(n.path("status").asText()).startsWith("damaged: "));
  }

  @Test
  void latestIsTheNewestImageOfTheOneSeriesThere() {
    Cli verify = Cli.ok("verify", backups.resolve("payroll/latest"));
    assertThat(verify.out()).startsWith("OK ").contains("payroll-20261202T021500Z.bsave");

    Cli two = Cli.run("list", backups.resolve("latest"));
    assertThat(two.exit()).isEqualTo(1);
    assertThat(two.err().strip()).doesNotContain("\n")
        .contains("2 series of images").contains("ledger/ledger").contains("payroll/payroll");

    Cli none = Cli.run("verify", dir.resolve("payroll/latest"));
    assertThat(none.exit()).isEqualTo(1);
    assertThat(none.err()).contains("no images under");
  }

  @Test
  void aDamagedNewestImageNeitherTakesThePlaceOfAGoodOneNorIsLatest() throws IOException {
    Path series = dir.resolve("damaged-series");
    Files.createDirectories(series);
    Path older = series.resolve("payroll-20261201T021500Z.bsave");
    Path newer = series.resolve("payroll-20261202T021500Z.bsave");
    Files.copy(backups.resolve("payroll/payroll-20261201T021500Z.bsave"), older);
    Files.copy(backups.resolve("payroll/payroll-20261202T021500Z.bsave"), newer);
    byte[] bytes = Files.readAllBytes(newer);
    java.util.Arrays.fill(bytes, bytes.length - 16, bytes.length, (byte) 0);
    Files.write(newer, bytes);

    List<JsonNode> prune = ofType(lines(Cli.ok("prune", "--at", series, "--keep-last", "1",
        "--yes", "--json").out()), "decision");
    assertThat(prune).hasSize(2).allSatisfy(d -> assertThat(d.path("action").asText())
        .isEqualTo("keep"));
    assertThat(prune).anySatisfy(d -> {
      assertThat(d.path("image").asText()).endsWith("payroll-20261202T021500Z.bsave");
      assertThat(d.path("reasons").get(0).asText()).startsWith("damaged, not counted: ");
    });
    assertThat(older).exists();
    assertThat(Cli.ok("verify", series.resolve("latest")).out())
        .contains("payroll-20261201T021500Z.bsave");
  }

  @Test
  void anImageBeingReplacedIsStillLatest() throws IOException {
    Path one = dir.resolve("being-replaced");
    Files.createDirectories(one);
    Files.copy(backups.resolve("ledger/ledger-20261201T021500Z.bsave"), one.resolve("ledger.bsave"));
    Files.writeString(one.resolve("ledger.bsave.partial"), "a save is writing this");
    assertThat(Cli.ok("list", one.resolve("latest")).out()).startsWith("library ledger");
    assertThat(ofType(lines(Cli.ok("images", "--at", one, "--json").out()), "image"))
        .singleElement().satisfies(n -> {
          assertThat(n.path("status").asText()).isEqualTo("in progress");
          assertThat(n.path("codec").asText()).isEqualTo("zstd:3");
        });
  }

  @Test
  void historyFindsLedgersAtAnyDepth() throws IOException {
    Cli text = Cli.ok("history", "--at", backups);
    assertThat(text.out()).contains("payroll").contains("ledger").doesNotContain("no runs");
    List<JsonNode> runs = lines(Cli.ok("history", "--at", backups, "--json").out());
    assertThat(runs).hasSize(4).allSatisfy(n -> {
      assertThat(n.path("type").asText()).isEqualTo("run");
      assertThat(n.path("kind").asText()).isEqualTo("save");
      assertThat(n.path("rawBytes").asLong()).isPositive();
    });
    Cli missing = Cli.run("history", "--at", dir.resolve("nowhere"));
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(missing.err()).contains("no such directory");
  }

  @Test
  void listVerifyAndPruneSpeakJsonLines() throws IOException {
    Path image = backups.resolve("payroll/payroll-20261201T021500Z.bsave");
    List<JsonNode> list = lines(Cli.ok("list", image, "--json").out());
    assertThat(list.get(0).path("type").asText()).isEqualTo("image");
    assertThat(list.get(0).path("library").asText()).isEqualTo("payroll");
    assertThat(ofType(list, "entry")).extracting(n -> n.path("path").asText())
        .containsExactly("a.txt", "sub", "sub/b.bin");
    JsonNode a = ofType(list, "entry").get(0);
    assertThat(a.path("entryType").asText()).isEqualTo("file");
    assertThat(a.path("size").asLong()).isEqualTo(60_000);
    assertThat(a.path("mtimeNanos").isInt()).isTrue();

    List<JsonNode> verify = lines(Cli.ok("verify", "--image", image, "--json").out());
    JsonNode summary = ofType(verify, "summary").get(0);
    assertThat(summary.path("ok").asBoolean()).isTrue();
    assertThat(summary.path("files").asLong()).isEqualTo(2);
    assertThat(ofType(verify, "progress")).allSatisfy(
        p -> assertThat(p.path("bytesDone").asLong()).isLessThanOrEqualTo(
            p.path("bytesTotal").asLong(Long.MAX_VALUE)));

    List<JsonNode> prune = lines(Cli.ok("prune", "--at", backups, "--keep-last", "1", "--json")
        .out());
    assertThat(ofType(prune, "decision")).hasSize(4)
        .filteredOn(n -> n.path("action").asText().equals("delete")).hasSize(2);
    assertThat(ofType(prune, "summary").get(0).path("deleted").asBoolean()).isFalse();
    assertThat(Files.exists(image)).as("a dry run deletes nothing").isTrue();
  }

  @Test
  void aFailureUnderJsonIsAlsoAnErrorLine() throws IOException {
    Path bad = dir.resolve("bad.bsave");
    Files.writeString(bad, "garbage");
    Cli c = Cli.run("verify", bad, "--json");
    assertThat(c.exit()).isEqualTo(1);
    assertThat(c.err()).startsWith("beamsave: error: ");
    assertThat(ofType(lines(c.out()), "error")).singleElement()
        .satisfies(n -> assertThat(n.path("message").asText()).contains("bad.bsave"));
  }

  @Test
  void saveJsonGivesProgressInBytesAndTheSummary() throws IOException {
    // One shard, one slow codec: progress counted in finished shards would only ever read 0
    // or everything.
    Path slow = dir.resolve("slow");
    Files.createDirectories(slow);
    StringBuilder text = new StringBuilder();
    Random r = new Random(1);
    while (text.length() < 12 << 20) {
      text.append(r.nextInt(1_000_000)).append(' ');
    }
    Files.writeString(slow.resolve("numbers.txt"), text);
    Cli save = Cli.ok("save", "--library", slow, "--image", dir.resolve("slow.bsave"),
        "--codec", "xz:9", "--block-size", "256KiB", "--json", "--progress-interval", "0.05",
        "--", "--targetParallelism=1");
    List<JsonNode> out = lines(save.out());
    List<JsonNode> progress = ofType(out, "progress");
    long total = Files.size(slow.resolve("numbers.txt"));
    assertThat(progress).anySatisfy(p -> {
      assertThat(p.path("bytesDone").asLong()).isStrictlyBetween(0L, total);
      assertThat(p.path("bytesTotal").asLong()).isEqualTo(total);
    });
    JsonNode summary = ofType(out, "summary").get(0);
    assertThat(summary.path("rawBytes").asLong()).isEqualTo(total);
    assertThat(summary.path("codec").asText()).isEqualTo("xz:9");
    assertThat(summary.path("start").asText()).endsWith("Z");
    assertThat(out.get(out.size() - 1).path("type").asText()).isEqualTo("summary");
  }

  @Test
  void quietPrintsNoProgress() {
    Cli save = Cli.ok("save", "--library", payroll, "--image", dir.resolve("quiet.bsave"), "-q",
        "--progress-interval", "0.05");
    assertThat(save.err()).isEmpty();
    assertThat(save.out()).contains("payroll");
  }

  @Test
  void metricsFileForTheTextfileCollector() throws IOException {
    Path metrics = dir.resolve("beamsave.prom");
    Cli.ok("save", "--library", payroll, "--image", dir.resolve("m.bsave"), "-q",
        "--metrics-file", metrics);
    String ok = Files.readString(metrics);
    assertThat(ok).contains("# TYPE beamsave_save_success gauge")
        .containsPattern("(?m)^beamsave_save_success 1\\.0$")
        .containsPattern("(?m)^beamsave_save_raw_bytes\\{library=\"payroll\"\\} [0-9.e+E]+$")
        .containsPattern("(?m)^beamsave_save_stage_seconds\\{stage=\"compress\"\\} ")
        .containsPattern("(?m)^beamsave_save_last_success_timestamp_seconds [0-9.e+E]+$");
    String lastSuccess = ok.lines()
        .filter(l -> l.startsWith("beamsave_save_last_success_timestamp_seconds ")).findFirst()
        .orElseThrow();

    Cli failed = Cli.run("save", "--library", dir.resolve("no-such-library"), "--image",
        dir.resolve("m.bsave"), "-q", "--metrics-file", metrics);
    assertThat(failed.exit()).isEqualTo(1);
    String bad = Files.readString(metrics);
    assertThat(bad).containsPattern("(?m)^beamsave_save_success 0\\.0$")
        .contains(lastSuccess).doesNotContain("beamsave_save_raw_bytes");
    assertThat(dir.resolve(".beamsave.prom.tmp")).doesNotExist();

    // A save that fails on what it was asked, before it looks at a library, says so too.
    Files.writeString(metrics, ok);
    Cli refused = Cli.run("save", "--library", payroll, "--image", dir.resolve("m.bsave"), "-q",
        "--metrics-file", metrics, "--full-every", "3");
    assertThat(refused.exit()).isNotZero();
    assertThat(refused.err()).contains("--full-every needs --base");
    assertThat(Files.readString(metrics)).containsPattern("(?m)^beamsave_save_success 0\\.0$")
        .contains(lastSuccess);
  }

  @Test
  void usageErrorsAreOneLineAndSayWhereHelpIs() {
    Cli both = Cli.run("verify", "a.bsave", "--image", "b.bsave");
    assertThat(both.exit()).isEqualTo(2);
    assertThat(both.err()).isEqualTo(
        "beamsave: error: two images given: a.bsave and --image b.bsave\n"
            + "see 'beamsave verify --help'\n");

    Cli none = Cli.run("restore", "--target", dir.resolve("t"));
    assertThat(none.exit()).isEqualTo(2);
    assertThat(none.err()).startsWith("beamsave: error: an image is required: restore IMAGE\n");

    Cli beam = Cli.run("list", "x.bsave", "--", "--runner=FlinkRunner");
    assertThat(beam.exit()).isEqualTo(2);
    assertThat(beam.err()).contains("'list' runs no pipeline and takes no Beam options");

    Cli typo = Cli.run("images", "--att", backups);
    assertThat(typo.exit()).isEqualTo(2);
    assertThat(typo.err()).contains("did you mean --at?");

    Cli json = Cli.run("images", "--json", "--att", backups);
    assertThat(json.exit()).isEqualTo(2);
    assertThat(json.out()).contains("\"type\":\"error\"").contains("\"usage\":true");
  }

  @Test
  void oldNamesStillWorkAndSaySo() {
    Path back = dir.resolve("old-names.bsave");
    // No store is listening: what matters is what the old names are taken for.
    Cli down = Cli.run("download", "--from", "s3://no-bucket-here/x.bsave", "--image", back,
        "--s3-endpoint", "http://127.0.0.1:9");
    assertThat(down.err()).startsWith("beamsave: warning: --image is deprecated; use --to\n");
    assertThat(down.err()).doesNotContain("Missing required option");
    Cli twice = Cli.run("upload", "--from", dir.resolve("a.bsave"), "--image",
        dir.resolve("b.bsave"), "--to", "s3://no-bucket-here/x.bsave");
    assertThat(twice.exit()).isEqualTo(2);
    assertThat(twice.err()).contains("--from given twice");
    Cli up = Cli.run("upload", "--image", dir.resolve("missing.bsave"), "--parallel-parts", "2",
        "--to", "s3://no-bucket-here/x.bsave");
    assertThat(up.err()).contains("beamsave: warning: --image is deprecated; use --from")
        .contains("beamsave: warning: --parallel-parts is deprecated; use --parallel")
        .contains("missing.bsave: no such image");
    assertThat(up.exit()).isEqualTo(1);
  }

  @Test
  void everyHelpHasExamplesAndKeepsEveryTokenWhole() {
    for (String command : List.of("save", "restore", "verify", "consolidate", "list", "images",
        "upload", "download", "history", "prune", "bench", "compare", "codecs", "demo", "cat",
        "diff", "mount", "cleanup")) {
      Cli help = Cli.ok(command, "--help");
      assertThat(help.out()).as(command).contains("Examples:").contains("beamsave " + command)
          .doesNotContain("[picocli WARN]");
      // Lines break at spaces only: s3://BUCKET/PREFIX, a path or an example is never cut in
      // two, so what is copied from the help works.
      assertThat(help.out().lines()).as(command)
          .noneMatch(l -> l.endsWith("s3:") || l.strip().startsWith("//"));
      assertThat(help.out()).as(command).doesNotContainPattern("s3:\\R");
    }
  }
}

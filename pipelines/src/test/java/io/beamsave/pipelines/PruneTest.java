package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.retention.Retention;
import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.pipelines.stored.Ledger;
import io.beamsave.testing.S3TestServer;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.transfer.ImageUpload;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Timestamped image names, and {@code prune} on a directory and on S3. */
class PruneTest {
  @TempDir static Path dir;
  static S3TestServer server;
  static Path library;
  static Path image;

  @BeforeAll
  static void start() throws Exception {
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), "keep");
    library = Files.createDirectories(dir.resolve("payroll"));
    Trees.tinyFiles(library, 20);
    image = dir.resolve("one.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  static StoredImages.Image at(String stamp) {
    return new StoredImages.Image("x-" + stamp + ".bsave", "x", Instant.parse(stamp), 1, false);
  }

  @Test
  void retentionKeepsTheLastTheNewestOfEachDayAndWeekAndAlwaysTheNewest() {
    List<StoredImages.Image> images = List.of(
        at("2026-11-30T02:00:00Z"), at("2026-11-29T14:00:00Z"), at("2026-11-29T02:00:00Z"),
        at("2026-11-28T02:00:00Z"), at("2026-11-20T02:00:00Z"), at("2026-11-10T02:00:00Z"));
    List<Retention.Decision> d = new Retention(1, 3, 3).decide(images);
    assertThat(d).filteredOn(Retention.Decision::keep).extracting(x -> x.image().time().toString())
        .containsExactly("2026-11-30T02:00:00Z", "2026-11-29T14:00:00Z", "2026-11-28T02:00:00Z",
            "2026-11-20T02:00:00Z");
    assertThat(d.get(0).reasons()).contains("last 1", "daily 2026-11-30", "weekly 2026-W49");
    // The newest survives even the tightest policy.
    assertThat(new Retention(1, 0, 0).decide(images)).filteredOn(Retention.Decision::keep)
        .extracting(x -> x.image().time().toString()).containsExactly("2026-11-30T02:00:00Z");
  }

  @Test
  void retentionKeepsTheNewestOfEachMonthAndYearAndWhatIsWithinADurationOfTheNewest() {
    List<StoredImages.Image> images = List.of(
        at("2026-11-30T02:00:00Z"), at("2026-11-25T02:00:00Z"), at("2026-11-02T02:00:00Z"),
        at("2026-10-31T02:00:00Z"), at("2026-10-01T02:00:00Z"), at("2025-12-31T02:00:00Z"),
        at("2024-06-01T02:00:00Z"));
    List<Retention.Decision> monthly =
        new Retention(0, 0, 0, 2, 0, null).decide(images);
    assertThat(monthly).filteredOn(Retention.Decision::keep)
        .extracting(x -> x.image().time().toString())
        .containsExactly("2026-11-30T02:00:00Z", "2026-10-31T02:00:00Z");
    assertThat(monthly.get(0).reasons()).containsExactly("newest", "monthly 2026-11");
    assertThat(new Retention(0, 0, 0, 0, 3, null).decide(images))
        .filteredOn(Retention.Decision::keep).extracting(x -> x.image().time().toString())
        .containsExactly("2026-11-30T02:00:00Z", "2025-12-31T02:00:00Z",
            "2024-06-01T02:00:00Z");
    // Within 5 days of the newest image, not of the clock: 2026-11-25T02:00 is at the edge.
    assertThat(new Retention(0, 0, 0, 0, 0, Retention.Period.parse("5d")).decide(images))
        .filteredOn(Retention.Decision::keep).extracting(x -> x.image().time().toString())
        .containsExactly("2026-11-30T02:00:00Z", "2026-11-25T02:00:00Z");
    assertThat(new Retention(0, 0, 0, 0, 0, Retention.Period.parse("1m1d")).decide(images))
        .filteredOn(Retention.Decision::keep).hasSize(4);
  }

  @Test
  void pruneWithoutARuleSaysWhatItNeeds() {
    Cli none = Cli.run("prune", "--at", dir);
    assertThat(none.exit()).isEqualTo(2);
    assertThat(none.err()).startsWith("beamsave: error: prune needs a rule saying what to keep:"
        + " --keep-last N");
    Cli bad = Cli.run("prune", "--at", dir, "--keep-within", "30x");
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.err()).startsWith("beamsave: error: --keep-within 30x: give a duration");
    Cli huge = Cli.run("prune", "--at", dir, "--keep-within", "9999999999y");
    assertThat(huge.exit()).isEqualTo(2);
    assertThat(huge.err()).startsWith("beamsave: error: --keep-within 9999999999y: ");
    // The longest span allowed keeps everything, rather than failing on Java's calendar.
    assertThat(Cli.ok("prune", "--at", dir, "--keep-within", "99999999y").out())
        .contains("would delete 0 images");
  }

  @Test
  void saveNamesImagesAfterTheLibraryAndTheRunsUtcStart() throws Exception {
    Path other = Files.createDirectories(dir.resolve("ledgerbook"));
    Trees.tinyFiles(other, 5);
    Path nightly = dir.resolve("nightly");
    Cli.ok("save", "--library", library, "--library", other,
        "--image", nightly + "/{library}/{library}-{utc}.bsave", "--quiet");
    for (String name : List.of("payroll", "ledgerbook")) {
      try (Stream<Path> s = Files.list(nightly.resolve(name))) {
        Path image = s.filter(p -> p.toString().endsWith(".bsave")).findFirst().orElseThrow();
        String file = image.getFileName().toString();
        assertThat(file).matches(name + "-\\d{8}T\\d{6}Z\\.bsave");
        // One time everywhere: the catalog says the image was made when its name says.
        java.time.Instant stamp = java.time.LocalDateTime.parse(
            file.substring(name.length() + 1, file.length() - ".bsave".length()),
            java.time.format.DateTimeFormatter.ofPattern("uuuuMMdd'T'HHmmss'Z'"))
            .toInstant(java.time.ZoneOffset.UTC);
        assertThat(io.beamsave.transforms.image.ImageReader.readCatalog(image).createdMillis())
            .isEqualTo(stamp.toEpochMilli());
        assertThat(Cli.ok("list", image).out()).contains("saved " + java.time.format
            .DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss").withZone(java.time.ZoneOffset.UTC)
            .format(stamp) + " UTC");
      }
    }
  }

  /**
   * A directory under a location whose name is not UTF-8 cannot be named again as text: its
   * images are left out, with a warning, never listed as damaged nor deleted.
   */
  @Test
  void imagesUnderANameThatIsNotUtf8AreLeftOutWithAWarning() throws Exception {
    Path at = Files.createDirectories(dir.resolve("latin1"));
    Files.copy(image, at.resolve("payroll-20261120T020000Z.bsave"));
    SnapshotIT.ok("sh", "-c", "mkdir \"$1/$(printf 'caf\\351')\" && cp \"$2\" \"$1/$(printf"
        + " 'caf\\351')/payroll-20261121T020000Z.bsave\"", "sh", at.toString(), image.toString());
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream said = new java.io.ByteArrayOutputStream();
    Cli shown;
    Cli pruned;
    try {
      System.setErr(new java.io.PrintStream(said, true, java.nio.charset.StandardCharsets.UTF_8));
      shown = Cli.ok("images", "--at", at);
      pruned = Cli.ok("prune", "--at", at, "--keep-last", "1", "--yes");
    } finally {
      System.setErr(err);
    }
    assertThat(shown.out()).contains("payroll-20261120T020000Z.bsave").doesNotContain("damaged")
        .contains("1 image under");
    assertThat(said.toString(java.nio.charset.StandardCharsets.UTF_8))
        .contains("beamsave: warning: leaving out 'caf").contains("' in " + at + ": its name is"
            + " not UTF-8");
    assertThat(pruned.out()).doesNotContain("damaged");
    assertThat(SnapshotIT.ok("sh", "-c", "ls \"$1\"/*/", "sh", at.toString()))
        .contains("payroll-20261121T020000Z.bsave");
  }

  /**
   * Tags: prune --tag counts and deletes only images with the tag, leaving the others (even
   * older ones) alone; images --tag shows only them; list shows an image's tags.
   */
  @Test
  void pruneAndImagesWithATagTakeOnlyTheImagesSoTagged() throws Exception {
    Path nightly = dir.resolve("tagged-nightly.bsave");
    Path manual = dir.resolve("tagged-manual.bsave");
    Cli.ok("save", "--library", library, "--image", nightly, "--tag", "nightly", "--quiet");
    Cli.ok("save", "--library", library, "--image", manual, "--tag", "manual", "--tag",
        "before-upgrade", "--quiet");
    assertThat(Cli.ok("list", manual).out()).contains("note tags: manual,before-upgrade");
    Path at = Files.createDirectories(dir.resolve("tags"));
    for (String s : List.of("20261120T020000Z", "20261122T020000Z", "20261124T020000Z")) {
      Files.copy(nightly, at.resolve("payroll-" + s + ".bsave"));
    }
    for (String s : List.of("20261121T020000Z", "20261123T020000Z")) {
      Files.copy(manual, at.resolve("payroll-" + s + ".bsave"));
    }
    Cli shown = Cli.ok("images", "--at", at, "--tag", "before-upgrade", "--json");
    assertThat(shown.out().lines().filter(l -> l.contains("\"type\":\"image\"")))
        .hasSize(2).allMatch(l -> l.contains("\"tags\":[\"manual\",\"before-upgrade\"]"));
    Cli pruned = Cli.ok("prune", "--at", at, "--tag", "nightly", "--keep-last", "1", "--yes");
    assertThat(pruned.out()).contains("not tagged nightly");
    assertThat(at.resolve("payroll-20261120T020000Z.bsave")).doesNotExist();
    assertThat(at.resolve("payroll-20261122T020000Z.bsave")).doesNotExist();
    assertThat(at.resolve("payroll-20261124T020000Z.bsave")).exists();
    assertThat(at.resolve("payroll-20261121T020000Z.bsave")).exists();
    assertThat(at.resolve("payroll-20261123T020000Z.bsave")).exists();
    Cli bad = Cli.run("save", "--library", library, "--image", dir.resolve("t.bsave"), "--tag",
        "a,b");
    assertThat(bad.exit()).isEqualTo(1);
    assertThat(bad.err()).contains("--tag 'a,b': a tag is 1 to 64 of");
  }

  @Test
  void pruneOnADirectoryIsADryRunUntilYesAndForgetsTheLedgerRecords() throws Exception {
    Path at = Files.createDirectories(dir.resolve("daily"));
    List<String> stamps = List.of("20261126T020000Z", "20261127T020000Z", "20261128T020000Z",
        "20261129T020000Z");
    for (String s : stamps) {
      Path copy = at.resolve("payroll-" + s + ".bsave");
      Files.copy(image, copy);
      Ledger.append(at.toString(), null, new Ledger.Record("save", "payroll", "zstd:3", "none",
          "compress at save", Instant.now(), Instant.now(), 1, 10, Files.size(copy),
          copy.toAbsolutePath().toString()));
    }
    Cli dry = Cli.ok("prune", "--at", at, "--keep-last", "2");
    assertThat(dry.out()).contains("would delete 2 images")
        .containsPattern("delete .*payroll-20261126T020000Z.bsave")
        .containsPattern("keep .*payroll-20261129T020000Z.bsave  \\(last 1\\)");
    try (Stream<Path> s = Files.list(at)) {
      assertThat(s.filter(p -> p.toString().endsWith(".bsave"))).hasSize(4);
    }
    Cli.ok("prune", "--at", at, "--keep-last", "2", "--yes");
    assertThat(at.resolve("payroll-20261126T020000Z.bsave")).doesNotExist();
    assertThat(at.resolve("payroll-20261127T020000Z.bsave")).doesNotExist();
    assertThat(at.resolve("payroll-20261128T020000Z.bsave")).exists();
    assertThat(Ledger.read(at.toString(), null)).extracting(Ledger.Record::where)
        .containsExactlyInAnyOrder(at.resolve("payroll-20261128T020000Z.bsave").toString(),
            at.resolve("payroll-20261129T020000Z.bsave").toString());
  }

  @Test
  void pruneOnS3KeepsTheNewestAndAnyImageWhoseUploadIsInProgress() throws Exception {
    S3Store store = S3Store.at(server.settings(), new ObjectUri("keep", ""));
    String[] stamps = {"20261101T020000Z", "20261102T020000Z", "20261103T020000Z"};
    for (String s : stamps) {
      Cli.ok("upload", "--from", image, "--to", "s3://keep/n/payroll-" + s + ".bsave", "--quiet",
          "--s3-endpoint", server.endpoint());
    }
    // Someone is re-uploading the oldest image right now.
    ObjectUri busy = new ObjectUri("keep", "n/payroll-20261101T020000Z.bsave");
    byte[] state = "uploadId=x\n".getBytes();
    store.put(ImageUpload.stateObject(busy).key(), state, state.length, "text/plain");

    Cli c = Cli.ok("prune", "--at", "s3://keep/n", "--keep-last", "1", "--yes",
        "--s3-endpoint", server.endpoint());
    assertThat(c.out()).contains("deleted 1 image")
        .containsPattern("keep .*payroll-20261101T020000Z.bsave  \\(upload in progress\\)");
    assertThat(store.stat(busy.key())).isPresent();
    assertThat(store.stat("n/payroll-20261102T020000Z.bsave")).isEmpty();
    assertThat(store.stat("n/payroll-20261103T020000Z.bsave")).isPresent();
    assertThat(Ledger.read("s3://keep/n", server.settings())).extracting(Ledger.Record::where)
        .doesNotContain("s3://keep/n/payroll-20261102T020000Z.bsave")
        .contains("s3://keep/n/payroll-20261103T020000Z.bsave");
  }
}

package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code beamsave diff}: each kind of change between two images of a library, along an
 * incremental chain and between full images, answered from the catalogs where they can.
 */
class DiffTest {
  @TempDir static Path dir;
  static Path lib;
  static Path full;
  static Path incremental;
  static Path again;
  static Path otherCut;

  @BeforeAll
  static void save() throws Exception {
    lib = Files.createDirectories(dir.resolve("lib"));
    Files.createDirectories(lib.resolve("docs"));
    Files.writeString(lib.resolve("docs/kept.txt"), "never changes\n");
    Files.writeString(lib.resolve("docs/edited.txt"), "first draft\n");
    Files.writeString(lib.resolve("docs/touched.txt"), "same bytes\n");
    Files.writeString(lib.resolve("gone.txt"), "to be removed\n");
    Files.writeString(lib.resolve("becomes-dir"), "a file at first\n");
    Files.createSymbolicLink(lib.resolve("link"), Path.of("docs/kept.txt"));
    byte[] big = new byte[3 << 20];
    new Random(4).nextBytes(big);
    Files.write(lib.resolve("big.bin"), big);
    full = dir.resolve("full.bsave");
    Cli.ok("save", "--library", lib, "--image", full, "-q");

    Files.writeString(lib.resolve("docs/edited.txt"), "second draft\n");
    Files.setLastModifiedTime(lib.resolve("docs/touched.txt"), FileTime.fromMillis(1_000_000));
    Files.setPosixFilePermissions(lib.resolve("docs/touched.txt"),
        PosixFilePermissions.fromString("rw-------"));
    Files.delete(lib.resolve("gone.txt"));
    Files.delete(lib.resolve("becomes-dir"));
    Files.createDirectories(lib.resolve("becomes-dir"));
    Files.writeString(lib.resolve("added.txt"), "new\n");
    Files.delete(lib.resolve("link"));
    Files.createSymbolicLink(lib.resolve("link"), Path.of("added.txt"));
    incremental = dir.resolve("incremental.bsave");
    Cli.ok("save", "--library", lib, "--image", incremental, "--base", full, "-q");
    again = dir.resolve("again.bsave");
    Cli.ok("save", "--library", lib, "--image", again, "-q");
    otherCut = dir.resolve("other-cut.bsave");
    Cli.ok("save", "--library", lib, "--image", otherCut, "--shard-size", "1MiB",
        "--block-size", "256KiB", "-q");
  }

  @Test
  void eachKindOfChangeHasItsMarker() {
    Cli d = Cli.ok("diff", full, incremental);
    List<String> lines = d.out().lines().toList();
    assertThat(lines).containsExactly(
        "+    added.txt",
        "T    becomes-dir/",
        "M    docs/edited.txt",
        "U    docs/touched.txt",
        "-    gone.txt",
        "M    link",
        "1 entry added (4 B of files), 1 entry removed (14 B), 2 entries changed in content,"
            + " 1 in metadata only, 1 of another kind");
    // Backwards, the same paths with the opposite markers for what came and went.
    List<String> back = Cli.ok("diff", incremental, full).out().lines().toList();
    assertThat(back).contains("-    added.txt", "+    gone.txt", "T    becomes-dir");
  }

  @Test
  void unchangedFilesAreKnownFromTheCatalogsAlone() {
    // An incremental image's unchanged files are the same pieces of its base (big.bin, in
    // two shards): nothing is read.
    Cli chain = Cli.ok("diff", full, incremental, "--json");
    assertThat(chain.out()).contains("\"filesRead\":0").contains("\"contentChanged\":2");
    assertThat(Cli.ok("diff", full, full).out().strip())
        .isEqualTo("0 entries added (0 B of files), 0 entries removed (0 B), 0 entries"
            + " changed in content, 0 in metadata only, 0 of another kind");
  }

  @Test
  void filesCutIntoOtherPiecesAreComparedByTheirRangesWithoutReading() {
    // big.bin spans shards cut at other offsets (other files before it, another shard size):
    // its pieces tell nothing, the SHA-256 of its ranges (format 13 on) everything.
    Cli d = Cli.ok("diff", again, otherCut, "--json");
    assertThat(d.out().lines().filter(l -> l.contains("\"difference\""))).isEmpty();
    assertThat(d.out()).contains("\"filesRead\":0");
  }

  @Test
  void aMissingImageIsOneLine() {
    Cli d = Cli.run("diff", full, dir.resolve("nothing.bsave"));
    assertThat(d.exit()).isEqualTo(1);
    assertThat(d.err().strip()).startsWith("beamsave: error: ").doesNotContain("\n");
  }
}

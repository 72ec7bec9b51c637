package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A damaged block is reported with the files whose bytes it holds, so the operator knows what
 * the damage costs. Libraries with 4 KiB blocks and files of known sizes laid end to end in path
 * order, so each block's files are known without asking the code under test.
 */
class DamagedFilesTest {
  static final int BLOCK = 4096;

  @TempDir Path tmp;

  static void write(Path file, int size, int seed) throws IOException {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    Files.createDirectories(file.getParent());
    Files.write(file, b);
  }

  /**
   * data/a.bin holds raw bytes [0, 10000) of shard 0 (blocks 0-2), data/b.log [10000, 13000)
   * (blocks 2-3), data/c.bin [13000, 23000) (blocks 3-5).
   */
  Path saveThreeFiles() throws IOException {
    Path lib = tmp.resolve("lib");
    write(lib.resolve("data/a.bin"), 10_000, 1);
    write(lib.resolve("data/b.log"), 3_000, 2);
    write(lib.resolve("data/c.bin"), 10_000, 3);
    Path image = tmp.resolve("lib.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--block-size", "4KiB", "--shard-size",
        "64MiB", "--quiet");
    return image;
  }

  /** Flips a byte inside the payload of block {@code k} of shard 0. */
  static void damage(Path image, int k) throws IOException {
    assertThat(ImageReader.readCatalog(image).shards()).hasSize(1);
    damage(image, 0, k);
  }

  /** Flips a byte inside the payload of block {@code k} of shard {@code shard}. */
  static void damage(Path image, int shard, int k) throws IOException {
    Catalog c = ImageReader.readCatalog(image);
    assertThat(c.blockSize()).isEqualTo(BLOCK);
    long at = c.shards().get(shard).blockOffset(k) + 20;
    byte[] b = Files.readAllBytes(image);
    b[(int) at] ^= 0x10;
    Files.write(image, b);
  }

  static String oneErrorLine(Cli c) {
    assertThat(c.exit()).as(c.err()).isEqualTo(1);
    assertThat(c.err().lines().filter(l -> !l.isBlank()).toList()).as(c.err()).hasSize(1);
    assertThat(c.err()).doesNotContain("\tat ");
    return c.err().strip();
  }

  @Test
  void aDamagedBlockInsideOneFileNamesThatFileAlone() throws IOException {
    Path image = saveThreeFiles();
    damage(image, 0);
    String line = oneErrorLine(Cli.run("verify", "--image", image, "--quiet"));
    assertThat(line)
        .startsWith("beamsave: error: " + image + ": shard 0 block 0 (image offset ")
        .contains("checksum mismatch")
        .endsWith("; damaged file: data/a.bin");
  }

  @Test
  void aDamagedBlockThatSpansTwoFilesNamesBoth() throws IOException {
    Path image = saveThreeFiles();
    damage(image, 3);
    String line = oneErrorLine(Cli.run("verify", "--image", image, "--quiet"));
    assertThat(line)
        .contains(": shard 0 block 3 (image offset ")
        .contains("checksum mismatch")
        .endsWith("; damaged files: data/b.log, data/c.bin");
    // A restore meets the same block and says the same.
    String restore = oneErrorLine(
        Cli.run("restore", "--image", image, "--target", tmp.resolve("back"), "--quiet"));
    assertThat(restore).contains("shard 0 block 3")
        .contains("; damaged files: data/b.log, data/c.bin")
        .endsWith("; restore --skip-damaged restores every file whose blocks check");
  }

  @Test
  void manyFilesInADamagedBlockAreNamedFirstFewThenCountedAndEscaped() throws IOException {
    Path lib = tmp.resolve("many");
    // A newline in a name must not break the one line: it prints as \x0a, as list prints it.
    write(lib.resolve("f\nx"), 300, 10);
    for (int i = 0; i < 7; i++) {
      write(lib.resolve("f" + i), 300, i);
    }
    Path image = tmp.resolve("many.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--block-size", "4KiB", "--shard-size",
        "64MiB", "--quiet");
    damage(image, 0);
    String line = oneErrorLine(Cli.run("verify", "--image", image, "--quiet"));
    assertThat(line).endsWith("; damaged files: f\\x0ax, f0, f1, f2, f3 and 3 more");
  }

  @Test
  void skipDamagedRestoresEveryFileWhoseBlocksCheckNamesTheOthersAndBlocksNoRerun()
      throws IOException {
    Path image = saveThreeFiles();
    Files.createLink(tmp.resolve("lib/data/z-link"), tmp.resolve("lib/data/c.bin"));
    image = tmp.resolve("linked.bsave");
    Cli.ok("save", "--library", tmp.resolve("lib"), "--image", image, "--block-size", "4KiB",
        "--shard-size", "64MiB", "--quiet");
    damage(image, 3);
    for (String pipeline : java.util.List.of("never", "always")) {
      Path back = tmp.resolve("back-" + pipeline);
      for (int attempt = 1; attempt <= 2; attempt++) {
        // The second attempt goes into the tree the first left: nothing blocks it.
        Cli r = Cli.run("restore", image, "--target", back, "--skip-damaged", "--overwrite",
            "--pipeline", pipeline, "--quiet");
        assertThat(r.exit()).as(r.err()).isEqualTo(3);
        assertThat(r.err().lines().filter(l -> l.startsWith("beamsave: damaged, not restored: "))
            .map(l -> l.substring(33, l.indexOf(':', 33))).toList())
            .containsExactly("data/b.log", "data/c.bin", "data/z-link");
        assertThat(r.err()).contains("shard 0 block 3").doesNotContain("\tat ");
        assertThat(back.resolve("data/a.bin")).hasSameBinaryContentAs(
            tmp.resolve("lib/data/a.bin"));
        assertThat(back.resolve("data/b.log")).doesNotExist();
        assertThat(back.resolve("data/c.bin")).doesNotExist();
        assertThat(back.resolve("data/z-link")).doesNotExist();
        assertThat(leftovers(back)).as("temporary files, records, markers").isEmpty();
      }
    }
  }

  @Test
  void aDamagedPieceOfAFileSplitOverShardsLeavesOutThatFileAndNothingOfIt() throws IOException {
    Path lib = tmp.resolve("split");
    write(lib.resolve("big.bin"), 40_000, 7);
    write(lib.resolve("small.txt"), 100, 8);
    Path image = tmp.resolve("split.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--block-size", "4KiB", "--shard-size",
        "16KiB", "--quiet");
    assertThat(ImageReader.readCatalog(image).shards().size()).isGreaterThan(2);
    damage(image, 1, 1);
    Path back = tmp.resolve("split-back");
    Cli r = Cli.run("restore", image, "--target", back, "--skip-damaged", "--json", "--quiet");
    assertThat(r.exit()).as(r.err()).isEqualTo(3);
    assertThat(r.out()).contains("\"type\":\"damaged\",\"path\":\"big.bin\"");
    assertThat(back.resolve("small.txt")).hasSameBinaryContentAs(lib.resolve("small.txt"));
    assertThat(back.resolve("big.bin")).doesNotExist();
    assertThat(leftovers(back)).isEmpty();
  }

  /** beamsave's own names left in {@code dir}: temporary files, records, markers. */
  static java.util.List<Path> leftovers(Path dir) throws IOException {
    try (var walk = Files.walk(dir)) {
      return walk.filter(p -> p.getFileName().toString().startsWith(".beamsave-")).toList();
    }
  }
}

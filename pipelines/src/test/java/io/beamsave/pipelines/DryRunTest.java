package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --dry-run}: what a save or restore would do, and nothing written. */
class DryRunTest {
  @TempDir static Path dir;
  static Path lib;
  static Path base;

  @BeforeAll
  static void save() throws Exception {
    lib = Files.createDirectories(dir.resolve("lib"));
    Files.createDirectories(lib.resolve("sub"));
    Files.writeString(lib.resolve("sub/a.txt"), "aaaa\n");
    Files.writeString(lib.resolve("b.txt"), "bb\n");
    Files.writeString(lib.resolve("skip.tmp"), "left out\n");
    base = dir.resolve("store/base.bsave");
    Files.createDirectories(base.getParent());
    Cli.ok("save", "--library", lib, "--image", base, "-q");
  }

  static List<String> everything(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      return s.map(Path::toString).sorted().toList();
    }
  }

  @Test
  void aSaveDryRunSaysWhatAndHowMuchAndWritesNothing() throws Exception {
    List<String> before = everything(dir);
    Cli full = Cli.ok("save", "--library", lib, "--image", dir.resolve("new/dir/x.bsave"),
        "--exclude", "*.tmp", "--dry-run");
    assertThat(full.out()).isEqualTo("lib: 3 entries, 2 files, 8 B, to "
        + dir.resolve("new/dir/x.bsave") + " (a full save)\ndry run: nothing was written\n");
    Files.writeString(lib.resolve("c.txt"), "new file\n");
    try {
      Cli incremental = Cli.ok("save", "--library", lib, "--image", dir.resolve("store/y.bsave"),
          "--base", base, "--dry-run", "--json");
      assertThat(incremental.out()).contains("\"type\":\"dryRun\"").contains("\"files\":4")
          .contains("\"unchangedFiles\":3").contains("\"base\":\"" + base + "\"");
      assertThat(everything(dir)).isEqualTo(
          Stream.concat(before.stream(), Stream.of(lib.resolve("c.txt").toString())).sorted()
              .toList());
    } finally {
      Files.delete(lib.resolve("c.txt"));
    }
  }

  @Test
  void aRestoreDryRunSaysWhatWouldBeWrittenWhereAndWritesNothing() throws Exception {
    Path target = dir.resolve("target");
    Cli all = Cli.ok("restore", base, "--target", target, "--dry-run");
    assertThat(all.out()).isEqualTo("would restore 3 files (17 B) and 1 other entry into "
        + target + " (created)\ndry run: nothing was written\n");
    assertThat(target).doesNotExist();
    Cli some = Cli.ok("restore", base, "--target", target, "--include", "sub/*", "--dry-run");
    assertThat(some.out()).startsWith("would restore 1 file (5 B) and 1 other entry into ");
    // What a restore refuses first, a dry run refuses too.
    Cli full = Cli.run("restore", base, "--target", lib, "--dry-run");
    assertThat(full.exit()).isEqualTo(1);
    assertThat(full.err().strip()).isEqualTo("beamsave: error: target " + lib
        + " is not empty; use --overwrite to restore into it");
    assertThat(Cli.ok("restore", base, "--target", lib, "--overwrite", "--dry-run").out())
        .startsWith("would restore 3 files (17 B) and 1 other entry into " + lib + "\n");
  }
}

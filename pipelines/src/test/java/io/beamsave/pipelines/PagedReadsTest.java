package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What reads of a paged catalog look like from the command line: {@code list PATH} of a
 * directory across page breaks, {@code restore --include} of named paths (the catalog pages they
 * need only), and reads in this process or in a pipeline, which must restore the same bytes.
 */
class PagedReadsTest {
  @TempDir static Path dir;
  static Path library;
  static Path image;

  @BeforeAll
  static void save() throws Exception {
    library = dir.resolve("lib");
    // 3,000 entries: several catalog pages, with directories that span page breaks.
    for (int d = 0; d < 6; d++) {
      Path sub = library.resolve("dir" + d);
      Files.createDirectories(sub);
      for (int f = 0; f < 500; f++) {
        Files.writeString(sub.resolve("file-" + f + ".txt"), "dir " + d + " file " + f + "\n");
      }
    }
    Files.writeString(library.resolve("dir1-beside"), "not under dir1\n");
    Files.write(library.resolve("caf\u00e9"), "latin".getBytes(StandardCharsets.UTF_8));
    image = dir.resolve("lib.bsave");
    Cli.ok("save", "--library", library, "--image", image, "-q");
  }

  @Test
  void listOfAPathShowsItAndWhatIsBeneathItOnly() {
    Cli all = Cli.ok("list", image);
    Cli one = Cli.ok("list", image, "dir1");
    List<String> paths = one.out().lines().filter(l -> l.matches("^[dfl][?!]? .*"))
        .map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList();
    assertThat(paths).hasSize(501).startsWith("dir1").doesNotContain("dir1-beside");
    assertThat(paths.subList(1, 501)).allMatch(p -> p.startsWith("dir1/"));
    assertThat(one.out()).contains("500 files").contains("3008 entries");
    // The whole listing is in path order: a directory's contents follow it at once.
    List<String> order = all.out().lines().filter(l -> l.matches("^[dfl][?!]? .*"))
        .map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList();
    assertThat(order.indexOf("dir1-beside")).isGreaterThan(order.indexOf("dir1/file-99.txt"));
    Cli file = Cli.ok("list", image, "dir5/file-7.txt");
    assertThat(file.out()).contains("dir5/file-7.txt").contains("1 file, ");
    Cli missing = Cli.run("list", image, "dir9");
    assertThat(missing.exit()).isNotZero();
    assertThat(missing.err().strip()).doesNotContain("\n").contains("holds no entry 'dir9'");
  }

  @Test
  void listTakesSeveralPathsAndPatterns() {
    Cli some = Cli.ok("list", image, "dir2/file-1.txt", "dir4/file-2*.txt", "caf\u00e9");
    List<String> paths = some.out().lines().filter(l -> l.matches("^[dfl][?!]? .*"))
        .map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList();
    assertThat(paths).first().isEqualTo("dir2/file-1.txt");
    assertThat(paths).contains("dir4/file-2.txt", "dir4/file-29.txt", "dir4/file-299.txt",
        "caf\u00e9").doesNotContain("dir4/file-3.txt", "dir2/file-2.txt");
    // dir4/file-2*.txt: file-2.txt, file-20..29.txt, file-200..299.txt.
    assertThat(paths).hasSize(1 + 111 + 1);
    Cli anywhere = Cli.ok("list", image, "*-499.txt", "--json");
    assertThat(anywhere.out().lines().filter(l -> l.contains("\"type\":\"entry\""))).hasSize(6);
    Cli none = Cli.run("list", image, "dir1", "*.nothing");
    assertThat(none.exit()).isEqualTo(1);
    assertThat(none.err().strip()).isEqualTo(
        "beamsave: error: no entry of " + image + " matches '*.nothing'");
  }

  @Test
  void catWritesOneFileAndRefusesWhatIsNoFile() throws Exception {
    Path out = dir.resolve("cat-out");
    Cli.ok("cat", image, "dir3/file-42.txt", "--output", out);
    assertThat(Files.readString(out)).isEqualTo("dir 3 file 42\n");
    Cli exists = Cli.run("cat", image, "dir3/file-43.txt", "--output", out);
    assertThat(exists.exit()).isEqualTo(1);
    assertThat(Files.readString(out)).isEqualTo("dir 3 file 42\n");
    assertThat(Cli.run("cat", image, "dir3").err().strip())
        .isEqualTo("beamsave: error: dir3 is a directory");
    // The image named with --image, the path positionally, as every reading command takes it.
    Path second = dir.resolve("cat-out-2");
    Cli.ok("cat", "--image", image, "dir3/file-44.txt", "--output", second);
    assertThat(Files.readString(second)).isEqualTo("dir 3 file 44\n");
    assertThat(Cli.ok("list", "--image", image, "dir3/file-44.txt").out())
        .contains("dir3/file-44.txt").contains("1 file, ");
    assertThat(Cli.run("cat", image, "dir3/file-44.txt/").err().strip())
        .isEqualTo("beamsave: error: dir3/file-44.txt is not a directory");
    assertThat(Cli.run("cat", image, "dir3/file-44.txt", "-o", dir.resolve("no/such/x"))
        .err().strip()).isEqualTo("beamsave: error: cannot create " + dir.resolve("no/such/x")
            + ": its directory does not exist");
    assertThat(Cli.run("cat", image, "dir3/nothing").err().strip())
        .isEqualTo("beamsave: error: " + image + " holds no entry 'dir3/nothing'");
  }

  @Test
  void restoreOfNamedPathsInThisProcessOrAPipelineGivesTheSameBytes() throws Exception {
    for (String use : List.of("auto", "never", "always")) {
      Path target = dir.resolve("t-" + use);
      Cli.ok("restore", image, "--target", target, "--include", "dir2",
          "--include", "/dir4/file-3.txt", "--pipeline", use, "-q");
      assertThat(Files.list(target.resolve("dir2")).count()).isEqualTo(500);
      assertThat(Files.readString(target.resolve("dir2/file-17.txt")))
          .isEqualTo("dir 2 file 17\n");
      assertThat(Files.list(target.resolve("dir4")).map(p -> p.getFileName().toString()))
          .containsExactly("file-3.txt");
      assertThat(Files.getLastModifiedTime(target.resolve("dir4")))
          .isEqualTo(Files.getLastModifiedTime(library.resolve("dir4")));
      assertThat(Files.exists(target.resolve("dir1"))).isFalse();
    }
  }

  @Test
  void anIncrementalSaveAgainstAManyPagedBaseRestoresTheNewTree() throws Exception {
    Path changed = dir.resolve("lib2");
    Cli.ok("restore", image, "--target", changed, "-q");
    Files.writeString(changed.resolve("dir3/file-250.txt"), "changed since the base\n");
    Files.writeString(changed.resolve("dir0/zz-new.txt"), "new\n");
    Files.delete(changed.resolve("dir5/file-1.txt"));
    // The base's files restored keep their times, but not their inodes and ctimes: save the
    // restored tree once as the base, then change it.
    Path base = dir.resolve("base.bsave");
    Cli.ok("save", "--library", changed, "--image", base, "-q");
    Files.writeString(changed.resolve("dir1/file-9.txt"), "changed after the base\n");
    Path inc = dir.resolve("inc.bsave");
    Cli.ok("save", "--library", changed, "--image", inc, "--base", base, "-q");
    Cli listed = Cli.ok("list", inc, "--sources");
    assertThat(listed.out()).contains("incremental (save 1 of its chain)");
    assertThat(listed.out().lines().filter(l -> l.endsWith("dir1/file-9.txt")).findFirst()
        .orElseThrow()).contains(" .  ");
    assertThat(listed.out().lines().filter(l -> l.endsWith("dir1/file-8.txt")).findFirst()
        .orElseThrow()).contains("base.bsave");
    Path back = dir.resolve("back");
    Cli.ok("restore", inc, "--target", back, "-q");
    assertThat(TreeSnapshot.of(back).diff(TreeSnapshot.of(changed))).isNull();
    Path one = dir.resolve("one");
    Cli.ok("restore", inc, "--target", one, "--include", "dir3/file-250.txt", "-q");
    assertThat(Files.readString(one.resolve("dir3/file-250.txt")))
        .isEqualTo("changed since the base\n");
  }

  @Test
  void aWholeRestoreAndVerifyInThisProcessMatchTheLibrary() throws Exception {
    Path target = dir.resolve("whole");
    Cli.ok("restore", image, "--target", target, "--pipeline", "never", "-q");
    assertThat(Arrays.equals(Files.readAllBytes(target.resolve("caf\u00e9")),
        Files.readAllBytes(library.resolve("caf\u00e9")))).isTrue();
    assertThat(Files.readString(target.resolve("dir5/file-499.txt")))
        .isEqualTo("dir 5 file 499\n");
    Cli v = Cli.ok("verify", image, "--pipeline", "never");
    assertThat(v.out()).contains("OK");
    Cli bad = Cli.run("verify", image, "--pipeline", "sometimes");
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.err()).contains("'sometimes' is not one of auto, always, never");
  }
}

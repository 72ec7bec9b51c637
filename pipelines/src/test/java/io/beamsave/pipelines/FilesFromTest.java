package io.beamsave.pipelines;

import static io.beamsave.pipelines.ExcludesTest.paths;
import static io.beamsave.pipelines.ExcludesTest.write;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * save --files-from: only the listed entries, listed directories whole, the directories on the
 * way, excludes on top; a missing path is a warning naming the line and exit 3; a path outside
 * the library is refused naming the line.
 */
class FilesFromTest {
  @TempDir Path dir;

  private Path library() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    write(lib, "top.txt", "top");
    write(lib, "other.txt", "not listed");
    write(lib, "etc/app/app.conf", "listed deep");
    write(lib, "etc/app/unlisted.conf", "a sibling of a listed file");
    write(lib, "etc/hosts", "not listed either");
    write(lib, "home/ann/notes.txt", "under a listed directory");
    write(lib, "home/ann/scratch.tmp", "under a listed directory, but excluded");
    write(lib, "home/ann/deep/more.txt", "deeper under it");
    write(lib, "home/bob/secret.txt", "not listed");
    write(lib, "#hash", "a name that begins with #");
    return lib;
  }

  @Test
  void savesExactlyTheListedEntriesTheirParentsAndListedDirectoriesWhole() throws Exception {
    Path lib = library();
    Files.setPosixFilePermissions(lib.resolve("etc/app"), PosixFilePermissions.fromString("rwxr-x---"));
    Path list = Files.writeString(dir.resolve("list"), String.join("\n",
        "# what to save",
        "top.txt",
        "",
        "etc/app/app.conf",
        lib.resolve("home/ann") + "/",
        "./#hash",
        "home//ann/./notes.txt",
        ""));
    Path image = dir.resolve("out/lib.bsave");
    Path json = dir.resolve("report.json");

    Cli save = Cli.ok("save", "--library", lib, "--image", image, "--files-from", list,
        "--exclude", "*.tmp", "--report-json", json, "--quiet");

    assertThat(save.err()).doesNotContain("warning");
    assertThat(paths(image)).containsExactlyInAnyOrder(
        "top.txt", "etc", "etc/app", "etc/app/app.conf", "home", "home/ann",
        "home/ann/notes.txt", "home/ann/deep", "home/ann/deep/more.txt", "#hash");
    Map<?, ?> report = new ObjectMapper().readValue(json.toFile(), Map.class);
    assertThat(report.get("listedMissing")).isEqualTo(0);

    Path target = dir.resolve("restored");
    Cli.ok("restore", "--image", image, "--target", target, "--quiet");
    assertThat(target.resolve("etc/app/app.conf")).hasContent("listed deep");
    assertThat(target.resolve("etc/app/unlisted.conf")).doesNotExist();
    assertThat(Files.getPosixFilePermissions(target.resolve("etc/app")))
        .as("a parent on the way comes back with its own metadata")
        .isEqualTo(PosixFilePermissions.fromString("rwxr-x---"));
  }

  @Test
  void aNulSeparatedListMayNameAnyFile() throws Exception {
    Path lib = library();
    write(lib, "line\nbreak.txt", "a newline in the name");
    Path list = dir.resolve("list0");
    Files.write(list, "line\nbreak.txt\0#hash\0".getBytes(StandardCharsets.UTF_8));
    Path image = dir.resolve("out/lib.bsave");

    Cli.ok("save", "--library", lib, "--image", image, "--files-from", list, "--from0",
        "--quiet");

    assertThat(paths(image)).containsExactlyInAnyOrder("line\\x0abreak.txt", "#hash");
  }

  @Test
  void aListedPathTheLibraryLacksIsAWarningNamingTheLineAndExit3() throws Exception {
    Path lib = library();
    Path list = Files.writeString(dir.resolve("list"), "top.txt\n# a comment\ngone.txt\n"
        + "top.txt/below\netc/nothing/here\n");
    Path image = dir.resolve("out/lib.bsave");

    Cli save = Cli.run("save", "--library", lib, "--image", image, "--files-from", list,
        "--quiet");

    assertThat(save.exit()).as(save.err()).isEqualTo(3);
    assertThat(save.err().lines().filter(l -> l.contains("warning")).toList()).containsExactly(
        "beamsave: warning: --files-from " + list + " line 3: 'gone.txt' is not in the"
            + " library; skipped",
        "beamsave: warning: --files-from " + list + " line 4: 'top.txt/below' is not in the"
            + " library; skipped",
        "beamsave: warning: --files-from " + list + " line 5: 'etc/nothing/here' is not in the"
            + " library; skipped");
    assertThat(paths(image)).as("what is there is saved").containsExactlyInAnyOrder(
        "top.txt", "etc");
  }

  @Test
  void aPathOutsideTheLibraryIsRefusedNamingTheLine() throws Exception {
    Path lib = library();
    Path list = Files.writeString(dir.resolve("list"), "top.txt\n" + dir.resolve("elsewhere")
        + "\n");
    Path image = dir.resolve("out/lib.bsave");

    Cli save = Cli.run("save", "--library", lib, "--image", image, "--files-from", list);

    assertThat(save.exit()).isEqualTo(1);
    assertThat(save.err().strip()).isEqualTo("beamsave: error: --files-from " + list
        + " line 2: '" + dir.resolve("elsewhere") + "' is not in the library " + lib.toRealPath());
    try (Stream<Path> s = Files.list(image.getParent())) {
      assertThat(s.toList()).as("no image, partial image or staging").isEmpty();
    }

    Files.writeString(list, "etc/../top.txt\n");
    Cli dotDot = Cli.run("save", "--library", lib, "--image", image, "--files-from", list);
    assertThat(dotDot.exit()).isEqualTo(1);
    assertThat(dotDot.err().strip()).isEqualTo("beamsave: error: --files-from " + list
        + " line 1: 'etc/../top.txt' has a '..' component; list the path without it");
  }

  @Test
  void helpExplainsTheOptionsAndTheExitCodes() {
    Cli help = Cli.ok("save", "--help");
    assertThat(help.out()).contains("--files-from=FILE", "--from0", "--skip-unreadable",
        "Exit codes:", "3   the images are complete and usable but partial");
  }
}

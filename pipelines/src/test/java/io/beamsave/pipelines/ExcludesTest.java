package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.select.Excludes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a save leaves out: --exclude and --exclude-file patterns with gitignore's rules,
 * --exclude-caches, and beamsave's own files when the image is written inside the library; and
 * --include at restore, which shares the matcher.
 */
class ExcludesTest {
  @TempDir Path dir;

  static List<String> paths(Path image) throws Exception {
    return ImageReader.readCatalog(image).entries().stream().map(Entry::path)
        .map(Object::toString).toList();
  }

  static void write(Path root, String rel, String text) throws Exception {
    Files.createDirectories(root.resolve(rel).getParent());
    Files.writeString(root.resolve(rel), text);
  }

  @Test
  void patternsAndCachesLeaveOutWhatTheyMatchAndNothingElse() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    write(lib, "keep.txt", "kept");
    write(lib, "notes.tmp", "left out at the top");
    write(lib, "sub/notes.tmp", "and at any depth");
    write(lib, "sub/deep/keep2.txt", "kept");
    write(lib, "sub/deep/x.log", "left out by the exclude file");
    write(lib, "build/out.bin", "a directory named build: left out with its contents");
    write(lib, "docs/build", "a file named build: kept, 'build/' names directories only");
    write(lib, "var/log/old.gz", "anchored: left out");
    write(lib, "other/var/log/old.gz", "anchored elsewhere: kept");
    write(lib, "cache/" + Excludes.CACHE_TAG, Excludes.CACHE_SIGNATURE + "\n# a cache\n");
    write(lib, "cache/blob", "a cache's contents: left out");
    write(lib, "fakecache/" + Excludes.CACHE_TAG, "not the signature");
    write(lib, "fakecache/blob", "kept: the tag is not a real one");
    Path excludeFile = Files.writeString(dir.resolve("excludes"), "# logs\n\n*.log\n");
    Path image = dir.resolve("out/lib.bsave");

    Cli.ok("save", "--library", lib, "--image", image, "--exclude", "*.tmp",
        "--exclude", "build/", "--exclude", "var/log/*.gz", "--exclude-file", excludeFile,
        "--exclude-caches", "--quiet");

    assertThat(paths(image)).containsExactlyInAnyOrder(
        "keep.txt", "sub", "sub/deep", "sub/deep/keep2.txt", "docs", "docs/build", "var",
        "var/log", "other", "other/var", "other/var/log", "other/var/log/old.gz", "cache",
        "cache/" + Excludes.CACHE_TAG, "fakecache", "fakecache/" + Excludes.CACHE_TAG,
        "fakecache/blob");

    // --include shares the matcher: a pattern without a '/' matches at any depth.
    Path target = dir.resolve("restored");
    Cli.ok("restore", "--image", image, "--target", target, "--include", "*.txt", "--quiet");
    assertThat(target.resolve("keep.txt")).hasContent("kept");
    assertThat(target.resolve("sub/deep/keep2.txt")).hasContent("kept");
    assertThat(target.resolve("docs")).doesNotExist();
  }

  @Test
  void aSaveIntoTheLibraryNeverTakesInItsOwnImagesLedgerOrStaging() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    write(lib, "data.txt", "the data");
    Path backups = lib.resolve("backups");
    Cli.ok("save", "--library", lib, "--image", backups.resolve("first.bsave"), "--quiet");
    Cli.ok("save", "--library", lib, "--image", backups.resolve("second.bsave"), "--quiet");
    assertThat(paths(backups.resolve("second.bsave")))
        .as("the first image and anything beamsave keeps beside it stay out")
        .containsExactlyInAnyOrder("data.txt", "backups");
  }

  @Test
  void aPatternThatMatchedNothingIsSaidWithAHint() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    write(lib, "logs/app.log", "kept");
    Cli save = Cli.ok("save", "--library", lib, "--image", dir.resolve("x.bsave"),
        "--exclude", ".log", "--exclude", "app/*.log", "--exclude", "logs/", "--quiet");
    assertThat(save.err().lines().filter(l -> l.contains("matched nothing")).toList())
        .containsExactly(
            "beamsave: warning: --exclude '.log' matched nothing; a pattern matches whole names"
                + " ('*.log' matches names ending so)",
            "beamsave: warning: --exclude 'app/*.log' matched nothing; a pattern with a '/' is"
                + " matched from the library's top ('**/app/*.log' matches at any depth)");
  }

  @Test
  void aPatternThatDoesNotCompileIsOneLineNamingIt() {
    Cli save = Cli.run("save", "--library", dir, "--image", dir.resolve("x.bsave"),
        "--exclude", "[a", "--quiet");
    assertThat(save.exit()).isEqualTo(1);
    assertThat(save.err().strip()).isEqualTo("beamsave: error: --exclude '[a': '[' without ']'");
  }
}

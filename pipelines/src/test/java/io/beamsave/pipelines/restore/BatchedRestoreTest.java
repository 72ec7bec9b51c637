package io.beamsave.pipelines.restore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.pipelines.Cli;
import io.beamsave.pipelines.Trees;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.read.RestoreTarget;
import io.beamsave.transforms.store.S3Settings;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole restore in batches far smaller than the tree, so that every rule that spans batches
 * is crossed: a directory's metadata set only once all beneath it is placed (a read-only
 * directory with files in later batches, directory mtimes that creating children would move),
 * a file larger than a batch, an incremental image whose unchanged files are read from its
 * base, and a failure half-way, which leaves whole files and the marker that says so.
 */
class BatchedRestoreTest {
  @TempDir Path dir;

  private static final BatchedRestore.Limits TINY = new BatchedRestore.Limits(7, 4096);

  private Path library() throws Exception {
    Path lib = dir.resolve("lib");
    Trees.tinyFiles(lib, 300);
    Trees.deepNesting(lib);
    Trees.linksAndEmpties(lib);
    Trees.unicodeNames(lib);
    Trees.mixedData(lib, 200_000);
    Path locked = Files.createDirectories(lib.resolve("locked/inner"));
    for (int i = 0; i < 20; i++) {
      Files.writeString(locked.resolve("f" + i), "locked " + i);
    }
    Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("r-xr-x---"));
    Files.setPosixFilePermissions(locked.getParent(), PosixFilePermissions.fromString("r-x------"));
    FileTime old = FileTime.from(Instant.parse("1999-12-31T23:59:59.987654321Z"));
    Files.setLastModifiedTime(lib.resolve("tiny/d7"), old);
    Files.setLastModifiedTime(lib.resolve("tiny"), old);
    Files.setLastModifiedTime(locked, old);
    Files.setLastModifiedTime(lib.resolve("deep"), old);
    return lib;
  }

  private static RestorePipeline.Outcome restore(Path image, Path target) {
    try (ImageRef ref = ImageRef.of(image.toString(), S3Settings.resolve(null, null, null),
        new PrintWriter(new StringWriter()))) {
      return BatchedRestore.run(ref, ref.head(), RestoreRequest.of(target), null,
          Restore.QUIET, TINY, b -> true);
    }
  }

  private static RestorePipeline.Outcome restore(Path image, Path target, List<String> includes) {
    try (ImageRef ref = ImageRef.of(image.toString(), S3Settings.resolve(null, null, null),
        new PrintWriter(new StringWriter()))) {
      return BatchedRestore.run(ref, ref.head(), RestoreRequest.of(target).withIncludes(includes),
          null, Restore.QUIET, TINY, b -> true);
    }
  }

  /** The paths beneath {@code root}, relative, in any order. */
  private static Set<String> paths(Path root) throws Exception {
    try (var walk = Files.walk(root)) {
      return walk.filter(p -> !p.equals(root)).map(p -> root.relativize(p).toString())
          .collect(Collectors.toSet());
    }
  }

  /**
   * A selection read page by page, kept from the first pass when it fits a batch and read
   * again when it does not, takes what the selection of the whole catalog takes: the matches,
   * what is beneath a matching directory, and the directories above them.
   */
  @Test
  void aSelectionRestoredInBatchesTakesWhatTheWholeCatalogsSelectionTakes() throws Exception {
    Path lib = library();
    Path image = dir.resolve("lib.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--block-size", "4096", "-q");
    List<Entry> all = ImageReader.readCatalog(image).entries();
    List<List<String>> selections = List.of(List.of("tiny/d3/f3.txt"), List.of("*.txt"),
        List.of("tiny/d1*/f1*.txt"), List.of("deep/**"), List.of("locked/"),
        List.of("tiny/d7/*", "/deep/level0/level1/**/bottom.txt", "tiny/d70"),
        List.of("tiny/d9?/", "f2.txt"));
    int n = 0;
    for (List<String> includes : selections) {
      Path target = dir.resolve("selected-" + n++);
      restore(image, target, includes);
      Set<String> expected = Selection.select(all, includes).stream()
          .map(e -> e.path().toString()).collect(Collectors.toSet());
      assertThat(expected).as("%s selects something", includes).isNotEmpty();
      assertThat(paths(target)).as("%s", includes).isEqualTo(expected);
      for (String p : expected) {
        Path got = target.resolve(p);
        if (Files.isRegularFile(got, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          assertThat(got).hasSameBinaryContentAs(lib.resolve(p));
        }
      }
    }
    Path none = dir.resolve("none");
    assertThatThrownBy(() -> restore(image, none, List.of("tiny/d3/nothing*")))
        .hasMessageContaining("matches --include [tiny/d3/nothing*]");
    assertThat(none).doesNotExist();
  }

  @Test
  void aTreeRestoredInBatchesIsTheTreeSaved() throws Exception {
    Path lib = library();
    Path image = dir.resolve("lib.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--block-size", "4096", "-q");
    Path target = dir.resolve("restored");
    RestorePipeline.Outcome o = restore(image, target);
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();
    assertThat(o.files()).isEqualTo(300 + 1 + 4 + 2 + 2 + 20);
    assertThat(o.warnings()).isEmpty();
  }

  @Test
  void anIncrementalImageRestoredInBatchesReadsItsBase() throws Exception {
    Path lib = library();
    Path base = dir.resolve("base.bsave");
    Cli.ok("save", "--library", lib, "--image", base, "-q");
    Files.writeString(lib.resolve("tiny/d3/f3.txt"), "changed since the base");
    Files.delete(lib.resolve("tiny/d4/f4.txt"));
    Files.writeString(lib.resolve("tiny/new.txt"), "new since the base");
    Path next = dir.resolve("next.bsave");
    Cli.ok("save", "--library", lib, "--image", next, "--base", base, "-q");
    Path target = dir.resolve("restored");
    restore(next, target);
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();
  }

  @Test
  void aRestoreThatFailsHalfWayLeavesWholeFilesOnlyAndItsMarker() throws Exception {
    Path lib = library();
    Path image = dir.resolve("lib.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--codec", "none", "--block-size",
        "4096", "-q");
    // Damages the bytes of tiny/d50/f250.txt: its batch comes after many are placed.
    byte[] bytes = Files.readAllBytes(image);
    byte[] content = "file 250".getBytes(StandardCharsets.US_ASCII);
    int at = indexOf(bytes, content);
    assertThat(at).isPositive();
    assertThat(indexOf(Arrays.copyOfRange(bytes, at + 1, bytes.length), content)).isNegative();
    bytes[at] ^= 1;
    Files.write(image, bytes);
    Path target = dir.resolve("restored");
    assertThatThrownBy(() -> restore(image, target))
        .isInstanceOf(BeamsaveException.class)
        .hasMessageNotContaining("\n");
    List<Path> left;
    try (var walk = Files.walk(target)) {
      left = walk.filter(Files::isRegularFile).toList();
    }
    List<Path> markers = left.stream()
        .filter(p -> p.getFileName().toString().startsWith(RestoreTarget.PREFIX)).toList();
    assertThat(markers).hasSize(1).allMatch(p -> p.getParent().equals(target));
    // Batches before the damaged block's were placed.
    assertThat(left.size()).isGreaterThan(3 * TINY.entries());
    for (Path p : left) {
      if (!markers.contains(p)) {
        assertThat(p).hasSameBinaryContentAs(lib.resolve(target.relativize(p)));
      }
    }
    assertThat(target.resolve("tiny/d50/f250.txt")).doesNotExist();
  }

  private static int indexOf(byte[] in, byte[] what) {
    outer:
    for (int i = 0; i + what.length <= in.length; i++) {
      for (int j = 0; j < what.length; j++) {
        if (in[i + j] != what[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}

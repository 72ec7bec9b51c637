package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What was saved comes back exactly: names as the filesystem's bytes (UTF-8 or not), times to the
 * nanosecond over the whole range (before 1970 with a fraction, after 2262) for files,
 * directories, symlinks and the library root; and names print safely.
 */
class NamesAndTimesTest {
  @TempDir Path tmp;
  Path library;

  static final byte[] LATIN1 = {'c', 'a', 'f', (byte) 0xe9};
  static final byte[] FF = {'a', (byte) 0xff};
  static final byte[] FE = {'a', (byte) 0xfe};
  static final byte[] BAD_DIR = {'d', (byte) 0x80, 'r'};

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static void write(Dir dir, byte[] name, String content) throws IOException {
    try (OpenFile f = dir.create(name, 0644)) {
      byte[] c = b(content);
      f.write(0, c, 0, c.length);
    }
  }

  @BeforeEach
  void library() throws IOException {
    library = Files.createDirectories(tmp.resolve("lib"));
    try (Dir root = Dir.open(library)) {
      write(root, LATIN1, "latin-1 name");
      // Two names that decode to the same string under UTF-8 with replacement.
      write(root, FF, "ff");
      write(root, FE, "fe");
      root.mkdir(BAD_DIR, 0755);
      try (Dir sub = root.openDir(BAD_DIR)) {
        write(sub, b("inside"), "in a directory whose name is not UTF-8");
        sub.symlink(LATIN1, b("link-to-latin1"));
        sub.setLinkModified(b("link-to-latin1"), -2, 500_000_000);
        sub.setModified(1_000_000_000L, 1);
      }
      write(root, b("pre-1970"), "old");
      try (OpenFile f = root.openWrite(b("pre-1970"))) {
        f.setModified(-2, 500_000_000); // 1969-12-31T23:59:58.5Z
      }
      write(root, b("post-2262"), "future");
      try (OpenFile f = root.openWrite(b("post-2262"))) {
        f.setModified(10_413_792_000L, 123_456_789); // 2300-01-01T00:00:00.123456789Z
      }
      root.setModified(946_684_799L, 999_999_999);
    }
  }

  @Test
  void namesAreBytesAndComeBackExactly() throws IOException {
    Path image = tmp.resolve("names.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Catalog c = ImageReader.readCatalog(image);
    assertThat(c.entries()).extracting(Entry::path)
        .contains(PathBytes.of(LATIN1), PathBytes.of(FF), PathBytes.of(FE))
        .hasSize(8);
    Cli.ok("verify", "--image", image, "--quiet");
    Path target = tmp.resolve("restored");
    Cli.ok("restore", "--image", image, "--target", target, "--quiet");
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
    try (Dir back = Dir.open(target); OpenFile f = back.openRead(LATIN1)) {
      byte[] content = new byte[64];
      int n = f.read(0, content, 0, content.length);
      assertThat(new String(content, 0, n, StandardCharsets.UTF_8)).isEqualTo("latin-1 name");
    }
  }

  @Test
  void withAllowChangingTwoSuchNamesStayTwoAndNothingReadsAsChanged() throws IOException {
    Path image = tmp.resolve("allow.bsave");
    Cli save = Cli.ok("save", "--library", library, "--image", image, "--allow-changing",
        "--quiet");
    assertThat(save.out()).doesNotContain("changed while being saved");
    Cli.ok("verify", "--image", image, "--quiet");
    Catalog c = ImageReader.readCatalog(image);
    assertThat(c.entries()).noneMatch(Entry::changed);
    Path target = tmp.resolve("allow-restored");
    Cli.ok("restore", "--image", image, "--target", target, "--quiet");
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
  }

  @Test
  void timesComeBackToTheNanosecondForFilesDirectoriesLinksAndTheRoot() throws IOException {
    Path image = tmp.resolve("times.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Catalog c = ImageReader.readCatalog(image);
    assertThat(c.root().mtimeSeconds()).isEqualTo(946_684_799L);
    assertThat(c.root().mtimeNanos()).isEqualTo(999_999_999);
    Entry old = c.entries().stream().filter(e -> e.path().equals(PathBytes.of("pre-1970")))
        .findFirst().orElseThrow();
    assertThat(old.mtimeSeconds()).isEqualTo(-2);
    assertThat(old.mtimeNanos()).isEqualTo(500_000_000);
    Path target = tmp.resolve("times-restored");
    Cli.ok("restore", "--image", image, "--target", target, "--quiet");
    TreeSnapshot got = TreeSnapshot.of(target);
    assertThat(got.entries().get(".")).contains("mtime=946684799.999999999");
    assertThat(got.entries().get("pre-1970")).contains("mtime=-2.500000000");
    assertThat(got.entries().get("post-2262")).contains("mtime=10413792000.123456789");
    assertThat(got.entries().get("d\\x80r/link-to-latin1"))
        .contains("link", "mtime=-2.500000000", "-> caf\\xe9");
    assertThat(got.diff(TreeSnapshot.of(library))).isNull();
  }

  @Test
  void listEscapesWhatIsNotPrintableSoNoNameForgesALineOrDrivesTheTerminal() throws IOException {
    try (Dir root = Dir.open(library)) {
      write(root, b("evil\nf    0644   1  2000-01-01 00:00:00  forged"), "x");
      write(root, b("\u001b]0;owned\u0007\u001b[31mred"), "y");
    }
    Path image = tmp.resolve("list.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Cli list = Cli.ok("list", "--image", image);
    assertThat(list.out())
        .contains("caf\\xe9", "a\\xff", "a\\xfe", "d\\x80r/inside")
        .contains("evil\\x0af    0644")
        .contains("\\x1b]0;owned\\x07\\x1b[31mred")
        .doesNotContain("\u001b")
        .doesNotContain("\u0007");
    assertThat(list.out().lines()).noneMatch(l -> l.startsWith("f    0644   1  2000"));
    assertThat(list.out()).contains("1969-12-31 23:59:58  pre-1970")
        .contains("2300-01-01 00:00:00  post-2262");
  }

  @Test
  void includeMatchesNamesThatAreNotUtf8ByTheirEscapes() throws IOException {
    Path image = tmp.resolve("include.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path target = tmp.resolve("some");
    Cli.ok("restore", "--image", image, "--target", target, "--include", "caf\\xe9",
        "--include", "d\\x80r/*", "--quiet");
    assertThat(TreeSnapshot.of(target).entries().keySet()).containsExactlyInAnyOrder(
        ".", "caf\\xe9", "d\\x80r", "d\\x80r/inside", "d\\x80r/link-to-latin1");
    assertThat(TreeSnapshot.of(target).entries().get("."))
        .as("a partial restore leaves the target's own metadata alone")
        .doesNotContain("mtime=946684799.999999999");
  }

  @Test
  void anArgumentJavaCouldNotDecodeIsRefusedRatherThanTakenForAnotherPath() {
    // What the JVM makes of a command-line argument holding "caf\xe9": the byte is gone.
    BadInputTest.assertOneLineError(Cli.run("restore", "--image", tmp.resolve("x.bsave"),
        "--target", tmp.resolve("caf\uFFFD")), "holds bytes that are not valid UTF-8");
    assertThat(tmp.resolve("caf\uFFFD")).doesNotExist();
  }

  @Test
  void aLibraryGivenThroughASymlinkIsNamedAfterTheLink() throws IOException {
    Path link = Files.createSymbolicLink(tmp.resolve("current"), library);
    Cli.ok("save", "--library", link, "--image", tmp.resolve("many"), "--library",
        Files.createDirectories(tmp.resolve("other")), "--quiet");
    assertThat(tmp.resolve("many/current.bsave")).exists();
    assertThat(ImageReader.readCatalog(tmp.resolve("many/current.bsave")).library())
        .isEqualTo("current");
  }
}

package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogWriter;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.ShardInfo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each bad input an operator can hit: a clear one-line error, a non-zero exit, nothing left. */
class BadInputTest {
  @TempDir Path tmp;
  Path library;
  Path image;

  @BeforeEach
  void library() throws IOException {
    library = Files.createDirectories(tmp.resolve("lib"));
    Trees.linksAndEmpties(library);
    Trees.mixedData(library, 3 << 20);
    image = tmp.resolve("out/lib.bsave");
  }

  static void assertOneLineError(Cli c, String... fragments) {
    assertThat(c.exit()).as(c.err()).isNotZero();
    assertThat(c.err().lines().filter(l -> !l.isBlank()).toList())
        .as("stderr: %s", c.err())
        .hasSize(1)
        .allSatisfy(l -> assertThat(l).startsWith("beamsave: error: ").contains(fragments));
  }

  /** Nothing but what the test put there: no image, no partial image, no staging. */
  void assertNothingLeftIn(Path dir) throws IOException {
    if (Files.exists(dir)) {
      try (Stream<Path> s = Files.list(dir)) {
        assertThat(s.toList()).isEmpty();
      }
    }
  }

  @Test
  void aMissingLibraryIsNamed() throws IOException {
    Path missing = tmp.resolve("no-such-dir");
    assertOneLineError(Cli.run("save", "--library", missing, "--image", image),
        missing.toString(), "does not exist");
    assertThat(image.getParent()).as("not even the image directory is created").doesNotExist();
  }

  @Test
  void aLibraryThatIsAFileIsNamed() throws IOException {
    Path file = library.resolve("script.sh");
    assertOneLineError(Cli.run("save", "--library", file, "--image", image),
        file.toString(), "not a directory");
    assertNothingLeftIn(image.getParent());
  }

  /** A bad value is a usage error: exit 2, what was wrong (and meant), and where help is. */
  static void assertUsageError(Cli c, String line) {
    assertThat(c.exit()).as(c.err()).isEqualTo(2);
    assertThat(c.err().lines().toList()).containsExactly(line, "see 'beamsave save --help'");
  }

  @Test
  void badOptionsAreExplained() throws IOException {
    assertUsageError(Cli.run("save", "--library", library, "--image", image, "--codec", "gzip"),
        "beamsave: error: unknown codec 'gzip': expected none, lz4, zlib[:1-9], zstd[:1-22],"
            + " xz[:0-9], auto[:LINK_MBPS] or one of [*NO, *LOW, *MEDIUM, *HIGH, *ZLIB]");
    assertThat(Cli.run("save", "--library", library, "--image", image, "--codec", "zstd3")
        .err()).startsWith("beamsave: error: unknown codec 'zstd3' (did you mean 'zstd:3'?)");
    assertUsageError(
        Cli.run("save", "--library", library, "--image", image, "--block-size", "1KiB"),
        "beamsave: error: --block-size 1.0 KiB must be between 4 KiB and 64 MiB");
    assertUsageError(
        Cli.run("save", "--library", library, "--image", image, "--shard-size", "lots"),
        "beamsave: error: 'lots' is not a size such as 64MiB or 1048576");
    assertThat(Cli.run("save", "--image", image).exit()).isEqualTo(2);
    assertNothingLeftIn(image.getParent());
  }

  @Test
  void aUsageErrorIsOneLineWithWhatWasMeantAndWhereHelpIs() {
    Cli typo = Cli.run("save", "--library", library, "--imag", image);
    assertThat(typo.exit()).isEqualTo(2);
    assertThat(typo.err().lines().toList()).containsExactly(
        "beamsave: error: Unknown option: '--imag'; did you mean --image?",
        "see 'beamsave save --help'");
    Cli missing = Cli.run("verify");
    assertThat(missing.err().lines().toList()).hasSize(2).last()
        .isEqualTo("see 'beamsave verify --help'");
  }

  @Test
  void aPartialImageLeftByACrashedRunIsNotExtended() throws IOException {
    Files.createDirectories(image.getParent());
    Files.write(ImageWriter.partialPath(image), "left over by a killed save".getBytes());
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    assertThat(ImageWriter.partialPath(image)).doesNotExist();
    Cli.ok("verify", "--image", image, "--quiet");
  }

  @Test
  void twoLibrariesWithTheSameNameAreRefused() throws IOException {
    Path a = Files.createDirectories(tmp.resolve("a/same"));
    Path b = Files.createDirectories(tmp.resolve("b/same"));
    assertOneLineError(
        Cli.run("save", "--library", a, "--library", b, "--image", tmp.resolve("many")),
        "two libraries are named 'same'");
  }

  @Test
  void severalLibrariesGiveOneImageEach() throws IOException {
    Path other = Files.createDirectories(tmp.resolve("other"));
    Files.writeString(other.resolve("x"), "x");
    Path dir = tmp.resolve("many");
    Cli.ok("save", "--library", library, "--library", other, "--image", dir, "--quiet");
    try (Stream<Path> s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString()).sorted().toList())
          .containsExactly("beamsave-ledger", "lib.bsave", "other.bsave");
    }
    try (Stream<Path> s = Files.list(dir.resolve("beamsave-ledger"))) {
      assertThat(s.count()).as("one ledger record per image").isEqualTo(2);
    }
    assertThat(Entries.paths(ImageReader.readCatalog(dir.resolve("other.bsave")).entries()))
        .containsExactly("x");
  }

  @Test
  void aFileChangingDuringTheSaveFailsItUnlessAllowed() throws Exception {
    Path growing = library.resolve("growing.log");
    Files.writeString(growing, "start\n");
    AtomicBoolean stop = new AtomicBoolean();
    Thread writer =
        new Thread(
            () -> {
              // Appends for at most 60 s, until the saves below are done.
              long end = System.nanoTime() + 60_000_000_000L;
              try {
                while (!stop.get() && System.nanoTime() < end) {
                  Files.writeString(growing, "more\n", java.nio.file.StandardOpenOption.APPEND);
                  Thread.sleep(1);
                }
              } catch (IOException | InterruptedException e) {
                throw new RuntimeException(e);
              }
            });
    writer.start();
    try {
      Cli failed = Cli.run("save", "--library", library, "--image", image, "--quiet");
      assertOneLineError(failed, "file changed while it was being saved", growing.toString());
      assertNothingLeftIn(image.getParent());

      Cli kept =
          Cli.ok("save", "--library", library, "--image", image, "--allow-changing", "--quiet");
      assertThat(kept.err()).contains("changed while being saved");
    } finally {
      stop.set(true);
      writer.join();
    }
    Catalog c = ImageReader.readCatalog(image);
    assertThat(c.entries().stream().filter(e -> e.path().equals(PathBytes.of("growing.log"))).findFirst())
        .get()
        .matches(Entry::changed);
    assertThat(Cli.ok("list", "--image", image).out()).contains("f!").contains("growing.log");
    assertThat(Cli.ok("verify", "--image", image, "--quiet").out())
        .contains("1 file(s) changed while they were being saved");
  }

  @Test
  void restoreRefusesANonEmptyTargetUnlessOverwrite() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path target = Files.createDirectories(tmp.resolve("target"));
    Files.writeString(target.resolve("script.sh"), "old");
    assertOneLineError(
        Cli.run("restore", "--image", image, "--target", target),
        "target " + target, "not empty", "--overwrite");
    assertThat(Files.readString(target.resolve("script.sh"))).isEqualTo("old");
    Cli.ok("restore", "--image", image, "--target", target, "--overwrite", "--quiet");
    assertThat(Files.readString(target.resolve("script.sh"))).startsWith("#!/bin/sh");
  }

  @Test
  void overwriteNeverFollowsASymlinkAlreadyInTheTarget() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Path target = Files.createDirectories(tmp.resolve("target"));
    Files.createSymbolicLink(target.resolve("data"), outside);
    Cli.ok("restore", "--image", image, "--target", target, "--overwrite", "--quiet");
    assertThat(outside).isEmptyDirectory();
    assertThat(target.resolve("data")).isDirectory().isNotEqualTo(outside);
    assertThat(Files.isSymbolicLink(target.resolve("data"))).isFalse();
    assertThat(target.resolve("data/log.txt")).isRegularFile();
  }

  @Test
  void aFlippedByteInAShardIsNamedByVerifyAndRestore() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--shard-size", "1MiB", "--quiet");
    Catalog c = ImageReader.readCatalog(image);
    ShardInfo shard = c.shards().get(2);
    long at = shard.blockOffset(0) + 100;
    flip(image, at);
    assertOneLineError(Cli.run("verify", "--image", image, "--quiet"),
        "shard 2 block 0", "checksum");
    assertOneLineError(
        Cli.run("restore", "--image", image, "--target", tmp.resolve("r"), "--quiet"),
        "shard 2 block 0");
  }

  @Test
  void aFlippedByteInTheCatalogIsNamed() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    long size = Files.size(image);
    flip(image, size - 60);
    assertOneLineError(Cli.run("verify", "--image", image), "catalog block 0");
    assertOneLineError(Cli.run("list", "--image", image), "catalog block 0");
    assertOneLineError(Cli.run("restore", "--image", image, "--target", tmp.resolve("r")),
        "catalog block 0");
    assertThat(tmp.resolve("r")).doesNotExist();
  }

  @Test
  void truncatedAndForeignFilesAreNotImages() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    byte[] bytes = Files.readAllBytes(image);
    Files.write(image, java.util.Arrays.copyOf(bytes, bytes.length / 2));
    assertOneLineError(Cli.run("verify", "--image", image), "trailer missing");
    Files.write(image, "PK\3\4 this is a zip file, not an image".repeat(10).getBytes());
    assertOneLineError(Cli.run("restore", "--image", image, "--target", tmp.resolve("r")),
        "not a beamsave image");
    assertOneLineError(Cli.run("verify", "--image", tmp.resolve("nope.bsave")), "no such image");
  }

  @Test
  void aCatalogClaimingAbsurdCountsFailsCleanly() throws IOException {
    byte[] raw = CatalogWriter.encode(catalog(List.of()));
    int countAt = 8 + 2 + 3 + 2 + 4 + 8 + 4 + 8 + 44 + 16 + 16 + 4 + 2;
    ByteBuffer.wrap(raw).putInt(countAt, -1);
    writeCrafted(raw);
    assertOneLineError(Cli.run("verify", "--image", image), "entry count 4294967295 exceeds");
  }

  @Test
  void craftedPathsNeverEscapeTheTarget() throws IOException {
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Path target = tmp.resolve("target");
    for (String evil : List.of("../outside/pwned", outside + "/pwned")) {
      writeCrafted(CatalogWriter.encode(catalog(List.of(file(evil)))));
      assertOneLineError(
          Cli.run("restore", "--image", image, "--target", target), "unsafe path");
      assertThat(outside).isEmptyDirectory();
    }
    Entry link = Entries.link("out", outside.toString());
    writeCrafted(CatalogWriter.encode(catalog(List.of(link, file("out/pwned")))));
    assertOneLineError(Cli.run("restore", "--image", image, "--target", target),
        "'out/pwned' is not inside a directory entry");
    assertThat(outside).isEmptyDirectory();
  }

  private static Entry file(String path) {
    return Entries.file(path, 4096, new Extent(0, 0, 4096, new byte[8]));
  }

  private static Catalog catalog(List<Entry> entries) {
    return Entries.catalog("none", 4096, entries,
        List.of(new ShardInfo(16, 16, 4096, new int[] {16})));
  }

  /** An image with one zero block as its shard and the given raw catalog. */
  private void writeCrafted(byte[] catalogRaw) throws IOException {
    io.beamsave.testing.CraftedImage.write(image, 4096, 1, catalogRaw);
  }

  private static void flip(Path file, long at) throws IOException {
    byte[] b = Files.readAllBytes(file);
    b[(int) at] ^= 0x10;
    Files.write(file, b);
  }

  @Test
  void aHistoryOfADirectoryThatIsNotThereIsAnError() {
    Cli history = Cli.run("history", "--at", tmp.resolve("nowhere"));
    assertThat(history.exit()).isEqualTo(1);
    assertThat(history.err().strip())
        .isEqualTo("beamsave: error: --at " + tmp.resolve("nowhere") + ": no such directory");
  }

  @Test
  void anEndpointWithoutItsSchemeIsOneLine() {
    for (String endpoint : List.of("127.0.0.1:9000", "localhost:9000")) {
      Cli list = Cli.run("list", "--image", "s3://b/k.bsave", "--s3-endpoint", endpoint);
      assertThat(list.exit()).isEqualTo(1);
      assertThat(list.err().strip()).isEqualTo("beamsave: error: endpoint " + endpoint
          + " is not a URL like http://host:port");
    }
  }

  @Test
  void theDemoWithoutS3LeavesOutTheObjectStorageHalfAndSaysWhereItsFilesAre() throws Exception {
    Path work = tmp.resolve("demo");
    Cli demo = Cli.ok("demo", "--source", library, "--work", work, "--codecs", "lz4", "--no-s3");
    assertThat(demo.out()).doesNotContain("S3Proxy").doesNotContain("uploaded")
        .contains("restored tree is identical")
        .contains("the demo's files: " + work);
  }
}

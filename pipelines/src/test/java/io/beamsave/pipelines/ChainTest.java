package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.testing.S3MockServer;
import io.beamsave.testing.S3TestServer;
import io.beamsave.testing.TestS3;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Incremental saves: a chain of images, each saved against the one before while the library
 * changes in every way a file can, restores at every point in time exactly as the library was
 * then, locally and from S3; and a base that is missing, replaced or damaged fails with one line.
 */
class ChainTest {
  @TempDir static Path dir;

  /** A library with big and small files, links, empty files and nested directories. */
  static Path library(String name) throws IOException {
    Path lib = Files.createDirectories(dir.resolve(name));
    Random r = new Random(5);
    byte[] big = new byte[3 << 20];
    r.nextBytes(big);
    Files.write(lib.resolve("big.bin"), big);
    Files.createDirectories(lib.resolve("docs/old"));
    for (int i = 0; i < 20; i++) {
      Files.writeString(lib.resolve("docs/note" + i + ".txt"), ("note " + i + "\n").repeat(200));
    }
    Files.writeString(lib.resolve("docs/old/letter.txt"), "Dear reader,\n".repeat(1000));
    Files.writeString(lib.resolve("append.log"), "line\n".repeat(5000));
    Files.writeString(lib.resolve("truncate.me"), "x".repeat(100_000));
    Files.writeString(lib.resolve("becomes-dir"), "a file first");
    Files.writeString(lib.resolve("becomes-link"), "a file first");
    Files.writeString(lib.resolve("rename-me"), "moving on".repeat(1000));
    Files.writeString(lib.resolve("delete-me"), "soon gone".repeat(1000));
    Files.writeString(lib.resolve("mode-only"), "same bytes".repeat(1000));
    Files.writeString(lib.resolve("mtime-only"), "same bytes".repeat(1000));
    Files.createFile(lib.resolve("empty"));
    Files.createSymbolicLink(lib.resolve("link"), Path.of("docs/note1.txt"));
    return lib;
  }

  /** Each change a file can go through, one step at a time (step 1 on). */
  static void change(Path lib, int step) throws IOException {
    switch (step) {
      case 1 -> {
        // An edit in place that keeps the size and puts the mtime back: only ctime tells.
        Path f = lib.resolve("big.bin");
        FileTime mtime = Files.getLastModifiedTime(f);
        try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
          raf.seek(1 << 20);
          raf.write("edited".getBytes(StandardCharsets.US_ASCII));
        }
        Files.setLastModifiedTime(f, mtime);
        Files.writeString(lib.resolve("docs/note3.txt"), "rewritten\n");
      }
      case 2 -> {
        Files.writeString(lib.resolve("append.log"), "more\n".repeat(100),
            java.nio.file.StandardOpenOption.APPEND);
        try (RandomAccessFile raf = new RandomAccessFile(lib.resolve("truncate.me").toFile(),
            "rw")) {
          raf.setLength(10);
        }
      }
      case 3 -> {
        Files.delete(lib.resolve("becomes-dir"));
        Files.createDirectories(lib.resolve("becomes-dir/inside"));
        Files.writeString(lib.resolve("becomes-dir/inside/file"), "now a directory");
        Files.delete(lib.resolve("becomes-link"));
        Files.createSymbolicLink(lib.resolve("becomes-link"), Path.of("big.bin"));
      }
      case 4 -> {
        Files.move(lib.resolve("rename-me"), lib.resolve("docs/renamed"));
        Files.delete(lib.resolve("delete-me"));
        Files.delete(lib.resolve("docs/old/letter.txt"));
        Files.delete(lib.resolve("docs/old"));
      }
      case 5 -> {
        Files.setPosixFilePermissions(lib.resolve("mode-only"),
            PosixFilePermissions.fromString("rw-------"));
        Files.setLastModifiedTime(lib.resolve("mtime-only"),
            FileTime.from(java.time.Instant.parse("1999-12-31T23:59:59.123456789Z")));
      }
      case 6 -> {
        Files.writeString(lib.resolve("docs/new.txt"), "brand new");
        Files.delete(lib.resolve("becomes-link"));
        Files.writeString(lib.resolve("becomes-link"), "a file again");
      }
      default -> throw new IllegalArgumentException("no step " + step);
    }
  }

  @Test
  void everyImageOfALocalChainRestoresTheLibraryAsItWasThen() throws Exception {
    Path lib = library("chained");
    Path images = Files.createDirectories(dir.resolve("local-images"));
    List<Path> chain = new ArrayList<>();
    List<TreeSnapshot> then = new ArrayList<>();
    for (int step = 0; step <= 6; step++) {
      if (step > 0) {
        change(lib, step);
      }
      then.add(TreeSnapshot.of(lib));
      Path image = images.resolve("chained-" + step + ".bsave");
      List<Object> args = new ArrayList<>(List.of("save", "--library", lib, "--image", image,
          "--shard-size", "1MiB", "--quiet"));
      if (step > 0) {
        args.addAll(List.of("--base", chain.get(step - 1)));
      }
      Cli save = Cli.ok(args.toArray());
      if (step > 0) {
        // The row shows what the image holds and no ratio; the line under it the rest.
        assertThat(save.out()).containsPattern("(?m)^chained +\\S+ +\\S+s +.+ +- +[0-9.]+$")
            .containsPattern("incremental: .+ new in the image, .+ unchanged referenced in"
                + " .+; the tree it stands for: ");
      }
      chain.add(image);
    }
    Catalog last = ImageReader.readCatalog(chain.get(6));
    assertThat(last.depth()).isEqualTo(6);
    // big.bin was edited in place at step 1 (ctime moved) and has not changed since: the MiB
    // edited is in step 1's image, the rest still in the full image's.
    assertThat(extentsOf(last, "big.bin")).allMatch(Extent::isReference);
    java.util.Map<String, Long> bigIn = new java.util.TreeMap<>();
    for (Extent x : extentsOf(last, "big.bin")) {
      bigIn.merge(last.bases().get(x.image() - 1).location(), x.length(), Long::sum);
    }
    assertThat(bigIn).containsOnly(java.util.Map.entry(chain.get(0).toString(), 2L << 20),
        java.util.Map.entry(chain.get(1).toString(), 1L << 20));
    // A file unchanged since the full save still points straight at it, however long the chain.
    assertThat(last.bases().get(extentsOf(last, "docs/note1.txt").get(0).image() - 1).location())
        .isEqualTo(chain.get(0).toString());
    assertThat(extentsOf(last, "docs/new.txt")).noneMatch(Extent::isReference);
    assertThat(last.ownRawBytes()).as("the last step saved only what it changed")
        .isLessThan(100_000);

    for (int step = 0; step <= 6; step++) {
      Path target = dir.resolve("restored-" + step);
      Cli.ok("restore", chain.get(step), "--target", target, "--quiet");
      assertThat(TreeSnapshot.of(target).diff(then.get(step))).as("image " + step).isNull();
    }
    Cli verify = Cli.ok("verify", chain.get(6), "--chain");
    assertThat(verify.out()).startsWith("OK ").contains("a tree of ")
        .contains(" of 7 images, every block and digest")
        .contains("chain: 6 base images checked whole");
    // One base a line: a long chain does not print as one long line.
    assertThat(verify.out().lines().filter(l -> l.startsWith("  ")).toList())
        .hasSize(6).allMatch(l -> l.endsWith(".bsave"));
    String listed = Cli.ok("images", "--at", images).out();
    assertThat(listed).contains(" tree ").contains(" new ")
        .containsPattern("(?m) - +\\S+ +ok +incremental 6 on ");

    Path some = dir.resolve("restored-some");
    Cli.ok("restore", chain.get(6), "--target", some, "--include", "docs/note1.txt", "--quiet");
    assertThat(Files.readString(some.resolve("docs/note1.txt")))
        .isEqualTo(Files.readString(lib.resolve("docs/note1.txt")));
  }

  static List<Extent> extentsOf(Catalog c, String path) {
    return c.entries().stream().filter(e -> e.path().toString().equals(path)).findFirst()
        .map(Entry::extents).orElseThrow();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {S3TestServer.NAME, S3MockServer.NAME})
  void aChainInObjectStorageRestoresAtEveryPointWithLatestAsTheBase(String kind)
      throws Exception {
    try (TestS3 at = TestS3.start(kind, dir.resolve("chain-" + kind), "backups")) {
      chainInObjectStorage(kind, at);
    }
  }

  private static void chainInObjectStorage(String kind, TestS3 at) throws Exception {
    java.util.function.Function<Object[], Object[]> s3 = args -> {
      Object[] all = java.util.Arrays.copyOf(args, args.length + 2);
      all[args.length] = "--s3-endpoint";
      all[args.length + 1] = at.endpoint();
      return all;
    };
    Path lib = library("cloud-" + kind);
    String template = "s3://backups/nightly/{library}/{library}-{utc}.bsave";
    List<TreeSnapshot> then = new ArrayList<>();
    for (int step = 0; step <= 3; step++) {
      if (step > 0) {
        change(lib, step);
        // No wait: a run whose {utc} name is taken takes the next second.
      }
      then.add(TreeSnapshot.of(lib));
      Cli.ok(s3.apply(new Object[] {"save", "--library", lib, "--image", template,
          "--shard-size", "1MiB", "--quiet", "--base", "latest", "--base-optional"}));
    }
    String name = lib.getFileName().toString();
    List<String> images = S3Store.at(at.settings(), new ObjectUri("backups", "")).list(
            "nightly/" + name + "/").stream().map(Store.Item::key)
        .filter(k -> k.endsWith(".bsave")).sorted().map(k -> "s3://backups/" + k).toList();
    assertThat(images).hasSize(4);
    for (int step = 0; step <= 3; step++) {
      Path target = dir.resolve("cloud-restored-" + kind + "-" + step);
      Cli.ok(s3.apply(new Object[] {"restore", images.get(step), "--target", target, "--quiet"}));
      assertThat(TreeSnapshot.of(target).diff(then.get(step))).as("image " + step).isNull();
    }
    // big.bin was edited in place at step 1: the MiB edited is in that image, the rest in the
    // full one's.
    Cli list = Cli.ok(s3.apply(
        new Object[] {"list", "s3://backups/nightly/" + name + "/latest", "--sources"}));
    String step0 = images.get(0).substring(images.get(0).lastIndexOf('/') + 1);
    String step1 = images.get(1).substring(images.get(1).lastIndexOf('/') + 1);
    assertThat(list.out().lines().filter(l -> l.endsWith("  big.bin")))
        .singleElement().asString().contains("  " + step0 + "+" + step1 + "  ");
    // Made at step 3, the newest: in the image itself.
    assertThat(list.out().lines().filter(l -> l.endsWith("  becomes-dir/inside/file")))
        .singleElement().asString().contains("  .  ");
  }

  @Test
  void aMissingReplacedOrDamagedBaseFailsWithOneLineNamingIt() throws Exception {
    Path lib = library("fragile");
    Path base = dir.resolve("fragile-0.bsave");
    Path top = dir.resolve("fragile-1.bsave");
    Cli.ok("save", "--library", lib, "--image", base, "--quiet");
    change(lib, 1);
    Cli.ok("save", "--library", lib, "--image", top, "--base", base, "--quiet");
    Path kept = dir.resolve("fragile-0.kept");
    Files.copy(base, kept);

    Files.delete(base);
    Cli missing = Cli.run("restore", top, "--target", dir.resolve("fragile-r1"));
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(missing.err().strip()).doesNotContain("\n")
        .contains("base image " + base).contains("is missing");
    assertThat(dir.resolve("fragile-r1")).doesNotExist();
    // The catalog is whole by itself: listing needs no base.
    assertThat(Cli.ok("list", top).out()).contains("big.bin");
    // Nor is an image that cannot be restored taken as the base of another.
    Path next = dir.resolve("fragile-2.bsave");
    Cli unusable = Cli.run("save", "--library", lib, "--image", next, "--base", top);
    assertThat(unusable.exit()).isEqualTo(1);
    assertThat(unusable.err()).contains("cannot be restored: its base " + base);
    assertThat(next).doesNotExist();

    // Another image of the same library in its place.
    Cli.ok("save", "--library", lib, "--image", base, "--quiet");
    Cli replaced = Cli.run("verify", top);
    assertThat(replaced.exit()).isEqualTo(1);
    assertThat(replaced.err().strip()).doesNotContain("\n").contains("is another image");

    // The base itself, one byte of its catalog changed.
    Files.copy(kept, base, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    byte[] b = Files.readAllBytes(base);
    b[b.length - 60] ^= 1;
    Files.write(base, b);
    Cli damaged = Cli.run("verify", top);
    assertThat(damaged.exit()).isEqualTo(1);
    assertThat(damaged.err().strip()).doesNotContain("\n").contains("base image " + base);
  }

  @Test
  void aBaseOfAnotherLibraryOrTheImageItselfIsRefusedUnlessOptional() throws Exception {
    Path lib = library("mine");
    Path other = library("theirs");
    Path theirs = dir.resolve("theirs.bsave");
    Cli.ok("save", "--library", other, "--image", theirs, "--quiet");
    Path mine = dir.resolve("mine.bsave");
    Cli wrong = Cli.run("save", "--library", lib, "--image", mine, "--base", theirs);
    assertThat(wrong.exit()).isEqualTo(1);
    assertThat(wrong.err()).contains("is an image of library 'theirs', not of 'mine'");
    assertThat(mine).doesNotExist();

    Cli optional = Cli.ok("save", "--library", lib, "--image", mine, "--base", theirs,
        "--base-optional", "--quiet");
    assertThat(optional.err()).contains("note: mine: saved whole");
    assertThat(ImageReader.readCatalog(mine).incremental()).isFalse();

    Cli itself = Cli.run("save", "--library", lib, "--image", mine, "--base", mine);
    assertThat(itself.exit()).isEqualTo(1);
    assertThat(itself.err()).contains("is the image this save replaces");
  }

  @Test
  void fullEveryMakesEveryNthSaveOfAChainAFullOne() throws Exception {
    Path lib = library("weekly");
    Path images = Files.createDirectories(dir.resolve("weekly-images"));
    List<Integer> depths = new ArrayList<>();
    for (int run = 0; run < 5; run++) {
      if (run > 0) {
        Files.writeString(lib.resolve("docs/run.txt"), "run " + run);
      }
      Cli.ok("save", "--library", lib, "--image", images.resolve("{library}-{utc}.bsave"),
          "--base", "latest", "--base-optional", "--full-every", "3", "--quiet");
    }
    for (Path p : Files.list(images).filter(p -> p.toString().endsWith(".bsave")).sorted()
        .toList()) {
      depths.add(ImageReader.readCatalog(p).depth());
    }
    assertThat(depths).containsExactly(0, 1, 2, 0, 1);
  }
}

package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.locks.RunLease;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.FileImageSource;
import io.beamsave.transforms.image.ImageEnds;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What someone who may write where the images are, but not delete, can make {@code prune} do:
 * a forged claim to have been consolidated from an image, a plain image among encrypted ones,
 * a damaged consolidation, a name shaped like a stamp that is none. Each must cost no real
 * image. And a save in progress keeps its base.
 */
class PruneTrustTest {
  @TempDir static Path dir;
  static Path lib;
  static Path keyFile;

  @BeforeAll
  static void library() throws IOException {
    lib = Files.createDirectories(dir.resolve("lib"));
    Trees.tinyFiles(lib, 30);
    Files.writeString(lib.resolve("big.txt"), "bytes to check\n".repeat(20_000));
    keyFile = dir.resolve("k.key");
    Files.writeString(keyFile, "1f".repeat(32) + "\n");
  }

  static ImageId idOf(Path image) throws IOException {
    try (ImageSource src = FileImageSource.open(image)) {
      ImageEnds.Trailer t = ImageEnds.read(src);
      return t.encrypted() ? t.envelope().id() : ImageReader.readCatalog(image).id();
    }
  }

  static Path twoSaves(Path at, Object... key) throws IOException {
    Files.createDirectories(at);
    for (String stamp : List.of("20261201T000000Z", "20261202T000000Z")) {
      Cli.ok(concat(new Object[] {"save", "--library", lib, "--image",
          at.resolve("data-" + stamp + ".bsave"), "-q"}, key));
    }
    return at;
  }

  static Object[] concat(Object[] a, Object... b) {
    Object[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  static Path first(Path at) {
    return at.resolve("data-20261201T000000Z.bsave");
  }

  static Path second(Path at) {
    return at.resolve("data-20261202T000000Z.bsave");
  }

  @Test
  void aForgedPlainImageClaimingToBeAConsolidationDeletesNothing() throws Exception {
    Path at = twoSaves(dir.resolve("plain"));
    // Named to look newest, each claiming to stand for a real image.
    ChainImages.claiming(at.resolve("forged-1.bsave"), Instant.parse("2026-12-01T00:00:00Z"),
        idOf(first(at)));
    ChainImages.claiming(at.resolve("forged-2.bsave"), Instant.parse("2026-12-02T00:00:00Z"),
        idOf(second(at)));
    Cli pruned = Cli.ok("prune", "--at", at, "--keep-last", "2", "--yes");
    assertThat(first(at)).exists();
    assertThat(second(at)).exists();
    assertThat(pruned.err()).contains("forged-1.bsave says it was consolidated from")
        .contains("not confirmed");
    assertThat(pruned.out()).doesNotContain("consolidated into forged");
  }

  @Test
  void withAKeyGivenImagesItDoesNotOpenAreNeitherCountedNorDeleted() throws Exception {
    Path at = twoSaves(dir.resolve("encrypted"), "--key-file", keyFile);
    ChainImages.claiming(at.resolve("forged-1.bsave"), Instant.parse("2026-12-01T00:00:00Z"),
        idOf(first(at)));
    // Newer by name than both: counted, it would push the real ones out of --keep-last 1.
    ChainImages.claiming(at.resolve("data-20261203T000000Z.bsave"),
        Instant.parse("2026-12-03T00:00:00Z"), idOf(second(at)));
    Cli pruned = Cli.ok("prune", "--at", at, "--keep-last", "1", "--key-file", keyFile, "--yes");
    assertThat(second(at)).exists();
    assertThat(first(at)).as("older than the newest real one").doesNotExist();
    assertThat(pruned.out()).contains("not counted: not encrypted, and keys were given")
        .doesNotContain("consolidated into");
    assertThat(at.resolve("forged-1.bsave")).exists();
  }

  @Test
  void aRealConsolidationLetsTheOriginalGoAndADamagedOneDoesNot() throws Exception {
    Path at = twoSaves(dir.resolve("consolidated"));
    Path full = at.resolve("full.bsave");
    Cli.ok("consolidate", first(at), "--to", full, "-q");
    Path damaged = at.resolve("full-damaged.bsave");
    Cli.ok("consolidate", second(at), "--to", damaged, "-q");
    // A byte of its one shard's data, past the 16-byte header.
    try (RandomAccessFile f = new RandomAccessFile(damaged.toFile(), "rw")) {
      f.seek(100);
      int b = f.read();
      f.seek(100);
      f.write(b ^ 0x40);
    }
    Cli pruned = Cli.ok("prune", "--at", at, "--keep-last", "2", "--yes");
    assertThat(pruned.out()).containsPattern("deleted .*" + first(at)
        + ".*consolidated into full.bsave");
    assertThat(first(at)).doesNotExist();
    assertThat(second(at)).as("its consolidation does not read back").exists();
    assertThat(pruned.err()).contains("full-damaged.bsave says it was consolidated from")
        .contains("not confirmed");
  }

  @Test
  void aForgedSecondClaimDoesNotUndoARealConsolidation() throws Exception {
    Path at = twoSaves(dir.resolve("second-claim"));
    Path full = at.resolve("full.bsave");
    Cli.ok("consolidate", first(at), "--to", full, "-q");
    ChainImages.claiming(at.resolve("forged.bsave"), Instant.parse("2026-12-01T00:00:00Z"),
        idOf(first(at)));
    Cli pruned = Cli.ok("prune", "--at", at, "--keep-last", "2", "--yes");
    assertThat(pruned.out()).containsPattern("deleted .*" + first(at)
        + ".*consolidated into full.bsave");
    assertThat(pruned.err()).contains("forged.bsave says it was consolidated from");
    assertThat(full).exists();
    assertThat(second(at)).exists();
  }

  @Test
  void aSaveWhoseBaseAPruneIsAboutToDeleteRefusesIt() throws Exception {
    Path at = twoSaves(dir.resolve("intent"));
    try (RunLease intent = RunLease.intent("test-prune",
        List.of(new RunLease.Use(idOf(second(at)), second(at).toString())), null)) {
      Cli save = Cli.run("save", "--library", lib, "--image", at.resolve("data-{utc}.bsave"),
          "--base", second(at));
      assertThat(save.exit()).isEqualTo(1);
      assertThat(save.err()).contains("is being deleted by a prune (pid ")
          .doesNotContain("Exception");
    }
    Cli.ok("save", "--library", lib, "--image", at.resolve("data-{utc}.bsave"), "--base",
        second(at), "-q");
  }

  @Test
  void aSaveInProgressKeepsItsBase() throws Exception {
    Path at = twoSaves(dir.resolve("leased"));
    Cli.ok("save", "--library", lib, "--image", at.resolve("data-20261203T000000Z.bsave"), "-q");
    try (RunLease lease = RunLease.take("test-run", "save",
        List.of(new RunLease.Use(idOf(first(at)), first(at).toString())),
        List.of(at.resolve("data-20261204T000000Z.bsave").toString()), List.of(), null)) {
      Cli pruned = Cli.ok("prune", "--at", at, "--keep-last", "1", "--yes");
      assertThat(first(at)).exists();
      assertThat(second(at)).doesNotExist();
      assertThat(pruned.out()).containsPattern("keep .*" + first(at) + ".*in use by a save");
    }
    Cli.ok("prune", "--at", at, "--keep-last", "1", "--yes");
    assertThat(first(at)).as("once the save ended").doesNotExist();
  }

  /**
   * A save against the newest image while another save lands and a prune keeps only the
   * newest: without the lease the prune deleted the running save's base, and the save exited 0
   * with an image that named a missing base. Three rounds.
   */
  @Test
  void aSaveRacingAPruneEndsWithAnImageThatRestoresOrFailsMakingNone() throws Exception {
    Path at = Files.createDirectories(dir.resolve("race"));
    Path racing = Files.createDirectories(dir.resolve("race-lib"));
    Trees.tinyFiles(racing, 20);
    java.util.Random random = new java.util.Random(9);
    byte[] data = new byte[12 << 20];
    Cli.ok("save", "--library", racing, "--image", at.resolve("race-{utc}.bsave"), "-q");
    for (int round = 0; round < 3; round++) {
      // New bytes, compressed slowly: the save runs while the others do their work.
      random.nextBytes(data);
      Files.write(racing.resolve("changed.bin"), data);
      Thread.sleep(1100);
      CompletableFutureCli save = CompletableFutureCli.start("save", "--library", racing,
          "--image", at.resolve("race-{utc}.bsave"), "--base", "latest", "--codec", "xz:6", "-q");
      Thread.sleep(1100);
      Cli.ok("save", "--library", racing, "--image", at.resolve("race-{utc}.bsave"), "--codec",
          "lz4", "-q");
      Cli.ok("prune", "--at", at, "--keep-last", "1", "--yes");
      Cli done = save.join();
      if (done.exit() == 0) {
        String image = done.out().lines().filter(l -> l.startsWith("image: ")).findFirst()
            .orElse("image: " + at.resolve("none")).substring("image: ".length());
        Path target = dir.resolve("race-restored-" + round);
        Cli.ok("restore", image, "--target", target, "-q");
        assertThat(target.resolve("changed.bin")).hasSameBinaryContentAs(
            racing.resolve("changed.bin"));
      } else {
        assertThat(done.err()).contains("while this save ran").doesNotContain("Exception");
      }
    }
  }

  /** A command run on another thread. */
  record CompletableFutureCli(java.util.concurrent.CompletableFuture<Cli> run) {
    static CompletableFutureCli start(Object... args) {
      return new CompletableFutureCli(
          java.util.concurrent.CompletableFuture.supplyAsync(() -> Cli.run(args)));
    }

    Cli join() {
      return run.join();
    }
  }

  @Test
  void aNameShapedLikeAStampThatIsNoTimeIsAnImageWithoutOne() throws Exception {
    Path at = twoSaves(dir.resolve("stamps"));
    Files.copy(first(at), at.resolve("data-20261399T999999Z.bsave"));
    Cli images = Cli.ok("images", "--at", at);
    assertThat(images.out()).contains("data-20261399T999999Z.bsave");
    Cli.ok("prune", "--at", at, "--keep-last", "5");
    // Its own series: "latest" of the directory is ambiguous, and says so.
    Cli latest = Cli.run("list", at.resolve("latest"));
    assertThat(latest.err().strip()).contains("2 series of images").doesNotContain("\n")
        .doesNotContain("Exception");
    Cli.ok("save", "--library", lib, "--image", at.resolve("data-{utc}.bsave"), "--base",
        "latest", "--base-optional", "-q");
  }
}

package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.Ranges;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An incremental save of a large file that changed a little stores the ranges that changed and
 * references the rest in its bases: pages rewritten in place, bytes appended, changes across a
 * chain; every image restores, reads and verifies as the file was, alone and consolidated, plain
 * and encrypted; and a file changed everywhere is stored whole.
 */
class ChangedRangesTest {
  static final int MIB = 1 << 20;

  @TempDir Path dir;

  /** {@code mib} MiB of text that compresses as logs do, the same for the same seed. */
  static void text(Path file, int mib, long seed) throws IOException {
    Random r = new Random(seed);
    StringBuilder b = new StringBuilder(mib * MIB + 100);
    while (b.length() < mib * MIB) {
      b.append("2026-12-07 ").append(r.nextInt(24)).append(':').append(r.nextInt(60))
          .append(" host").append(r.nextInt(9)).append(" request ").append(r.nextLong())
          .append(" took ").append(r.nextInt(5000)).append(" ms\n");
    }
    b.setLength(mib * MIB);
    Files.writeString(file, b, StandardCharsets.US_ASCII);
  }

  static void rewrite(Path file, long at, String with) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(at);
      f.write(with.getBytes(StandardCharsets.US_ASCII));
    }
  }

  static Entry entry(Path image, String path) throws IOException {
    return ImageReader.readCatalog(image).entries().stream()
        .filter(e -> e.path().toString().equals(path)).findFirst().orElseThrow();
  }

  /** The SHA-256 of each MiB of {@code file}, as the catalog records them. */
  static byte[] rangesOf(Path file) throws Exception {
    byte[] b = Files.readAllBytes(file);
    byte[] out = new byte[(b.length + MIB - 1) / MIB * Ranges.DIGEST_SIZE];
    for (int k = 0; k * MIB < b.length; k++) {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(b, k * MIB, Math.min(MIB, b.length - k * MIB));
      System.arraycopy(sha.digest(), 0, out, k * Ranges.DIGEST_SIZE, Ranges.DIGEST_SIZE);
    }
    return out;
  }

  static long ownBytes(Entry e) {
    return e.extents().stream().filter(x -> !x.isReference()).mapToLong(Extent::length).sum();
  }

  /** Restores {@code image} into a new directory and checks it holds {@code lib} exactly. */
  void restoresAs(Path image, Path lib, Object... keys) throws IOException {
    Path to = dir.resolve("restored-" + image.getFileName() + "-" + System.nanoTime());
    Object[] args = new Object[4 + keys.length];
    System.arraycopy(new Object[] {"restore", image, "--target", to}, 0, args, 0, 4);
    System.arraycopy(keys, 0, args, 4, keys.length);
    Cli.ok(args);
    assertThat(TreeSnapshot.of(to).diff(TreeSnapshot.of(lib))).isNull();
  }

  @Test
  void twoPagesRewrittenInALargeFileAreAllTheIncrementalStores() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Path big = lib.resolve("big.log");
    text(big, 24, 1);
    Files.writeString(lib.resolve("small.txt"), "small");
    Path full = dir.resolve("full.bsave");
    Cli.ok("save", "--library", lib, "--image", full, "-q");
    assertThat(entry(full, "big.log").ranges().digests()).isEqualTo(rangesOf(big));

    rewrite(big, 5L * MIB + 100, "x".repeat(4096));
    rewrite(big, 17L * MIB + 4096, "y".repeat(4096));
    Path inc = dir.resolve("inc.bsave");
    Cli saved = Cli.ok("save", "--library", lib, "--image", inc, "--base", full, "--json");

    Entry e = entry(inc, "big.log");
    // Ranges 5 and 17 in the image's own shards, the other 22 MiB referenced in the base.
    assertThat(ownBytes(e)).isEqualTo(2L * MIB);
    assertThat(e.extents().stream().filter(Extent::isReference).mapToLong(Extent::length).sum())
        .isEqualTo(22L * MIB);
    assertThat(e.ranges().digests()).isEqualTo(rangesOf(big));
    assertThat(Files.size(inc)).isLessThan(Files.size(full) / 10);
    // small.txt's 5 bytes are referenced too; big.log was read whole to compare it.
    assertThat(saved.out()).contains("\"referencedBytes\":" + (22L * MIB + 5))
        .contains("\"comparedBytes\":" + 24L * MIB);

    restoresAs(inc, lib);
    // diff tells from the range digests alone, and says how much changed.
    Cli diff = Cli.ok("diff", full, inc);
    assertThat(diff.out()).contains("M    big.log  (2.0 MiB of 24.0 MiB changed)")
        .doesNotContain("compared by reading");
    assertThat(Cli.ok("diff", full, inc, "--json").out()).contains("\"changedBytes\":" + 2 * MIB);
    assertThat(Cli.ok("list", inc, "--sources").out().lines()
        .filter(l -> l.endsWith("  big.log"))).singleElement().asString()
        .contains("  full.bsave+.  ");
    Cli.ok("verify", inc, "--chain", "-q");
    Cli.ok("verify", inc, "-q");
    Path cons = dir.resolve("cons.bsave");
    Cli.ok("consolidate", inc, "--to", cons, "-q");
    assertThat(ImageReader.readCatalog(cons).bases()).isEmpty();
    assertThat(entry(cons, "big.log").ranges()).isEqualTo(e.ranges());
    restoresAs(cons, lib);
    Cli.ok("verify", cons, "-q");

    // Against the consolidated image the ranges are still known: one more page, one more MiB.
    rewrite(big, 9L * MIB, "z");
    Path next = dir.resolve("next.bsave");
    Cli.ok("save", "--library", lib, "--image", next, "--base", cons, "-q");
    assertThat(ownBytes(entry(next, "big.log"))).isEqualTo(MIB);
    restoresAs(next, lib);
  }

  @Test
  void bytesAppendedToALogAreStoredWithItsLastRangeOnly() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Path log = lib.resolve("app.log");
    text(log, 10, 2);
    Files.write(log, "tail".getBytes(StandardCharsets.US_ASCII), StandardOpenOption.APPEND);
    Path full = dir.resolve("full.bsave");
    Cli.ok("save", "--library", lib, "--image", full, "-q");
    byte[] more = new byte[3 * MIB + 100];
    Arrays.fill(more, (byte) 'm');
    Files.write(log, more, StandardOpenOption.APPEND);
    Path inc = dir.resolve("inc.bsave");
    Cli.ok("save", "--library", lib, "--image", inc, "--base", full, "-q");
    Entry e = entry(inc, "app.log");
    // The base's last range (4 bytes) was shorter than it is now: it is stored again.
    assertThat(ownBytes(e)).isEqualTo(4 + more.length);
    assertThat(e.ranges().digests()).isEqualTo(rangesOf(log));
    restoresAs(inc, lib);
    Cli.ok("verify", inc, "--chain", "-q");
  }

  @Test
  void aChainReferencesEachRangeInTheImageThatHoldsItAndPrunesNothingItNeeds()
      throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Path big = lib.resolve("disk.img");
    text(big, 8, 3);
    Path images = Files.createDirectories(dir.resolve("images"));
    Path first = images.resolve("disk-20261201T000000Z.bsave");
    Path second = images.resolve("disk-20261202T000000Z.bsave");
    Path third = images.resolve("disk-20261203T000000Z.bsave");
    Cli.ok("save", "--library", lib, "--image", first, "--codec", "lz4", "-q");
    rewrite(big, 2L * MIB, "second");
    Cli.ok("save", "--library", lib, "--image", second, "--base", first, "-q");
    rewrite(big, 6L * MIB, "third");
    Cli.ok("save", "--library", lib, "--image", third, "--base", second, "-q");

    Catalog c = ImageReader.readCatalog(third);
    assertThat(c.bases()).hasSize(2);
    Entry e = entry(third, "disk.img");
    assertThat(e.extents().stream().map(Extent::image).distinct().sorted().toList())
        .containsExactly(0, 1, 2);
    assertThat(ownBytes(e)).isEqualTo(MIB);
    restoresAs(third, lib);
    Cli.ok("verify", third, "--chain", "-q");
    // Keeping only the newest keeps the images it references ranges of.
    Cli.ok("prune", "--at", images, "--keep-last", "1", "--yes", "-q");
    assertThat(first).exists();
    assertThat(second).exists();
    restoresAs(third, lib);
  }

  @Test
  void anEncryptedChainStoresOnlyTheChangedRangesToo() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Path big = lib.resolve("mail.mbox");
    text(big, 6, 4);
    Path key = dir.resolve("k.key");
    Files.write(key, new byte[32]);
    Path full = dir.resolve("full.bsave");
    Path inc = dir.resolve("inc.bsave");
    Cli.ok("save", "--library", lib, "--image", full, "--key-file", key, "-q");
    rewrite(big, 3L * MIB + 7, "From: someone else");
    Cli.ok("save", "--library", lib, "--image", inc, "--base", full, "--key-file", key, "-q");
    assertThat(Files.size(inc)).isLessThan(Files.size(full) / 3);
    restoresAs(inc, lib, "--key-file", key);
    Cli.ok("verify", inc, "--chain", "--key-file", key, "-q");
  }

  @Test
  void aFileChangedEverywhereIsStoredWholeWithoutReferences() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Path big = lib.resolve("big.bin");
    text(big, 4, 5);
    Path full = dir.resolve("full.bsave");
    Cli.ok("save", "--library", lib, "--image", full, "-q");
    // 100 bytes inserted at the start move every range: none is found again.
    byte[] was = Files.readAllBytes(big);
    byte[] now = new byte[was.length + 100];
    System.arraycopy(was, 0, now, 100, was.length);
    Files.write(big, now);
    Path inc = dir.resolve("inc.bsave");
    Cli.ok("save", "--library", lib, "--image", inc, "--base", full, "-q");
    Entry e = entry(inc, "big.bin");
    assertThat(e.extents()).noneMatch(Extent::isReference);
    assertThat(e.ranges().digests()).isEqualTo(rangesOf(big));
    restoresAs(inc, lib);
  }

  @Test
  void aRotatedLogAndAMovedCopyCostOnlyTheirCatalogEntries() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Path log = lib.resolve("app.log");
    text(log, 6, 6);
    Path disk = Files.createDirectories(lib.resolve("vm")).resolve("disk.img");
    text(disk, 5, 7);
    Path full = dir.resolve("full.bsave");
    Cli.ok("save", "--library", lib, "--image", full, "-q");

    // Rotation: the log renamed (same inode), a new one begun at its old path.
    Files.move(log, lib.resolve("app.log.1"));
    text(log, 2, 8);
    // A disk image copied elsewhere (another inode) and the original removed.
    Path moved = Files.createDirectories(lib.resolve("archive")).resolve("disk.img");
    Files.copy(disk, moved);
    Files.delete(disk);
    Path inc = dir.resolve("inc.bsave");
    Cli.ok("save", "--library", lib, "--image", inc, "--base", full, "-q");

    assertThat(ownBytes(entry(inc, "app.log.1"))).isZero();
    assertThat(ownBytes(entry(inc, "archive/disk.img"))).isZero();
    assertThat(ownBytes(entry(inc, "app.log"))).isEqualTo(2L * MIB);
    assertThat(entry(inc, "app.log.1").ranges().digests())
        .isEqualTo(rangesOf(lib.resolve("app.log.1")));
    restoresAs(inc, lib);
    Cli.ok("verify", inc, "--chain", "-q");
  }

  @Test
  void aFileCopiedBesideItsUnchangedOriginalStoresItsOwnBytes() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Path big = lib.resolve("a.img");
    text(big, 3, 9);
    Path full = dir.resolve("full.bsave");
    Cli.ok("save", "--library", lib, "--image", full, "-q");
    // Both would reference the same bytes of the base, which no reader accepts: the original
    // keeps them, the copy is stored.
    Files.copy(big, lib.resolve("b.img"));
    Path inc = dir.resolve("inc.bsave");
    Cli.ok("save", "--library", lib, "--image", inc, "--base", full, "-q");
    assertThat(ownBytes(entry(inc, "a.img"))).isZero();
    assertThat(ownBytes(entry(inc, "b.img"))).isEqualTo(3L * MIB);
    restoresAs(inc, lib);
    Cli.ok("verify", inc, "--chain", "-q");
  }
}

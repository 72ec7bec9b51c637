package io.beamsave.pipelines;

import static io.beamsave.pipelines.BadInputTest.assertOneLineError;
import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.testing.CraftedImage;
import io.beamsave.testing.Entries;
import io.beamsave.transforms.image.catalog.CatalogWriter;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.ShardInfo;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Images crafted the way an attacker would, each of a few hundred bytes: every command fails
 * with one line naming what is wrong, and nothing crashes, hangs, exhausts memory, reports OK or
 * writes anything.
 */
class CraftedImageTest {
  @TempDir Path tmp;

  static final int BLOCK = 4096;

  Path craft(List<Entry> entries) throws IOException {
    Path image = tmp.resolve("crafted.bsave");
    // One shard of two zero blocks: 8192 raw bytes, 32 stored.
    byte[] raw = CatalogWriter.encode(Entries.catalog("none", BLOCK, entries,
        List.of(new ShardInfo(16, 32, 2 * BLOCK, new int[] {16, 16}))));
    CraftedImage.write(image, BLOCK, 2, raw);
    return image;
  }

  static Extent x(long offset, long length) {
    return new Extent(0, offset, length, new byte[8]);
  }

  void assertEveryCommandRefuses(Path image, String... fragments) {
    assertOneLineError(Cli.run("verify", "--image", image, "--quiet"), fragments);
    assertOneLineError(Cli.run("list", "--image", image), fragments);
    Path target = tmp.resolve("target");
    assertOneLineError(Cli.run("restore", "--image", image, "--target", target, "--quiet"),
        fragments);
    assertThat(target).doesNotExist();
  }

  @Test
  void extentsOfTwoFilesThatOverlapInAShardAreRefused() throws IOException {
    Path image = craft(List.of(Entries.file("a", 4096, x(0, 4096)),
        Entries.file("b", 4096, x(2048, 4096))));
    assertEveryCommandRefuses(image, "file b overlaps file a in shard 0");
  }

  @Test
  void anExtentThatMakesTheReaderSeekBackwardsIsRefused() throws IOException {
    // b's extent lies before a's: read in catalog order, the reader would go back a block.
    Path image = craft(List.of(Entries.file("a", 4096, x(4096, 4096)),
        Entries.file("b", 6000, x(0, 6000))));
    assertEveryCommandRefuses(image, "overlaps", "in shard 0");
  }

  @Test
  void aFileOverlappingItselfIsRefused() throws IOException {
    Path image = craft(List.of(Entries.file("a", 8192, x(0, 4096), x(100, 4096))));
    assertEveryCommandRefuses(image, "file a overlaps file a in shard 0");
  }

  @Test
  void aCatalogClaimingAGigabyteFailsBeforeAnythingIsAllocated() throws IOException {
    // Sixteen 16-byte zero blocks, each claiming 64 MiB: 272 bytes of image, 1 GiB of catalog.
    ByteArrayOutputStream blocks = new ByteArrayOutputStream();
    for (int i = 0; i < 16; i++) {
      blocks.write(CraftedImage.blockHeader(16, 64 << 20, new byte[0]));
    }
    Path image = tmp.resolve("bomb.bsave");
    Files.write(image, CraftedImage.withCatalogBlocks(blocks.toByteArray(), 1L << 30));
    assertThat(Files.size(image)).isLessThan(400);
    assertEveryCommandRefuses(image, "claims a catalog of 1073741824 bytes from 256 stored");
  }

  @Test
  void aCatalogTimeOutsideJavasClockListsAndRestores() throws IOException {
    Entry far = new Entry(io.beamsave.transforms.image.catalog.PathBytes.of("far"),
        EntryType.DIRECTORY, 0, 0755, 0, 0, Long.MAX_VALUE, 0, 0,
        0, 0, 0, null, List.of());
    byte[] zeros;
    try (io.beamsave.transforms.image.catalog.ExtentDigest d =
        new io.beamsave.transforms.image.catalog.ExtentDigest()) {
      d.update(new byte[8192], 0, 8192);
      zeros = d.digest();
    }
    Path image = craft(List.of(far, Entries.file("f", 8192, new Extent(0, 0, 8192, zeros))));
    Cli.ok("verify", "--image", image, "--quiet");
    assertThat(Cli.ok("list", "--image", image).out()).contains("@9223372036854775807  far");
    Cli restore = Cli.ok("restore", "--image", image, "--target", tmp.resolve("far-restored"),
        "--quiet");
    assertThat(tmp.resolve("far-restored/far")).isDirectory();
    // ext4 ends in 2446: the kernel clamps, and the operator hears of it.
    assertThat(restore.err()).contains("beamsave: warning: the target's filesystem could not"
        + " hold the exact mtime of 1 entry (" + tmp.resolve("far-restored/far")
        + ": saved 9223372036854775807.000000000 s, restored");
  }

  @Test
  void aFileWhoseMtimeTheTargetCannotHoldIsNamedInTheWarning() throws IOException {
    byte[] zeros;
    try (io.beamsave.transforms.image.catalog.ExtentDigest d =
        new io.beamsave.transforms.image.catalog.ExtentDigest()) {
      d.update(new byte[8192], 0, 8192);
      zeros = d.digest();
    }
    Entry f = Entries.file("far-file", 8192, new Extent(0, 0, 8192, zeros));
    Entry far = new Entry(f.path(), f.type(), 0, 0644, 0, 0, Long.MAX_VALUE, 0, 0, 0, 0, 8192,
        null, f.extents());
    Path image = craft(List.of(far));
    // One piece: the restore's worker makes the file, and the warning still names it.
    Cli restore = Cli.ok("restore", "--image", image, "--target", tmp.resolve("far-file-t"),
        "--quiet");
    assertThat(restore.err()).contains("could not hold the exact mtime of 1 entry ("
        + tmp.resolve("far-file-t/far-file") + ": saved 9223372036854775807.000000000 s");
  }

  @Test
  void aCatalogNestingDeeperThanAThousandDirectoriesIsRefused() throws IOException {
    List<Entry> entries = new java.util.ArrayList<>();
    StringBuilder path = new StringBuilder("d");
    for (int i = 0; i < 1100; i++) {
      entries.add(Entries.dir(path.toString()));
      path.append("/d");
    }
    Path image = craft(entries);
    assertEveryCommandRefuses(image, "nests deeper than 1024 directories");
  }

  @Test
  void anOwnerThatChownCannotSetIsRefused() throws IOException {
    Entry nobody = new Entry(io.beamsave.transforms.image.catalog.PathBytes.of("x"),
        EntryType.DIRECTORY, 0, 0755, -1, 0, 0, 0, 0, 0, 0, 0, null,
        List.of());
    assertEveryCommandRefuses(craft(List.of(nobody)), "entry 0 (x): owner 4294967295:0 cannot"
        + " be restored");
  }
}

package io.beamsave.pipelines;

import static io.beamsave.pipelines.ConsolidateTest.args;
import static io.beamsave.pipelines.ConsolidateTest.random;
import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.testing.S3TestServer;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.ShardInfo;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chains under attack: a target that names an image of the chain however it is spelled, two
 * consolidations into one image at once, a base that rotted where only its file digests can
 * tell, an incremental image whose files share their base's bytes, a base recorded in another
 * bucket. None may cost an image of the chain or end with exit 0 over a broken result.
 */
class ChainTrustTest {
  @TempDir Path dir;

  /** A full image of a{0,1}.bin and an incremental one on it where only small.txt changed. */
  record Chain(Path lib, Path full, Path incremental) {}

  Chain chain(Path at, Object... more) throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib-" + at.getFileName()));
    random(lib.resolve("a0.bin"), 300_000, 1);
    random(lib.resolve("a1.bin"), 300_000, 2);
    Files.writeString(lib.resolve("small.txt"), "first");
    Files.createDirectories(at);
    Path full = at.resolve("data-20261201T000000Z.bsave");
    Path incremental = at.resolve("data-20261202T000000Z.bsave");
    Cli.ok(args(new Object[] {"save", "--library", lib, "--image", full, "--codec", "none",
        "-q"}, more));
    Files.writeString(lib.resolve("small.txt"), "second, longer");
    Cli.ok(args(new Object[] {"save", "--library", lib, "--image", incremental, "--base", full,
        "--codec", "none", "-q"}, more));
    return new Chain(lib, full, incremental);
  }

  static void refused(Cli c, String... says) {
    assertThat(c.err()).doesNotContain("Exception");
    assertThat(c.exit()).as(c.err()).isEqualTo(1);
    assertThat(c.err().strip().lines()).hasSize(1);
    assertThat(c.err()).contains(says);
  }

  @Test
  void noSpellingOfAChainImageIsAcceptedAsWhereToWrite() throws Exception {
    Path img = dir.resolve("img");
    Chain c = chain(img);
    byte[] full = Files.readAllBytes(c.full());
    // Every file changed: the newest image references no byte of its direct base.
    random(c.lib().resolve("a0.bin"), 300_000, 3);
    random(c.lib().resolve("a1.bin"), 300_000, 4);
    Path third = img.resolve("data-20261203T000000Z.bsave");
    Cli.ok("save", "--library", c.lib(), "--image", third, "--base", c.incremental(), "-q");
    Path imgl = Files.createSymbolicLink(dir.resolve("imgl"), img);
    // "link/../x" is where the link's target's parent is, not where the spelling suggests.
    Files.createDirectories(dir.resolve("g/deep"));
    Path deep = Files.createSymbolicLink(dir.resolve("g/deep/link"),
        Files.createDirectories(img.resolve("sub")));
    for (Object to : List.of(c.incremental(), dir.resolve("img/./" + c.full().getFileName()),
        dir.resolve("x/../img/" + c.full().getFileName()), imgl.resolve(c.full().getFileName()),
        imgl.resolve(third.getFileName()), deep + "/../" + c.full().getFileName())) {
      refused(Cli.run("consolidate", third, "--to", to), "--to " + to);
    }
    assertThat(Files.readAllBytes(c.full())).isEqualTo(full);
    Cli.ok("verify", third, "-q");

    // A save that would replace its own base, or a base of its base.
    refused(Cli.run("save", "--library", c.lib(), "--image", img.resolve("same.bsave"),
        "--base", imgl.resolve("same.bsave")), "is the image this save replaces");
    Files.copy(third, img.resolve("same.bsave"));
    refused(Cli.run("save", "--library", c.lib(), "--image", img.resolve("same.bsave"),
        "--base", imgl.resolve("same.bsave")), "is the image this save replaces");
    refused(Cli.run("save", "--library", c.lib(), "--image",
        imgl.resolve(c.incremental().getFileName()), "--base", third), "the base of --base");
    assertThat(Files.readAllBytes(c.full())).isEqualTo(full);
    Cli.ok("verify", third, "--chain", "-q");
  }

  @Test
  void twoConsolidationsIntoOneImageAtOnceNeverMakeABrokenOne() throws Exception {
    Chain c = chain(dir.resolve("race"));
    Path out = dir.resolve("race/full.bsave");
    for (int round = 0; round < 4; round++) {
      Files.deleteIfExists(out);
      List<CompletableFuture<Cli>> runs = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        runs.add(CompletableFuture.supplyAsync(
            () -> Cli.run("consolidate", c.incremental(), "--to", out, "-q")));
      }
      for (CompletableFuture<Cli> run : runs) {
        Cli r = run.join();
        if (r.exit() != 0) {
          refused(r, "another consolidate of", "is running");
        }
      }
      assertThat(runs.stream().map(CompletableFuture::join).filter(r -> r.exit() == 0))
          .isNotEmpty();
      Cli.ok("verify", out, "-q");
      assertThat(out.resolveSibling("full.bsave.partial")).doesNotExist();
    }
  }

  /**
   * Flips a byte of a raw (codec none) block of the image at {@code offset} into its shard's
   * data and mends the block's CRC: damage only the files' digests can tell.
   */
  static void rotFixingCrc(Path image, ShardInfo shard) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
      long block = shard.imageOffset();
      byte[] head = new byte[16];
      f.seek(block);
      f.readFully(head);
      assertThat(head[0]).as("a stored block").isEqualTo((byte) 0);
      int stored = java.nio.ByteBuffer.wrap(head, 8, 4).getInt();
      byte[] payload = new byte[stored];
      f.readFully(payload);
      payload[stored / 2] ^= 0x20;
      CRC32C crc = new CRC32C();
      crc.update(head, 0, 12);
      crc.update(payload);
      f.seek(block + 12);
      f.writeInt((int) crc.getValue());
      f.seek(block + 16);
      f.write(payload);
    }
  }

  @Test
  void aBaseThatRottedFailsConsolidateNamingItAndLeavesNothing() throws Exception {
    Chain c = chain(dir.resolve("rot"));
    Catalog base = ImageReader.readCatalog(c.full());
    rotFixingCrc(c.full(), base.shards().get(0));
    Path out = dir.resolve("rot/full.bsave");
    refused(Cli.run("consolidate", c.incremental(), "--to", out), c.full().toString(),
        "digest mismatch");
    try (Stream<Path> left = Files.list(out.getParent())) {
      assertThat(left.map(p -> p.getFileName().toString()))
          .noneMatch(n -> n.startsWith("full.bsave"));
    }
  }

  @Test
  void inObjectStorageABaseThatRottedFailsConsolidateBeforeTheStoreCopiesIt() throws Exception {
    try (S3TestServer server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")),
        "backups")) {
      Object[] s3 = {"--s3-endpoint", server.endpoint()};
      Path lib = Files.createDirectories(dir.resolve("lib-s3"));
      for (int i = 0; i < 2; i++) {
        random(lib.resolve("f" + i + ".bin"), 6 << 20, 30 + i);
      }
      Files.writeString(lib.resolve("g.txt"), "small");
      String full = "s3://backups/lib/lib-20261201T000000Z.bsave";
      String incremental = "s3://backups/lib/lib-20261202T000000Z.bsave";
      Object[] sizes = {"--shard-size", "6MiB", "--codec", "none", "-q"};
      Cli.ok(args(args(new Object[] {"save", "--library", lib, "--image", full}, sizes), s3));
      Files.writeString(lib.resolve("g.txt"), "changed");
      Cli.ok(args(args(new Object[] {"save", "--library", lib, "--image", incremental, "--base",
          full}, sizes), s3));
      Path onDisk = server.file("backups", "lib/lib-20261201T000000Z.bsave");
      Catalog base = ImageReader.readCatalog(onDisk);
      rotFixingCrc(onDisk, base.shards().get(1));
      String to = "s3://backups/full/lib.bsave";
      refused(Cli.run(args(new Object[] {"consolidate", incremental, "--to", to}, s3)), full,
          "digest mismatch");
      S3Store store = S3Store.at(server.settings(), new ObjectUri("backups", ""));
      assertThat(store.stat("full/lib.bsave")).isEmpty();
      assertThat(store.uploadsInProgress("full/lib.bsave")).isEmpty();
    }
  }

  @Test
  void anIncrementalWhoseFilesShareTheirBasesBytesIsRefusedBeforeAnythingIsWritten()
      throws Exception {
    Chain c = chain(dir.resolve("shared"));
    Catalog base = ImageReader.readCatalog(c.full());
    Entry a0 = base.entries().stream().filter(e -> e.path().toString().equals("a0.bin"))
        .findFirst().orElseThrow();
    List<Extent> refs = a0.extents().stream().map(x -> x.inImage(1)).toList();
    List<Entry> entries = new ArrayList<>();
    for (Entry e : base.entries()) {
      // a1.bin made to be a0.bin's twin, pointing at the very same bytes of the base.
      entries.add(!e.isFile() ? e : e.path().toString().equals("a1.bin")
          ? new Entry(e.path(), e.type(), 0, e.mode(), e.uid(), e.gid(), e.mtimeSeconds(),
              e.mtimeNanos(), e.ctimeSeconds(), e.ctimeNanos(), e.inode(), a0.size(), null,
              refs)
          : e.withExtents(e.extents().stream().map(x -> x.inImage(1)).toList()));
    }
    Catalog crafted = new Catalog(base.library(), base.codecSpec(), base.createdMillis() + 1,
        base.blockSize(), base.shardSize(), base.root(), entries, List.of())
        .withIdentity(io.beamsave.transforms.format.ImageId.random(), null, 1,
            List.of(base.asBase(c.full().toString())));
    Path image = dir.resolve("shared/crafted.bsave");
    try (ImageWriter w = ImageWriter.open(image)) {
      w.finish(crafted, Codecs.parse("none"));
    }
    Path target = dir.resolve("shared-target");
    refused(Cli.run("restore", image, "--target", target), image.toString(),
        "references bytes of base 1", "that file a0.bin references too");
    assertThat(target).doesNotExist();
    Cli.ok("verify", c.full(), "-q");
  }

  @Test
  void aBaseRecordedInAnotherBucketIsReadOnlyWhereTheOperatorSays() throws Exception {
    try (S3TestServer server = S3TestServer.start(Files.createDirectories(dir.resolve("s3b")),
        "mine", "theirs")) {
      Object[] s3 = {"--s3-endpoint", server.endpoint()};
      Path lib = Files.createDirectories(dir.resolve("lib-buckets"));
      random(lib.resolve("a.bin"), 100_000, 7);
      String base = "s3://theirs/lib/base.bsave";
      Cli.ok(args(new Object[] {"save", "--library", lib, "--image", base, "-q"}, s3));
      Files.writeString(lib.resolve("b.txt"), "new");
      // An image kept here whose catalog names its base in the other bucket.
      Path local = dir.resolve("downloaded.bsave");
      String incremental = "s3://mine/lib/incremental.bsave";
      Cli.ok(args(new Object[] {"save", "--library", lib, "--image", incremental, "--base", base,
          "-q"}, s3));
      Cli.ok(args(new Object[] {"download", "--from", incremental, "--to", local}, s3));
      Cli refusedRead = Cli.run(args(new Object[] {"restore", local, "--target",
          dir.resolve("t1")}, s3));
      refused(refusedRead, "is missing", "another store than the image", "--base-location");
      Cli.ok(args(new Object[] {"restore", local, "--target", dir.resolve("t2"),
          "--base-location", "s3://theirs/lib/", "-q"}, s3));
      assertThat(dir.resolve("t2/a.bin")).hasSameBinaryContentAs(lib.resolve("a.bin"));
      // Inside its own bucket the recorded base is found as always.
      Cli.ok(args(new Object[] {"save", "--library", lib, "--image", "s3://theirs/lib/inc.bsave",
          "--base", base, "-q"}, s3));
      Cli.ok(args(new Object[] {"verify", "s3://theirs/lib/inc.bsave", "-q"}, s3));
    }
  }
}

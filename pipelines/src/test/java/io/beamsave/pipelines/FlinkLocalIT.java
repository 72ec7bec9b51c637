package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.testing.S3TestServer;
import io.beamsave.transforms.store.ObjectUri;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The same commands on Flink's embedded MiniCluster ({@code --flinkMaster=[local]}). */
class FlinkLocalIT {
  static final String[] FLINK = {"--", "--runner=FlinkRunner", "--flinkMaster=[local]", "--parallelism=2"};

  @TempDir Path dir;

  static Object[] withFlink(Object... args) {
    Object[] all = java.util.Arrays.copyOf(args, args.length + FLINK.length);
    System.arraycopy(FLINK, 0, all, args.length, FLINK.length);
    return all;
  }

  @Test
  void anImageEncryptedOnFlinkIsReadOnFlinkWithItsIdentity() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("secret"));
    Trees.mixedData(lib, 12L << 20);
    Trees.linksAndEmpties(lib);
    Path identity = dir.resolve("me.id");
    String pub = Cli.ok("keygen", "--identity", identity).out().strip();
    Path image = dir.resolve("secret.bsave");
    Cli.ok(withFlink("save", "--library", lib, "--image", image, "--shard-size", "4MiB",
        "--recipient", pub, "--quiet"));
    assertThat(Cli.ok("verify", image).out()).contains("no key given");
    assertThat(Cli.ok(withFlink("verify", image, "--identity", identity, "--quiet")).out())
        .contains("every block and digest checked");
    Path target = dir.resolve("restored-secret");
    Cli.ok(withFlink("restore", image, "--target", target, "--identity", identity, "--quiet"));
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();
  }

  @Test
  void savesVerifiesAndRestoresOnFlink() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Trees.mixedData(lib, 24L << 20);
    Trees.linksAndEmpties(lib);
    Trees.unicodeNames(lib);
    Path image = dir.resolve("lib.bsave");
    Cli save = Cli.ok(withFlink("save", "--library", lib, "--image", image, "--shard-size", "4MiB",
        "--quiet"));
    assertThat(save.out()).contains("image: " + image);
    try (var beside = Files.list(dir)) {
      assertThat(beside.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder(
          "lib", "lib.bsave", "beamsave-ledger");
    }
    Cli verify = Cli.ok(withFlink("verify", "--image", image, "--quiet"));
    assertThat(verify.out()).contains("OK");
    Path target = dir.resolve("restored");
    Cli.ok(withFlink("restore", "--image", image, "--target", target, "--quiet"));
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();
    // On Flink the library's top-level names are walked in parts by the workers; joined, the
    // catalog is the one a walk of it whole on the DirectRunner makes.
    Path direct = dir.resolve("direct/lib.bsave");
    Cli.ok("save", "--library", lib, "--image", direct, "--shard-size", "4MiB", "--quiet");
    assertThat(entries(image)).hasSizeGreaterThan(10).isEqualTo(entries(direct));
  }

  @Test
  void aRestoreOnFlinkGrantsOnlyWhatItIsAskedSkipsTheDamagedAndDeletesWhatTheImageLacks()
      throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    DamagedFilesTest.write(lib.resolve("data/a.bin"), 10_000, 1);
    DamagedFilesTest.write(lib.resolve("data/b.log"), 3_000, 2);
    DamagedFilesTest.write(lib.resolve("data/c.bin"), 10_000, 3);
    Path setuid = Files.writeString(lib.resolve("tool"), "#!/bin/sh\n");
    Files.setAttribute(setuid, "unix:mode", 04755);
    Path image = dir.resolve("lib.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--block-size", "4KiB", "--shard-size",
        "64MiB", "--quiet");
    DamagedFilesTest.damage(image, 3);
    Path target = Files.createDirectories(dir.resolve("restored"));
    Files.writeString(target.resolve("not-in-the-image"), "x");
    Cli r = Cli.run(withFlink("restore", image, "--target", target, "--overwrite", "--delete",
        "--skip-damaged", "--quiet"));
    assertThat(r.exit()).as(r.err()).isEqualTo(3);
    assertThat(r.err()).contains("beamsave: damaged, not restored: data/b.log: ",
        "beamsave: damaged, not restored: data/c.bin: ",
        "set-id bits of 1 entry cleared unless asked: --restore-setid");
    assertThat(target.resolve("data/a.bin")).hasSameBinaryContentAs(lib.resolve("data/a.bin"));
    assertThat(target.resolve("data/c.bin")).doesNotExist();
    assertThat(target.resolve("not-in-the-image")).doesNotExist();
    assertThat((Integer) Files.getAttribute(target.resolve("tool"), "unix:mode") & 07777)
        .isEqualTo(0755);
    assertThat(DamagedFilesTest.leftovers(target)).isEmpty();
  }

  /** The entries {@code list --json} shows of {@code image}, extents aside, in order. */
  private static java.util.List<String> entries(Path image) {
    return Cli.ok("list", "--json", image).out().lines()
        .filter(l -> l.startsWith("{\"type\":\"entry\"")).toList();
  }

  @Test
  void consolidatesAChainOnFlinkIntoAnImageThatVerifies() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Trees.mixedData(lib, 2L << 20);
    Files.writeString(lib.resolve("first.txt"), "first");
    Path base = dir.resolve("images/base.bsave");
    Cli.ok("save", "--library", lib, "--image", base, "--shard-size", "256KiB", "--block-size",
        "64KiB", "--quiet");
    Files.writeString(lib.resolve("second.txt"), "second");
    Files.delete(lib.resolve("first.txt"));
    Path top = dir.resolve("images/top.bsave");
    Cli.ok("save", "--library", lib, "--image", top, "--base", base, "--shard-size", "256KiB",
        "--block-size", "64KiB", "--quiet");
    Path full = dir.resolve("full.bsave");
    Cli c = Cli.ok(withFlink("consolidate", "--image", top, "--to", full, "--quiet"));
    assertThat(c.out()).startsWith("consolidated " + top + " (chain of 2 images) into " + full);
    Files.delete(base);
    assertThat(Cli.ok("verify", full).out()).startsWith("OK ");
    Path target = dir.resolve("restored");
    Cli.ok("restore", full, "--target", target, "--quiet");
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();
  }

  @Test
  void anIncrementalSaveOnFlinkStoresOnlyTheChangedRangeOfALargeFile() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("ranges-lib"));
    ChangedRangesTest.text(lib.resolve("big.log"), 5, 11);
    Trees.mixedData(lib.resolve("mixed"), 1L << 20);
    Path base = dir.resolve("ranges/base.bsave");
    Cli.ok(withFlink("save", "--library", lib, "--image", base, "--shard-size", "2MiB",
        "--quiet"));
    ChangedRangesTest.rewrite(lib.resolve("big.log"), 3L << 20, "changed on the cluster");
    Path top = dir.resolve("ranges/top.bsave");
    Cli.ok(withFlink("save", "--library", lib, "--image", top, "--base", base, "--shard-size",
        "2MiB", "--quiet"));
    io.beamsave.transforms.image.catalog.Entry big = ChangedRangesTest.entry(top, "big.log");
    assertThat(ChangedRangesTest.ownBytes(big)).isEqualTo(1L << 20);
    Cli.ok(withFlink("verify", top, "--chain", "--quiet"));
    Path target = dir.resolve("ranges-restored");
    Cli.ok(withFlink("restore", top, "--target", target, "--quiet"));
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();
  }

  /**
   * compare on Flink: the saves run on it, the uploads in the command line where the link is
   * emulated; compress while transferring, whose shards the workers would send, is left out.
   */
  @Test
  void comparesOnFlinkWithoutTheOverlappedStrategy() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Trees.mixedData(lib, 4L << 20);
    try (S3TestServer server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), "cmp")) {
      Path out = dir.resolve("report");
      Cli c = Cli.ok(withFlink("compare", "--library", lib, "--to", "s3://cmp/run", "--codecs",
          "zstd:3", "--runs", "1", "--link-mbps", "1000", "--out", out, "--quiet", "--keep-objects",
          "--s3-endpoint", server.endpoint()));
      assertThat(c.out()).contains("winner at 1000 Mbit/s:");
      JsonNode runs = new ObjectMapper().readTree(out.resolve("results.json").toFile()).get("runs");
      assertThat(runs).extracting(r -> r.get("strategy").asText()).containsExactlyInAnyOrder(
          "raw-save-raw-transfer", "compress-then-raw-transfer", "raw-then-compress-in-transfer");
      for (JsonNode r : runs) {
        String object = r.get("object").asText();
        assertThat(Files.size(server.file("cmp", ObjectUri.parse(object, false).key())))
            .as(object).isEqualTo(r.get("storedBytes").asLong());
      }
    }
  }
}

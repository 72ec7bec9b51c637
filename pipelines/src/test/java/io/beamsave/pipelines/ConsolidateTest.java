package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.pipelines.save.SaveSpecs;
import io.beamsave.testing.S3MockServer;
import io.beamsave.testing.S3TestServer;
import io.beamsave.testing.TestS3;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code beamsave consolidate}: a chain of incremental images folded into one full image that
 * holds what a fresh full save of the same tree holds, locally and in object storage.
 */
class ConsolidateTest {
  @TempDir Path dir;

  static final Object[] SMALL = {"--shard-size", "64KiB", "--block-size", "4KiB", "--quiet"};

  static Object[] args(Object[] head, Object... tail) {
    Object[] all = java.util.Arrays.copyOf(head, head.length + tail.length);
    System.arraycopy(tail, 0, all, head.length, tail.length);
    return all;
  }

  static void random(Path file, int bytes, long seed) throws Exception {
    byte[] b = new byte[bytes];
    new Random(seed).nextBytes(b);
    Files.createDirectories(file.getParent());
    Files.write(file, b);
  }

  private static String lastStamp = "";

  /** Saves {@code lib} into {@code out}, incrementally on the latest image there unless first. */
  static String save(Path lib, String out, boolean first, Object... more) {
    // Each run needs an image of its own, named by its second.
    long deadline = System.nanoTime() + 3_000_000_000L;
    while (SaveSpecs.utcStamp().equals(lastStamp) && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    lastStamp = SaveSpecs.utcStamp();
    Object[] a = {"save", "--library", lib, "--image", out + "/{library}-{utc}.bsave"};
    if (!first) {
      a = args(a, "--base", "latest");
    }
    Cli c = Cli.ok(args(a, more));
    return c.out().lines().filter(l -> l.startsWith("image: ")).findFirst().orElseThrow()
        .substring("image: ".length());
  }

  /** A library, then edits, appends, deletions, renames and new files, each saved on the last. */
  static void chain(Path lib, Runnable saveIt) throws Exception {
    random(lib.resolve("data/a.bin"), 300_000, 1);
    random(lib.resolve("data/b.bin"), 150_000, 2);
    random(lib.resolve("data/c.bin"), 200_000, 5);
    StringBuilder log = new StringBuilder();
    for (int i = 0; i < 20_000; i++) {
      log.append("line ").append(i).append('\n');
    }
    Files.writeString(lib.resolve("log.txt"), log);
    Files.writeString(lib.resolve("notes/keep.txt"), "kept", java.nio.file.StandardOpenOption
        .CREATE_NEW);
    saveIt.run();
    // Appended, a new file, one removed.
    Files.writeString(lib.resolve("log.txt"), "appended\n", java.nio.file.StandardOpenOption.APPEND);
    Files.writeString(lib.resolve("notes/new.txt"), "new");
    Files.delete(lib.resolve("data/b.bin"));
    saveIt.run();
    // Edited in place, renamed, a mode changed.
    try (var f = new java.io.RandomAccessFile(lib.resolve("data/a.bin").toFile(), "rw")) {
      f.seek(100_000);
      f.write(new byte[5_000]);
    }
    Files.move(lib.resolve("notes/keep.txt"), lib.resolve("notes/kept.txt"));
    Files.setPosixFilePermissions(lib.resolve("notes/new.txt"),
        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    saveIt.run();
  }

  @Test
  void aLocalChainConsolidatesIntoAFullImageThatHoldsWhatAFreshSaveHolds() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib/notes"));
    Files.delete(lib);
    lib = lib.getParent();
    Files.createDirectories(lib.resolve("notes"));
    Path l = lib;
    String out = dir.resolve("images").toString();
    boolean[] first = {true};
    String[] newest = new String[1];
    chain(lib, () -> {
      newest[0] = save(l, out, first[0], SMALL);
      first[0] = false;
    });
    Path full = dir.resolve("full/lib.bsave");
    Cli c = Cli.ok("consolidate", "--image", out + "/latest", "--to", full, "--quiet");
    assertThat(c.out()).startsWith("consolidated " + newest[0] + " (chain of 3 images) into "
        + full + ": ").contains(" shards copied (").contains(" rewritten (");
    Catalog made = ImageReader.readCatalog(full);
    Catalog from = ImageReader.readCatalog(Path.of(newest[0]));
    assertThat(made.depth()).isZero();
    assertThat(made.bases()).isEmpty();
    assertThat(made.origin()).isEqualTo(from.id());
    assertThat(made.id()).isNotEqualTo(from.id());
    assertThat(made.createdMillis()).isEqualTo(from.createdMillis());
    assertThat(made.entries()).extracting(e -> e.path().toString())
        .containsExactlyElementsOf(from.entries().stream().map(e -> e.path().toString()).toList());
    // Verifies by itself, with no other image beside it.
    Path alone = Files.createDirectories(dir.resolve("alone")).resolve("lib.bsave");
    Files.copy(full, alone);
    assertThat(Cli.ok("verify", alone).out()).startsWith("OK ").doesNotContain("incremental");
    Path restored = dir.resolve("restored");
    Cli.ok("restore", alone, "--target", restored, "--quiet");
    Path fresh = dir.resolve("fresh.bsave");
    Cli.ok(args(new Object[] {"save", "--library", lib, "--image", fresh}, SMALL));
    Path freshRestored = dir.resolve("fresh-restored");
    Cli.ok("restore", fresh, "--target", freshRestored, "--quiet");
    assertThat(TreeSnapshot.of(restored).diff(TreeSnapshot.of(freshRestored))).isNull();
    assertThat(TreeSnapshot.of(restored).diff(TreeSnapshot.of(lib))).isNull();
    try (var s = Files.list(full.getParent())) {
      assertThat(s.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("lib.bsave", "beamsave-ledger");
    }
    assertThat(Cli.ok("history", "--at", full.getParent()).out()).contains("consolidate");
  }

  @Test
  void aChainWithAMissingBaseFailsInOneLineAndLeavesNothing() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    random(lib.resolve("a.bin"), 100_000, 3);
    Path images = dir.resolve("images");
    String base = save(lib, images.toString(), true, SMALL);
    random(lib.resolve("b.bin"), 100_000, 4);
    String newest = save(lib, images.toString(), false, SMALL);
    Files.move(Path.of(base), dir.resolve("elsewhere.bsave"));
    Path full = dir.resolve("out/full.bsave");
    Cli c = Cli.run("consolidate", "--image", newest, "--to", full);
    assertThat(c.exit()).isEqualTo(1);
    assertThat(c.err().strip().lines()).hasSize(1).first().asString()
        .startsWith("beamsave: error: " + newest + ": base image " + base).contains("is missing");
    assertThat(full.getParent()).satisfiesAnyOf(
        p -> assertThat(p).doesNotExist(), p -> assertThat(p).isEmptyDirectory());
    assertThat(Cli.run("consolidate", "--image", newest).exit()).isEqualTo(2);
  }

  /**
   * In object storage the whole shards are copied by the store (UploadPartCopy with a range)
   * and only the partly referenced ones cross the network; shards of 6 MiB of random bytes are
   * above S3's 5 MiB smallest part. On both S3 servers: S3Mock copies part ranges itself.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {S3TestServer.NAME, S3MockServer.NAME})
  void inObjectStorageWholeShardsAreCopiedByTheStoreAndOnlyTheRestIsRead(String kind)
      throws Exception {
    Path dir = Files.createDirectories(this.dir.resolve(kind));
    try (TestS3 server = TestS3.start(kind, dir.resolve("s3"), "backups")) {
      Object[] s3 = {"--s3-endpoint", server.endpoint()};
      Object[] sizes = args(new Object[] {"--shard-size", "6MiB", "--codec", "lz4", "--quiet"}, s3);
      Path lib = Files.createDirectories(dir.resolve("lib"));
      for (int i = 0; i < 3; i++) {
        random(lib.resolve("f" + i + ".bin"), 6 << 20, 10 + i);
      }
      Files.writeString(lib.resolve("g1.txt"), "small one\n".repeat(500));
      Files.writeString(lib.resolve("g2.txt"), "small two\n".repeat(500));
      save(lib, "s3://backups/lib", true, sizes);
      random(lib.resolve("f1.bin"), 6 << 20, 20);
      Files.writeString(lib.resolve("h.txt"), "new");
      save(lib, "s3://backups/lib", false, sizes);
      Files.delete(lib.resolve("g1.txt"));
      String newest = save(lib, "s3://backups/lib", false, sizes);

      String to = "s3://backups/full/lib.bsave";
      // --min-live 100: only shards every byte of which is still referenced are copied.
      Cli c = Cli.ok(args(new Object[] {"consolidate", "--image", newest, "--to", to, "--json",
          "--quiet", "--min-live", "100"}, s3));
      JsonNode summary = new ObjectMapper().readTree(c.out().lines()
          .filter(l -> l.contains("\"summary\"")).findFirst().orElseThrow());
      // f0, f2 from the full image and f1 from the second are whole 6 MiB shards.
      assertThat(summary.get("shardsCopiedInStore").asInt()).isEqualTo(3);
      assertThat(summary.get("bytesCopiedInStore").asLong()).isGreaterThanOrEqualTo(18L << 20);
      // Only the small shards were read to be rewritten: the one g1 and g2 shared, and h.txt's;
      // the shards the store copies were read once, to be checked before it copied them.
      assertThat(summary.get("bytesReadToRewrite").asLong()).isLessThan(64 << 10);
      assertThat(summary.get("bytesRead").asLong()).isGreaterThanOrEqualTo(18L << 20);
      assertThat(summary.get("shardsRewritten").asInt()).isEqualTo(1);

      S3Store store = S3Store.at(server.settings(), new ObjectUri("backups", ""));
      assertThat(store.uploadsInProgress("full/lib.bsave")).isEmpty();
      assertThat(store.list("full/")).extracting(Store.Item::key)
          .noneMatch(k -> k.contains(".beamsave-staging-"));
      Cli.ok(args(new Object[] {"verify", to, "--quiet"}, s3));
      Path restored = dir.resolve("restored");
      Cli.ok(args(new Object[] {"restore", to, "--target", restored, "--quiet"}, s3));
      assertThat(TreeSnapshot.of(restored).diff(TreeSnapshot.of(lib))).isNull();

      // A base gone: one line, and no object, staging or upload left.
      store.delete(ObjectUri.parse(newest, false).key().replaceAll("[^/]*$", "")
          + store.list("lib/").stream().map(Store.Item::key).filter(k -> k.endsWith(".bsave"))
              .sorted().findFirst().orElseThrow().substring("lib/".length()));
      Cli bad = Cli.run(args(new Object[] {"consolidate", "--image", newest, "--to",
          "s3://backups/full/again.bsave"}, s3));
      assertThat(bad.exit()).isEqualTo(1);
      assertThat(bad.err().strip().lines()).hasSize(1).first().asString().contains("is missing");
      assertThat(store.stat("full/again.bsave")).isEmpty();
      assertThat(store.uploadsInProgress("full/again.bsave")).isEmpty();
      assertThat(store.list("full/")).extracting(Store.Item::key)
          .noneMatch(k -> k.contains(".beamsave-staging-") || k.contains("again"));
    }
  }
}

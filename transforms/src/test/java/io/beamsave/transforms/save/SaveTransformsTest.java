package io.beamsave.transforms.save;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.sink.FileImageSink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Random;
import net.jpountz.xxhash.XXHashFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class SaveTransformsTest {
  @Rule public final transient TestPipeline pipeline = TestPipeline.create();
  @Rule public final transient TemporaryFolder tmp = new TemporaryFolder();

  private Path library() throws IOException {
    Path root = tmp.newFolder("lib").toPath();
    Files.createDirectories(root.resolve("a/b"));
    byte[] big = new byte[300_000];
    new Random(5).nextBytes(big);
    Files.write(root.resolve("a/b/big.bin"), big);
    Files.writeString(root.resolve("a/small.txt"), "hello ".repeat(1000));
    Files.writeString(root.resolve("z.txt"), "z");
    return root;
  }

  private SaveSpec spec(Path root) {
    return SaveSpec.of(tmp.getRoot() + "/staging")
        .withBlockSize(4096)
        .withShardSize(100_000)
        .withLibrary("lib", root.toString(), new FileImageSink(Path.of(tmp.getRoot() + "/lib.bsave")));
  }

  /** The save's transforms, as SavePipeline puts them together, on the test's pipeline. */
  private PCollection<KV<String, String>> save(SaveSpec spec) {
    return pipeline
        .apply("List", ListLibrary.of(spec))
        .apply("Plan", PlanShards.of(spec))
        .apply(Reshuffle.viaRandomKey())
        .apply("Compress", CompressShards.of(spec))
        .apply("Assemble", AssembleImage.of(spec));
  }

  @Test
  public void plansShardsOfTheConfiguredSize() throws Exception {
    SaveSpec spec = spec(library());
    PCollection<ShardTask> tasks =
        pipeline.apply(ListLibrary.of(spec)).apply(PlanShards.of(spec));
    PAssert.that(tasks)
        .satisfies(
            all -> {
              long total = 0;
              int count = 0;
              for (ShardTask t : all) {
                count++;
                total += t.rawBytes();
                assertThat(t.rawBytes()).isLessThanOrEqualTo(100_000);
              }
              assertThat(total).isEqualTo(300_000 + 6000 + 1);
              assertThat(count).isEqualTo(4);
              return null;
            });
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void compressesShardsIntoStagingAndAssemblesAVerifiedImage() throws Exception {
    Path root = library();
    SaveSpec spec = spec(root);
    PCollection<KV<String, String>> images =
        save(spec);
    PAssert.that(images).containsInAnyOrder(KV.of("lib", tmp.getRoot() + "/lib.bsave"));
    pipeline.run().waitUntilFinish();

    Catalog c = ImageReader.readCatalog(tmp.getRoot().toPath().resolve("lib.bsave"));
    assertThat(io.beamsave.testing.Entries.paths(c.entries()))
        .containsExactly("a", "a/b", "a/b/big.bin", "a/small.txt", "z.txt");
    assertThat(c.shards()).hasSize(4);
    Entry big = c.entries().get(2);
    assertThat(big.extents()).hasSize(3);
    // The digest of each extent is the XXH64 of that piece of the file (checked here with
    // lz4-java's pure-Java implementation, not the native one the transform uses).
    byte[] content = Files.readAllBytes(root.resolve("a/b/big.bin"));
    long expected =
        XXHashFactory.safeInstance().hash64().hash(content, 0, (int) big.extents().get(0).length(), 0);
    assertThat(ByteBuffer.wrap(big.extents().get(0).digest()).getLong()).isEqualTo(expected);
    assertThat(Path.of(spec.staging(), "lib")).doesNotExist();
  }

  @Test
  public void spreadOverWorkersTheShardsAreAMultipleOfThemAndEqualButTheLast() throws Exception {
    // 306,001 bytes in shards of at most 100,000: 4 as given, 6 of 53,248 (13 blocks) spread
    // over 3 workers; the catalog records the size the plan used.
    Path root = library();
    SaveSpec spec = spec(root).withSpreadOver(3);
    assertThat(spec.shardSize(306_001)).isEqualTo(13 * 4096);
    save(spec);
    pipeline.run().waitUntilFinish();

    Catalog c = ImageReader.readCatalog(tmp.getRoot().toPath().resolve("lib.bsave"));
    assertThat(c.shardSize()).isEqualTo(13 * 4096);
    assertThat(c.shards()).extracting(io.beamsave.transforms.image.catalog.ShardInfo::rawLength)
        .containsExactly(53_248L, 53_248L, 53_248L, 53_248L, 53_248L, 39_761L);
    assertThat(c.entries().get(2).extents()).extracting(e -> e.shard())
        .containsExactly(0, 1, 2, 3, 4, 5);
    assertThat(io.beamsave.testing.ImageFiles.read(tmp.getRoot().toPath().resolve("lib.bsave"))
        .get("a/b/big.bin")).isEqualTo(Files.readAllBytes(root.resolve("a/b/big.bin")));
  }

  /**
   * Files handed over once every planned shard is written join the image in path order, in
   * shards of their own after the planned ones, and read back byte for byte.
   */
  @Test
  public void lateFilesJoinTheImageInPathOrderAfterThePlannedShards() throws Exception {
    Path root = library();
    Path late = tmp.newFolder("late").toPath();
    Files.createDirectories(late.resolve("a/b"));
    byte[] wal = new byte[250_000];
    new Random(9).nextBytes(wal);
    Files.write(late.resolve("a/b/late.bin"), wal);
    Path label = tmp.newFolder("label").toPath();
    Files.writeString(label.resolve("label"), "START");
    SaveSpec spec = spec(root).withLateFiles("lib", "the test");
    int[] collected = new int[1];
    try (AutoCloseable registered = LateFiles.register(spec, "lib", () -> {
      collected[0]++;
      return new LateFiles.Handed(List.of(
          new LateFiles.From(late, List.of(PathBytes.of("a/b/late.bin"))),
          new LateFiles.From(label, List.of(PathBytes.of("label")))),
          java.util.Map.of("late", "yes"));
    })) {
      save(spec);
      pipeline.run().waitUntilFinish();
    }
    assertThat(collected[0]).isEqualTo(1);
    Path image = tmp.getRoot().toPath().resolve("lib.bsave");
    Catalog c = ImageReader.readCatalog(image);
    assertThat(io.beamsave.testing.Entries.paths(c.entries())).containsExactly("a", "a/b",
        "a/b/big.bin", "a/b/late.bin", "a/small.txt", "label", "z.txt");
    // Four planned shards, then the late files' in shards of 100,000, from each directory.
    assertThat(c.shards()).hasSize(8);
    assertThat(c.entries().get(5).extents()).extracting(e -> e.shard()).containsExactly(7);
    assertThat(c.entries().get(3).extents()).extracting(e -> e.shard())
        .containsExactly(4, 5, 6);
    assertThat(c.notes()).containsEntry("late", "yes");
    var files = io.beamsave.testing.ImageFiles.read(image);
    assertThat(files.get("a/b/late.bin")).isEqualTo(wal);
    assertThat(files.get("label")).isEqualTo("START".getBytes());
    assertThat(files.get("a/b/big.bin")).isEqualTo(Files.readAllBytes(root.resolve("a/b/big.bin")));
  }

  /** A late file whose directory the image does not hold fails the image, never restoring. */
  @Test
  public void aLateFileOutsideTheListedDirectoriesFailsTheImage() throws Exception {
    Path late = tmp.newFolder("late").toPath();
    Files.createDirectories(late.resolve("gone"));
    Files.writeString(late.resolve("gone/x"), "x");
    SaveSpec spec = spec(library()).withLateFiles("lib", "the test");
    try (AutoCloseable registered = LateFiles.register(spec, "lib", () ->
        new LateFiles.Handed(List.of(new LateFiles.From(late, List.of(PathBytes.of("gone/x")))),
            java.util.Map.of()))) {
      save(spec);
      assertThatThrownBy(() -> pipeline.run().waitUntilFinish())
          .rootCause().hasMessage("lib: the directory gone of gone/x, which is added at the"
              + " save's end, is not in the image (left out?)");
    }
    assertThat(tmp.getRoot().toPath().resolve("lib.bsave")).doesNotExist();
  }

  /** A library that expects late files, assembled where no source hands them over, fails. */
  @Test
  public void lateFilesWithoutTheirSourceFailTheImageInOneLine() throws Exception {
    SaveSpec spec = spec(library()).withLateFiles("lib", "pg_backup_stop");
    save(spec);
    assertThatThrownBy(() -> pipeline.run().waitUntilFinish())
        .hasRootCauseInstanceOf(BeamsaveException.class)
        .rootCause().hasMessageStartingWith("lib: pg_backup_stop hands its files over in the"
            + " JVM that runs the save");
    assertThat(tmp.getRoot().toPath().resolve("lib.bsave")).doesNotExist();
  }

  @Test
  public void aShardSizeForOneWorkerOrNoBytesIsTheOneGiven() {
    SaveSpec spec = SaveSpec.of("/staging").withSizes(64L << 20, 1 << 20);
    assertThat(spec.shardSize(74L << 20)).isEqualTo(64L << 20);
    SaveSpec two = spec.withSpreadOver(2);
    assertThat(two.shardSize(74L << 20)).isEqualTo(37L << 20);
    assertThat(two.shardSize(0)).isEqualTo(64L << 20);
    // Never under a block, never over the size given.
    assertThat(two.shardSize(1000)).isEqualTo(1 << 20);
    assertThat(two.shardSize(1464L << 20)).isEqualTo(61L << 20);
    assertThat(spec.withSpreadOver(4).shardSize((64L << 20) * 8)).isEqualTo(64L << 20);
    assertThat(spec.withSpreadOver(4).shardSize((64L << 20) * 8 + 1)).isEqualTo(43L << 20);
  }

  @Test
  public void aFileChangedSinceListingFailsTheShardNamingIt() throws Exception {
    Path root = library();
    SaveSpec spec = spec(root);
    Path changed = root.resolve("z.txt");
    ShardTask task =
        new ShardTask("lib", 0, List.of(new ShardTask.FileRange(PathBytes.of("z.txt"), 0, 1, 1, 1, 0, 0, 0, 0)));
    Files.setLastModifiedTime(changed, FileTime.fromMillis(5_000));
    pipeline.apply(Create.of(task).withCoder(ShardTask.CODER)).apply(CompressShards.of(spec));
    assertThatThrownBy(() -> pipeline.run().waitUntilFinish())
        .hasRootCauseInstanceOf(BeamsaveException.class)
        .rootCause()
        .hasMessageContaining("file changed while it was being saved: " + changed);
  }

  @Test
  public void withAllowChangingTheFileIsKeptAndReportedChanged() throws Exception {
    Path root = library();
    SaveSpec spec = spec(root).withAllowChanging(true);
    // The listing saw 10 bytes; the file now has 1, so 9 bytes are padded with zeros.
    ShardTask task =
        new ShardTask("lib", 0, List.of(new ShardTask.FileRange(PathBytes.of("z.txt"), 0, 10, 10, 1, 0, 0, 0, 0)));
    PCollection<KV<String, ShardResult>> out =
        pipeline.apply(Create.of(task).withCoder(ShardTask.CODER)).apply(CompressShards.of(spec));
    PAssert.that(out)
        .satisfies(
            results -> {
              ShardResult r = results.iterator().next().getValue();
              assertThat(r.changedPaths()).containsExactly(PathBytes.of("z.txt"));
              assertThat(r.rawLength()).isEqualTo(10);
              return null;
            });
    pipeline.run().waitUntilFinish();
  }

}

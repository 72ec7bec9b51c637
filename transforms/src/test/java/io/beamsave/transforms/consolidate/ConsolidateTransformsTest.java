package io.beamsave.transforms.consolidate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.ImageFiles;
import io.beamsave.testing.TestChain;
import io.beamsave.testing.TestPipelineExtension;
import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.codec.CodecId;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.consolidate.ConsolidateTask.Kind;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.ShardInfo;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.save.ShardResult;
import io.beamsave.transforms.sink.FileImageSink;
import io.beamsave.transforms.sink.ImageSink;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ConsolidateShards} and {@link AssembleConsolidated} on a chain saved with lz4 ({@link
 * TestChain}), consolidated with zstd:3: the image made holds the newest files byte for byte,
 * copied shards keep their blocks as stored, and damage or a missing shard fails the run naming
 * it, with no image made.
 */
@ExtendWith(TestPipelineExtension.class)
class ConsolidateTransformsTest {
  static final Codec ZSTD = Codecs.parse("zstd:3");

  @TempDir static Path shared;
  static TestChain chain;

  @TempDir Path dir;
  Path out;
  ImageSink sink;
  ConsolidatePlan plan;

  @BeforeAll
  static void saveChain() throws Exception {
    chain = TestChain.save(shared, "lz4", 4096, 4096);
  }

  @BeforeEach
  void planIt() throws IOException {
    out = dir.resolve("full.bsave");
    sink = new FileImageSink(out).prepare();
    plan = ConsolidatePlan.of(
        ImageChain.resolveAll(chain.newest().toString(), chain.newestCatalog(), null, Keys.NONE),
        chain.newestCatalog(), ZSTD.spec(), sink, 0.5);
    assertThat(plan.shards(Kind.COPY)).as("the plan copies and rewrites").isPositive();
    assertThat(plan.shards(Kind.REWRITE)).isPositive();
  }

  private PCollection<String> consolidate(TestPipeline p, List<ConsolidateTask> tasks) {
    return p.apply(Create.of(tasks).withCoder(ConsolidateTask.CODER))
        .apply(ConsolidateShards.into(sink, ZSTD, plan.blockSize(), null))
        .apply(AssembleConsolidated.of(plan, sink, ZSTD));
  }

  @Test
  void aChainBecomesOneFullImageHoldingTheNewestFilesByteForByte(TestPipeline p)
      throws IOException {
    PAssert.that(consolidate(p, plan.tasks())).containsInAnyOrder(out.toString());
    p.run().waitUntilFinish();

    Catalog made = ImageReader.readCatalog(out);
    assertThat(made.bases()).isEmpty();
    assertThat(made.depth()).isZero();
    assertThat(made.origin()).isEqualTo(chain.newestCatalog().id());
    assertThat(made.shards()).hasSize(plan.shardCount());
    assertSameFiles(ImageFiles.read(out), chain.files());
    assertThat(ImageWriter.partialPath(out)).doesNotExist();
  }

  static void assertSameFiles(Map<String, byte[]> image, Map<String, byte[]> library) {
    assertThat(image).containsOnlyKeys(library.keySet());
    library.forEach((name, bytes) -> assertThat(image.get(name)).as(name).isEqualTo(bytes));
  }

  @Test
  void eachPlannedShardIsMadeOnceWithTheRawBytesThePlanGivesIt(TestPipeline p) {
    Map<Integer, Long> planned = new HashMap<>();
    plan.tasks().forEach(t -> planned.put(t.shard(), t.rawBytes()));
    PCollection<KV<String, ShardResult>> made =
        p.apply(Create.of(plan.tasks()).withCoder(ConsolidateTask.CODER))
            .apply(ConsolidateShards.into(sink, ZSTD, plan.blockSize(), null));
    PAssert.that(made).satisfies(results -> {
      Map<Integer, Long> raw = new HashMap<>();
      List<String> keys = new ArrayList<>();
      for (KV<String, ShardResult> r : results) {
        keys.add(r.getKey());
        assertThat(raw.put(r.getValue().shard(), r.getValue().rawLength()))
            .as("shard %d made once", r.getValue().shard()).isNull();
      }
      assertThat(raw).isEqualTo(planned);
      assertThat(keys).as("one image").containsOnly(keys.get(0));
      return null;
    });
    p.run().waitUntilFinish();
  }

  @Test
  void aCopiedShardKeepsItsBlocksAsStoredAndARewrittenOneTakesTheNewCodec(TestPipeline p)
      throws IOException {
    consolidate(p, plan.tasks());
    p.run().waitUntilFinish();

    Catalog made = ImageReader.readCatalog(out);
    for (ConsolidateTask t : plan.tasks()) {
      ShardInfo now = made.shards().get(t.shard());
      byte[] written = bytes(out, now.imageOffset(), now.storedLength());
      if (t.kind() == Kind.COPY) {
        ShardInfo was = t.source().info();
        assertThat(written).as("shard %d, copied", t.shard())
            .isEqualTo(bytes(Path.of(t.source().image()), was.imageOffset(), was.storedLength()));
        assertThat(written[0]).isEqualTo((byte) CodecId.LZ4.code());
      } else {
        assertThat(written[0]).as("shard %d, rewritten: its first block's codec", t.shard())
            .isEqualTo((byte) CodecId.ZSTD.code());
      }
    }
  }

  @Test
  void aShardMadeTwiceAsARetriedTaskIsInTheImageOnce(TestPipeline p) throws IOException {
    List<ConsolidateTask> twice = new ArrayList<>(plan.tasks());
    twice.addAll(plan.tasks());
    PAssert.that(consolidate(p, twice)).containsInAnyOrder(out.toString());
    p.run().waitUntilFinish();

    assertThat(ImageReader.readCatalog(out).shards()).hasSize(plan.shardCount());
    assertSameFiles(ImageFiles.read(out), chain.files());
  }

  @Test
  void anImageWithAPlannedShardMissingIsRefusedAndNotMade(TestPipeline p) {
    consolidate(p, plan.tasks().subList(0, plan.tasks().size() - 1));

    assertThatThrownBy(() -> p.run().waitUntilFinish())
        .rootCause()
        .hasMessage(out + ": " + (plan.shardCount() - 1) + " shards made, " + plan.shardCount()
            + " planned");
    assertThat(out).doesNotExist();
  }

  @Test
  void aDamagedBlockOfACopiedShardFailsTheRunNamingImageShardAndBlock(TestPipeline p)
      throws IOException {
    ConsolidateTask copied = plan.tasks().stream()
        .filter(t -> t.kind() == Kind.COPY && t.source().image().equals(chain.base().toString()))
        .findFirst().orElseThrow();
    Path damaged = damagedCopy(chain.base(), copied.source().info(), 1);

    consolidate(p, retarget(plan.tasks(), chain.base(), damaged));

    assertThatThrownBy(() -> p.run().waitUntilFinish())
        .rootCause()
        .hasMessageContaining(damaged + ": shard " + copied.source().shard() + " block 1");
    // As the command does when a run fails: its workers still writing stop, and what they
    // wrote goes.
    assertThat(sink.discard()).isEmpty();
    assertThat(out).doesNotExist();
  }

  @Test
  void aDamagedPieceOfARewrittenShardFailsItsTaskNamingImageShardAndBlock(TestPipeline p)
      throws IOException {
    ConsolidateTask rewritten = plan.tasks().stream().filter(t -> t.kind() == Kind.REWRITE)
        .findFirst().orElseThrow();
    ReadTask read = rewritten.reads().get(0);
    Path damaged = damagedCopy(Path.of(read.image()), read.info(), 0);

    p.apply(Create.of(retarget(List.of(rewritten), Path.of(read.image()), damaged))
            .withCoder(ConsolidateTask.CODER))
        .apply(ConsolidateShards.into(sink, ZSTD, plan.blockSize(), null));

    assertThatThrownBy(() -> p.run().waitUntilFinish())
        .rootCause()
        .hasMessageContaining(damaged + ": shard " + read.shard() + " block 0");
    assertThat(sink.discard()).isEmpty();
  }

  /** A copy of {@code image} with one byte of block {@code block} of a shard flipped. */
  private Path damagedCopy(Path image, ShardInfo shard, int block) throws IOException {
    Path copy = Files.copy(image, dir.resolve("damaged-" + image.getFileName()));
    try (RandomAccessFile f = new RandomAccessFile(copy.toFile(), "rw")) {
      long at = shard.blockOffset(block) + 20;
      f.seek(at);
      int b = f.read();
      f.seek(at);
      f.write(b ^ 0x40);
    }
    return copy;
  }

  /** The same tasks, reading {@code to} wherever they read {@code from}. */
  private static List<ConsolidateTask> retarget(List<ConsolidateTask> tasks, Path from, Path to) {
    List<ConsolidateTask> out = new ArrayList<>();
    for (ConsolidateTask t : tasks) {
      List<ReadTask> reads = new ArrayList<>();
      for (ReadTask r : t.reads()) {
        reads.add(r.image().equals(from.toString())
            ? new ReadTask(to.toString(), r.blockSize(), r.shard(), r.info(), r.pieces()) : r);
      }
      out.add(new ConsolidateTask(t.kind(), t.shard(), reads, t.sealedKey()));
    }
    return out;
  }

  private static byte[] bytes(Path file, long offset, long length) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
      byte[] b = new byte[Math.toIntExact(length)];
      f.seek(offset);
      f.readFully(b);
      return b;
    }
  }
}

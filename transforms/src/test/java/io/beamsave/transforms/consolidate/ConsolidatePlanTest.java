package io.beamsave.transforms.consolidate;

import static io.beamsave.testing.TestChain.SHARD;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.TestChain;
import io.beamsave.transforms.consolidate.ConsolidateTask.Kind;
import io.beamsave.transforms.crypt.Identity;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.sink.FileImageSink;
import io.beamsave.transforms.sink.ImageSink;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Which shards of a chain a consolidation copies whole and which pieces it rewrites, and the
 * catalog it gives the new image: planned over real images ({@link TestChain}: the base's shards
 * are all, three quarters, a quarter and none still needed; the newest image's all).
 */
class ConsolidatePlanTest {
  /** The library's files now: a 16K, b 16K, c 4K, d 12K, f 6K, g 12K, h 4K. */
  static final long LIBRARY_BYTES = 70 << 10;

  @TempDir static Path dir;
  static TestChain chain;
  static TestChain mixedBlocks;

  @BeforeAll
  static void saveChains() throws Exception {
    chain = TestChain.save(dir.resolve("same"), "lz4", 4096, 4096);
    mixedBlocks = TestChain.save(dir.resolve("mixed"), "lz4", 4096, 8192);
  }

  static ImageChain opened(TestChain c) {
    return ImageChain.resolveAll(c.newest().toString(), c.newestCatalog(), null, Keys.NONE);
  }

  static ImageSink sink() {
    return new FileImageSink(dir.resolve("out.bsave"));
  }

  static ConsolidatePlan plan(TestChain c, double minLive) {
    return ConsolidatePlan.of(opened(c), c.newestCatalog(), "zstd:3", sink(), minLive);
  }

  /** Each task as "KIND image:shard" of the shards it reads, in task order. */
  static List<String> layout(ConsolidatePlan plan, TestChain c) {
    List<String> out = new ArrayList<>();
    for (ConsolidateTask t : plan.tasks()) {
      StringBuilder s = new StringBuilder(t.kind().toString());
      for (ReadTask r : t.reads()) {
        s.append(' ').append(r.image().equals(c.base().toString()) ? "base" : "newest")
            .append(':').append(r.shard());
      }
      out.add(s.toString());
    }
    return out;
  }

  @Test
  void rewrittenPiecesAreGroupedNoFurtherThanAWorkerMayHoldThem() {
    // Base shards 2 and 4 are only partly live: rewritten together while their pieces take no
    // more to describe than a worker may hold, apart once they would take a byte more.
    ConsolidatePlan grouped = plan(chain, 1.0);
    assertThat(layout(grouped, chain)).startsWith("REWRITE base:2 base:4", "COPY newest:0");
    long described = 0;
    for (ReadTask r : grouped.tasks().get(0).reads()) {
      for (ShardReader.FileExtent p : r.pieces()) {
        described += io.beamsave.transforms.shard.ShardPlanner.pieceBytes(p.path().length());
      }
    }
    assertThat(layout(ConsolidatePlan.of(opened(chain), chain.newestCatalog(), "zstd:3",
        sink(), 1.0, described), chain)).startsWith("REWRITE base:2 base:4");
    ConsolidatePlan apart = ConsolidatePlan.of(opened(chain), chain.newestCatalog(), "zstd:3",
        sink(), 1.0, described - 1);
    assertThat(layout(apart, chain)).startsWith("REWRITE base:2", "REWRITE base:4");
    assertThat(apart.rawBytes()).isEqualTo(grouped.rawBytes());
  }

  @Test
  void aShardStillNeededForHalfItsBytesIsCopiedWholeAndTheRestOnlyForWhatIsNeeded() {
    ConsolidatePlan plan = plan(chain, 0.5);

    // Rewritten pieces first, then the whole shards, newest image first; base shards 1 and 3
    // hold nothing the newest image names and are left behind.
    assertThat(layout(plan, chain)).containsExactly("REWRITE base:2", "COPY newest:0",
        "COPY newest:1", "COPY newest:2", "COPY base:0", "COPY base:4");
    assertThat(plan.tasks()).extracting(ConsolidateTask::shard).containsExactly(0, 1, 2, 3, 4, 5);
    assertThat(plan.shardCount()).isEqualTo(6);
    // Of base shard 2 only c.txt is read; d.txt there is the old one.
    assertThat(plan.tasks().get(0).reads().get(0).pieces())
        .extracting(p -> p.path().toString()).containsExactly("c.txt");
    // Base shard 4 is copied with the old h.txt in it: dead bytes no reader visits.
    assertThat(plan.deadBytes()).isEqualTo(4 << 10);
    assertThat(plan.rawBytes()).isEqualTo(LIBRARY_BYTES + plan.deadBytes());
    assertThat(plan.rawBytes(Kind.REWRITE)).isEqualTo(4 << 10);
  }

  @ParameterizedTest(name = "min live {0}")
  @ValueSource(doubles = {0.25, 0.5, 1.0})
  void theLiveShareAtWhichAShardIsCopiedTradesDeadBytesForBytesRewritten(double minLive) {
    ConsolidatePlan plan = plan(chain, minLive);
    List<String> layout = layout(plan, chain);

    if (minLive == 0.25) {
      // A quarter of base shard 2 is live: enough.
      assertThat(layout).containsExactly("COPY newest:0", "COPY newest:1", "COPY newest:2",
          "COPY base:0", "COPY base:2", "COPY base:4");
      assertThat(plan.deadBytes()).isEqualTo(16 << 10);
    } else if (minLive == 0.5) {
      assertThat(layout).startsWith("REWRITE base:2").contains("COPY base:4");
      assertThat(plan.deadBytes()).isEqualTo(4 << 10);
    } else {
      // Only whole shards are copied; c.txt and g.txt (4K + 12K) fill one new shard.
      assertThat(layout).containsExactly("REWRITE base:2 base:4", "COPY newest:0",
          "COPY newest:1", "COPY newest:2", "COPY base:0");
      assertThat(plan.deadBytes()).isZero();
    }
    assertThat(plan.rawBytes()).isEqualTo(LIBRARY_BYTES + plan.deadBytes());
  }

  @Test
  void everyFileKeepsItsBytesAndDigestsInTheNewImagesShards() {
    ConsolidatePlan plan = plan(chain, 0.5);
    List<Entry> before = chain.newestCatalog().entries();
    List<Entry> after = plan.entries();

    assertThat(after).extracting(e -> e.path().toString())
        .containsExactlyElementsOf(before.stream().map(e -> e.path().toString()).toList());
    for (int i = 0; i < after.size(); i++) {
      List<Extent> was = before.get(i).extents();
      List<Extent> now = after.get(i).extents();
      assertThat(now).as(after.get(i).path().toString()).hasSameSizeAs(was)
          .allSatisfy(x -> assertThat(x.image()).as("in the new image itself").isZero());
      for (int k = 0; k < now.size(); k++) {
        Extent x = now.get(k);
        ConsolidateTask made = plan.tasks().get(x.shard());
        assertThat(x.length()).isEqualTo(was.get(k).length());
        assertThat(x.digest()).isEqualTo(was.get(k).digest());
        if (made.kind() == Kind.COPY) {
          // A copied shard keeps its layout: the extent lies where it lay in its source.
          assertThat(x.offset()).isEqualTo(was.get(k).offset());
          assertThat(made.source().pieces()).extracting(ShardReader.FileExtent::extent)
              .contains(was.get(k));
        }
      }
    }
    // The rewritten shard holds its pieces end to end from its start.
    List<Extent> rewritten = after.stream().flatMap(e -> e.extents().stream())
        .filter(x -> plan.tasks().get(x.shard()).kind() == Kind.REWRITE).toList();
    assertThat(rewritten).extracting(Extent::offset).containsExactly(0L);
    assertThat(rewritten).extracting(Extent::length).containsExactly(4L << 10);
  }

  @Test
  void theNewCatalogIsAFullImageStandingForTheNewestImagesPointInTime() {
    ConsolidatePlan plan = plan(chain, 0.5);
    Catalog newest = chain.newestCatalog();
    Catalog made = plan.catalog(List.of());

    assertThat(made.bases()).isEmpty();
    assertThat(made.depth()).isZero();
    assertThat(made.origin()).isEqualTo(newest.id());
    assertThat(made.id()).isNotEqualTo(newest.id());
    assertThat(made.createdMillis()).isEqualTo(newest.createdMillis());
    assertThat(made.library()).isEqualTo(newest.library());
    assertThat(made.codecSpec()).isEqualTo("zstd:3");
    assertThat(plan.withoutTasks().tasks()).isEmpty();
    assertThat(plan.withoutTasks().shardCount()).isEqualTo(plan.shardCount());
  }

  @Test
  void aBaseOfAnotherBlockSizeIsRewrittenEvenWhereAllOfItIsNeeded() {
    // Block k of a copied shard must hold raw bytes [k*B, (k+1)*B) of the new image's B.
    ConsolidatePlan plan = plan(mixedBlocks, 0.5);

    assertThat(layout(plan, mixedBlocks)).containsExactly("REWRITE base:0",
        "REWRITE base:2 base:4", "COPY newest:0", "COPY newest:1", "COPY newest:2");
    assertThat(plan.blockSize()).isEqualTo(8192);
    assertThat(plan.deadBytes()).isZero();
    assertThat(plan.tasks()).filteredOn(t -> t.kind() == Kind.REWRITE)
        .allSatisfy(t -> assertThat(t.rawBytes()).isLessThanOrEqualTo(SHARD));
  }

  @Test
  void intoAnEncryptedImageNoPlainShardIsCopied() {
    ImageKey key = ImageKey.create(ImageId.random(), chain.newestCatalog().createdMillis(), 0,
        chain.newestCatalog().id(), List.of(), List.of(Identity.generate().publicKey()));
    ConsolidatePlan plan = ConsolidatePlan.of(opened(chain), chain.newestCatalog(), "zstd:3",
        sink().encryptedWith(key), 0.5);

    assertThat(plan.tasks()).extracting(ConsolidateTask::kind).containsOnly(Kind.REWRITE);
    assertThat(plan.rawBytes()).isEqualTo(LIBRARY_BYTES);
    assertThat(plan.id()).isEqualTo(key.id());
  }

  @Test
  void theLiveShareOfACopiedShardIsMoreThanNothingAndAtMostAll() {
    for (double bad : new double[] {0, -0.5, 1.01, Double.NaN}) {
      assertThatThrownBy(() -> plan(chain, bad)).as("min live %s", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("the live share of a copied shard is in (0, 1]");
    }
  }

  @Test
  void aChainWhoseBasesWereNotOpenedCannotBePlanned() {
    ImageChain unopened = ImageChain.of(chain.newest().toString(), chain.newestCatalog());
    assertThatThrownBy(() -> ConsolidatePlan.of(unopened, chain.newestCatalog(), "zstd:3",
        sink(), 0.5))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("image 1 of the chain was not opened");
  }
}

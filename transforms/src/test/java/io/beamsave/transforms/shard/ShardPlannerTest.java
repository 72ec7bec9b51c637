package io.beamsave.transforms.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShardPlannerTest {
  static Entry file(String path, long size) {
    return io.beamsave.testing.Entries.file(path, size);
  }

  static Entry dir(String path) {
    return io.beamsave.testing.Entries.dir(path);
  }

  @Test
  void packsSmallFilesAndSplitsLargeOnesIntoFullShards() {
    List<Entry> entries =
        List.of(file("b", 30), file("a", 50), dir("d"), file("d/big", 250), file("e", 0));
    ShardPlanner.Plan plan = ShardPlanner.plan(entries, 100);

    assertThat(plan.shardRawLengths()).containsExactly(100L, 100L, 100L, 30L);
    assertThat(plan.entries()).extracting(e -> e.path().toString()).containsExactly("a", "b", "d", "d/big", "e");
    assertThat(plan.entries().get(0).extents()).containsExactly(new Extent(0, 0, 50, null));
    assertThat(plan.entries().get(1).extents()).containsExactly(new Extent(0, 50, 30, null));
    assertThat(plan.entries().get(3).extents())
        .containsExactly(
            new Extent(0, 80, 20, null),
            new Extent(1, 0, 100, null),
            new Extent(2, 0, 100, null),
            new Extent(3, 0, 30, null));
    assertThat(plan.entries().get(4).extents()).isEmpty();
    assertThat(plan.rawBytes()).isEqualTo(330);
  }

  @Test
  void isDeterministicWhateverTheInputOrder() {
    List<Entry> entries = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      entries.add(file("f" + i, i * 37L % 1000));
    }
    ShardPlanner.Plan first = ShardPlanner.plan(entries, 4096);
    Collections.shuffle(entries, new java.util.Random(7));
    ShardPlanner.Plan second = ShardPlanner.plan(entries, 4096);
    assertThat(second.shardRawLengths()).isEqualTo(first.shardRawLengths());
    assertThat(second.entries().stream().map(Entry::path).toList())
        .isEqualTo(first.entries().stream().map(Entry::path).toList());
    for (int i = 0; i < first.entries().size(); i++) {
      assertThat(second.entries().get(i).extents()).isEqualTo(first.entries().get(i).extents());
    }
  }

  @Test
  void anEmptyLibraryHasNoShards() {
    assertThat(ShardPlanner.plan(List.of(dir("x"), file("x/empty", 0)), 64).shardCount()).isZero();
  }

  @Test
  void handlesFilesLargerThanFourGiB() {
    long big = (5L << 30) + 3;
    ShardPlanner.Plan plan = ShardPlanner.plan(List.of(file("sparse", big)), 64L << 20);
    assertThat(plan.shardCount()).isEqualTo(81);
    assertThat(plan.rawBytes()).isEqualTo(big);
    List<Extent> x = plan.entries().get(0).extents();
    assertThat(x.get(80)).isEqualTo(new Extent(80, 0, 3, null));
  }

  @Test
  void aShardOfManySmallFilesClosesOnceItsPiecesTakeTheMostATaskMayHold() {
    // 300,000 files of 2 bytes, names of 7: a piece takes 77 bytes to describe, so a shard
    // closes after 217,885 of them, whatever room its raw bytes leave.
    List<Entry> entries = new ArrayList<>();
    for (int i = 0; i < 300_000; i++) {
      entries.add(file(String.format("f%06d", i), 2));
    }
    long perShard = ShardPlanner.MAX_PIECE_BYTES / ShardPlanner.pieceBytes(7);
    assertThat(perShard).isEqualTo(217_885);
    ShardPlanner.Plan plan = ShardPlanner.plan(entries, 64L << 20);
    assertThat(plan.shardRawLengths())
        .containsExactly(2 * perShard, 2 * (300_000 - perShard));
    assertThat(plan.entries().get((int) perShard - 1).extents())
        .containsExactly(new Extent(0, 2 * (perShard - 1), 2, null));
    assertThat(plan.entries().get((int) perShard).extents())
        .containsExactly(new Extent(1, 0, 2, null));
    // A file split over shards costs a piece in each; a large file's pieces close no shard.
    ShardPlanner.Plan big = ShardPlanner.plan(List.of(file("a", 250), file("b", 1)), 100);
    assertThat(big.shardRawLengths()).containsExactly(100L, 100L, 51L);
  }
}

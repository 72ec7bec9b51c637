package io.beamsave.transforms.image;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.block.BlockEncoder;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.ExtentDigest;
import io.beamsave.transforms.image.catalog.ShardInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImageWriterTest {
  @TempDir Path dir;

  @Test
  void concurrentAppendsNeverOverlapAndKeepTheirBytes() throws Exception {
    Path image = dir.resolve("x.bsave");
    int shards = 40;
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<Long>> offsets = new ArrayList<>();
    for (int i = 0; i < shards; i++) {
      byte[] bytes = new byte[1000 + i * 3001];
      Arrays.fill(bytes, (byte) i);
      offsets.add(pool.submit(() -> ImageWriter.appendShard(image, bytes, bytes.length)));
    }
    pool.shutdown();
    assertThat(pool.awaitTermination(1, java.util.concurrent.TimeUnit.MINUTES)).isTrue();
    byte[] file = Files.readAllBytes(ImageWriter.partialPath(image));
    long total = ImageFormat.HEADER_SIZE;
    for (int i = 0; i < shards; i++) {
      int off = Math.toIntExact(offsets.get(i).get());
      int len = 1000 + i * 3001;
      total += len;
      for (int k = 0; k < len; k++) {
        if (file[off + k] != (byte) i) {
          throw new AssertionError("shard " + i + " overwritten at byte " + k);
        }
      }
    }
    assertThat(file.length).isEqualTo(total);
    assertThat(Arrays.copyOf(file, 8)).isEqualTo(ImageFormat.MAGIC);
  }

  static int shardLength(int i) {
    return (256 << 10) + i * 4099;
  }

  /**
   * Two processes on one host append to one image, as two TaskManagers do. Each process's
   * background flush opens and closes its own channel to the file, which on POSIX drops the
   * process's lock; appends must still never interleave.
   */
  @Test
  void appendsFromTwoProcessesNeverOverlap() throws Exception {
    Path image = dir.resolve("shared.bsave");
    int count = 150;
    Process other =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"),
                AppendShardsProcess.class.getName(), image.toString(), "2", String.valueOf(count))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    List<long[]> shards = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      byte[] shard = new byte[shardLength(i)];
      Arrays.fill(shard, (byte) 1);
      shards.add(new long[] {ImageWriter.appendShard(image, shard, shard.length), shard.length, 1});
    }
    String theirs = new String(other.getInputStream().readAllBytes());
    assertThat(other.waitFor()).isZero();
    for (String line : theirs.strip().split("\n")) {
      String[] f = line.split(" ");
      shards.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), 2});
    }
    assertThat(shards).hasSize(2 * count);
    shards.sort(java.util.Comparator.comparingLong(s -> s[0]));
    byte[] file = Files.readAllBytes(ImageWriter.partialPath(image));
    long expected = ImageFormat.HEADER_SIZE;
    for (long[] s : shards) {
      assertThat(s[0]).as("offset of the shard after byte %d", expected).isEqualTo(expected);
      for (int k = 0; k < s[1]; k++) {
        if (file[(int) s[0] + k] != (byte) s[2]) {
          throw new AssertionError("shard at " + s[0] + " overwritten at byte " + k);
        }
      }
      expected += s[1];
    }
    assertThat((long) file.length).isEqualTo(expected);
  }

  /**
   * A task that ran twice (a retried worker, a job restarted after a lost TaskManager) appended
   * its shard twice; the catalog names one copy and the image reads back, the other copy being
   * dead space.
   */
  @Test
  void aShardAppendedTwiceStillMakesAnImageThatReadsBack() throws Exception {
    Path image = dir.resolve("twice.bsave");
    byte[] data = "written by a task that ran twice\n".repeat(200).getBytes();
    java.io.ByteArrayOutputStream blocks = new java.io.ByteArrayOutputStream();
    int len;
    try (BlockEncoder enc = new BlockEncoder(io.beamsave.transforms.codec.Codecs.parse("zstd:3"),
        8192)) {
      len = enc.write(data, data.length, blocks);
    }
    byte[] shard = blocks.toByteArray();
    ImageWriter.appendShard(image, shard, shard.length);
    long second = ImageWriter.appendShard(image, shard, shard.length);
    byte[] digest;
    try (ExtentDigest d = new ExtentDigest()) {
      d.update(data, 0, data.length);
      digest = d.digest();
    }
    Entry file = io.beamsave.testing.Entries.file("f", data.length,
        new Extent(0, 0, data.length, digest));
    try (ImageWriter w = ImageWriter.open(image)) {
      w.finish(io.beamsave.testing.Entries.catalog("zstd:3", 8192, List.of(file),
              List.of(new ShardInfo(second, shard.length, data.length, new int[] {len}))),
          io.beamsave.transforms.codec.Codecs.parse("zstd:3"));
    }
    Catalog c = ImageReader.readCatalog(image);
    byte[] back = new byte[data.length];
    try (ImageSource src = FileImageSource.open(image); ShardReader r = new ShardReader(8192)) {
      r.read(src, "twice", 0, c.shards().get(0),
          List.of(new ShardReader.FileExtent(file.path(), 0, c.entries().get(0).extents().get(0), 0)),
          (p, pos, buf, off, n, zero) -> System.arraycopy(buf, off, back, (int) pos, n));
    }
    assertThat(back).isEqualTo(data);
  }

  @Test
  void aShardTableThatDoesNotTileTheFileIsRefusedAndLeavesNoImage() throws Exception {
    Path image = dir.resolve("bad.bsave");
    byte[] shard = new byte[5000];
    long first = ImageWriter.appendShard(image, shard, shard.length);
    long second = ImageWriter.appendShard(image, shard, shard.length);
    List<ShardInfo> overlapping =
        List.of(
            new ShardInfo(first, shard.length, shard.length, new int[] {shard.length}),
            new ShardInfo(second - 100, shard.length, shard.length, new int[] {shard.length}));
    try (ImageWriter w = ImageWriter.open(image)) {
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () -> w.finish(
                  io.beamsave.testing.Entries.catalog("none", 4096, List.of(), overlapping),
                  io.beamsave.transforms.codec.Codecs.parse("none")))
          .isInstanceOf(java.io.IOException.class)
          .hasMessageContaining("bad.bsave.partial")
          .hasMessageContaining("overlaps");
    }
    assertThat(image).doesNotExist();
    assertThat(ImageWriter.partialPath(image)).doesNotExist();
  }

  @Test
  void anImageWithoutShardsGetsItsHeaderWhenFinished() throws Exception {
    Path image = dir.resolve("empty.bsave");
    try (ImageWriter w = ImageWriter.open(image)) {
      w.finish(
          io.beamsave.testing.Entries.catalog("none", 4096, List.of(), List.of()),
          io.beamsave.transforms.codec.Codecs.parse("none"));
    }
    assertThat(ImageReader.readCatalog(image).entries()).isEmpty();
    assertThat(ImageWriter.partialPath(image)).doesNotExist();
  }

  @Test
  void aLinkPutWhereThePartialImageGoesIsNeverWrittenThrough() throws Exception {
    Path victim = Files.writeString(dir.resolve("victim"), "untouched");
    Path image = dir.resolve("x.bsave");
    Files.createSymbolicLink(ImageWriter.partialPath(image), victim);
    org.assertj.core.api.Assertions.assertThatThrownBy(
        () -> ImageWriter.appendShard(image, new byte[] {1, 2, 3}, 3))
        .isInstanceOf(java.io.IOException.class);
    Files.delete(ImageWriter.partialPath(image));
    Files.createLink(ImageWriter.partialPath(image), victim);
    org.assertj.core.api.Assertions.assertThatThrownBy(
        () -> ImageWriter.appendShard(image, new byte[] {1, 2, 3}, 3))
        .hasMessageContaining("not a partial image this save made");
    assertThat(victim).hasContent("untouched");
  }
}

package io.beamsave.transforms.image;

import static org.assertj.core.api.Assertions.assertThat;

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

  @Test
  void anImageWithoutShardsGetsItsHeaderWhenFinished() throws Exception {
    Path image = dir.resolve("empty.bsave");
    try (ImageWriter w = ImageWriter.open(image)) {
      w.finish(
          new Catalog("e", "none", 0, 4096, 1 << 20, List.of(), List.of()),
          io.beamsave.transforms.codec.Codecs.parse("none"));
    }
    assertThat(ImageReader.readCatalog(image).entries()).isEmpty();
    assertThat(ImageWriter.partialPath(image)).doesNotExist();
  }
}

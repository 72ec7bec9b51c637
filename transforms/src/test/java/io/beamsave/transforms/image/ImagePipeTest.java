package io.beamsave.transforms.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codecs;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImagePipeTest {
  @TempDir Path dir;

  static byte[] filled(int length, int value) {
    byte[] b = new byte[length];
    Arrays.fill(b, (byte) value);
    return b;
  }

  /** Reads the whole pipe in reads of {@code n} bytes, as an upload does. */
  static byte[] readAll(ImagePipe pipe, int n) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] b = new byte[n];
    long pos = 0;
    while (true) {
      int got = pipe.read(b, pos, n);
      out.write(b, 0, got);
      pos += got;
      if (got < n) {
        return out.toByteArray();
      }
    }
  }

  /** Waits until the thread {@code t} will hold has blocked in the pipe. */
  static void awaitWaiting(AtomicReference<Thread> t) {
    while (t.get() == null || t.get().getState() != Thread.State.WAITING) {
      Thread.onSpinWait();
    }
  }

  static Catalog catalog(List<ShardInfo> shards) {
    return io.beamsave.testing.Entries.catalog("none", 4096, List.of(), shards);
  }

  @Test
  void anImageThroughThePipeHasTheBytesOfTheFileWriterAndNoFileIsWritten() throws Exception {
    Path image = dir.resolve("piped.bsave");
    Path file = dir.resolve("file.bsave");
    ImagePipe pipe = ImagePipe.open(image, 1 << 20);
    CompletableFuture<byte[]> read = CompletableFuture.supplyAsync(() -> readAll(pipe, 7000));
    List<ShardInfo> piped = new ArrayList<>();
    List<ShardInfo> written = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      byte[] shard = filled(3000 + i * 1111, i + 1);
      // The pipe copies: the caller reuses its buffer, as the compressing workers do.
      long at = ImageWriter.appendShard(image, shard, shard.length);
      Arrays.fill(shard, (byte) 0xEE);
      piped.add(new ShardInfo(at, shard.length, shard.length, new int[] {shard.length}));
      byte[] again = filled(3000 + i * 1111, i + 1);
      long fileAt = ImageWriter.appendShard(file, again, again.length);
      written.add(new ShardInfo(fileAt, again.length, again.length, new int[] {again.length}));
    }
    assertThat(piped).extracting(ShardInfo::imageOffset)
        .isEqualTo(written.stream().map(ShardInfo::imageOffset).toList());
    long length;
    try (ImageWriter w = ImageWriter.open(image)) {
      length = w.finish(catalog(piped), Codecs.parse("none"));
    }
    try (ImageWriter w = ImageWriter.open(file)) {
      assertThat(w.finish(catalog(written), Codecs.parse("none"))).isEqualTo(length);
    }
    assertThat(read.get()).isEqualTo(Files.readAllBytes(file));
    assertThat(pipe.finalLength()).isEqualTo(length);
    assertThat(image).doesNotExist();
    assertThat(ImageWriter.partialPath(image)).doesNotExist();
    // Ended, the pipe no longer takes the image's shards: a later save of it writes a file.
    assertThat(ImagePipe.of(image)).isNull();
  }

  @Test
  void writersWaitOnceTheLimitIsUnreadAndGoOnWhenTheReaderCatchesUp() throws Exception {
    Path image = dir.resolve("slow.bsave");
    int limit = 10_000;
    ImagePipe pipe = ImagePipe.open(image, limit);
    byte[] header = new byte[ImageFormat.HEADER_SIZE];
    assertThat(pipe.read(header, 0, header.length)).isEqualTo(header.length);
    assertThat(pipe.append(filled(6000, 1), 6000)).isEqualTo(ImageFormat.HEADER_SIZE);
    assertThat(pipe.append(filled(6000, 2), 6000)).isEqualTo(ImageFormat.HEADER_SIZE + 6000L);
    AtomicReference<Thread> writer = new AtomicReference<>();
    CompletableFuture<Long> third = CompletableFuture.supplyAsync(() -> {
      writer.set(Thread.currentThread());
      return pipe.append(filled(6000, 3), 6000);
    });
    awaitWaiting(writer);
    assertThat(third).isNotDone();
    assertThat(pipe.length()).isEqualTo(ImageFormat.HEADER_SIZE + 12_000);
    byte[] b = new byte[6000];
    assertThat(pipe.read(b, ImageFormat.HEADER_SIZE, b.length)).isEqualTo(6000);
    assertThat(b).isEqualTo(filled(6000, 1));
    assertThat(third.get()).isEqualTo(ImageFormat.HEADER_SIZE + 12_000L);
    pipe.fail("done with it");
  }

  @Test
  void aReaderWaitingForMoreThanTheLimitLetsWritersGoOnUntilItHasIt() throws Exception {
    Path image = dir.resolve("big-reads.bsave");
    int limit = 10_000;
    ImagePipe pipe = ImagePipe.open(image, limit);
    pipe.append(filled(limit, 1), limit);
    // An upload's reads grow with the part count and may exceed the limit: were the writers to
    // wait for it to read, and it for them to write, neither would ever go on.
    int want = ImageFormat.HEADER_SIZE + 2 * limit;
    AtomicReference<Thread> reader = new AtomicReference<>();
    CompletableFuture<Integer> read = CompletableFuture.supplyAsync(() -> {
      reader.set(Thread.currentThread());
      return pipe.read(new byte[want], 0, want);
    });
    awaitWaiting(reader);
    AtomicReference<Thread> writer = new AtomicReference<>();
    CompletableFuture<Void> writes = CompletableFuture.runAsync(() -> {
      writer.set(Thread.currentThread());
      for (int i = 0; i < 10; i++) {
        pipe.append(filled(limit, 2 + i), limit);
      }
    });
    assertThat(read.get(60, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(want);
    // Once the reader has what it waited for, the limit holds again: one more shard, then wait.
    awaitWaiting(writer);
    assertThat(pipe.length()).isEqualTo(want + limit);
    assertThat(writes).isNotDone();
    pipe.fail("done with it");
    assertThatThrownBy(writes::join).hasMessageContaining("big-reads.bsave: done with it");
  }

  @Test
  void aFailedReaderStopsAWaitingWriterWithItsCause() throws Exception {
    Path image = dir.resolve("doomed.bsave");
    ImagePipe pipe = ImagePipe.open(image, 1000);
    pipe.append(filled(1000, 1), 1000);
    AtomicReference<Thread> writer = new AtomicReference<>();
    CompletableFuture<Long> blocked = CompletableFuture.supplyAsync(() -> {
      writer.set(Thread.currentThread());
      try {
        return ImageWriter.appendShard(image, new byte[900], 900);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
    awaitWaiting(writer);
    pipe.fail("the upload failed: 503 Slow Down");
    assertThatThrownBy(blocked::join).hasCauseInstanceOf(BeamsaveException.class)
        .cause().hasMessage("doomed.bsave: the upload failed: 503 Slow Down");
    assertThatThrownBy(() -> pipe.read(new byte[10], 0, 10))
        .hasMessage("doomed.bsave: the upload failed: 503 Slow Down");
    assertThat(ImagePipe.of(image)).isNull();
  }

  @Test
  void aWriterThatCannotFinishFailsThePipe() throws Exception {
    Path image = dir.resolve("bad.bsave");
    ImagePipe pipe = ImagePipe.open(image, 1 << 20);
    long at = ImageWriter.appendShard(image, new byte[5000], 5000);
    List<ShardInfo> beyond = List.of(new ShardInfo(at + 100, 5000, 5000, new int[] {5000}));
    try (ImageWriter w = ImageWriter.open(image)) {
      assertThatThrownBy(() -> w.finish(catalog(beyond), Codecs.parse("none")))
          .hasMessageContaining("bad.bsave: holds")
          .hasMessageContaining("its shards end at");
    }
    assertThatThrownBy(() -> readAll(pipe, 1 << 20))
        .hasMessage("bad.bsave: the image could not be finished");
    assertThat(ImageWriter.partialPath(image)).doesNotExist();
  }
}

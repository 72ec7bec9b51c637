package io.beamsave.transforms.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.TestChain;
import io.beamsave.testing.TestPipelineExtension;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.FileImageSource;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.Sum;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ReadShards} over an incremental image and its base ({@link TestChain}): each task reads
 * the shard of whichever image holds its pieces, a restore writes every file's bytes whatever
 * image they are in, and an image replaced after the chain was opened fails as replaced.
 */
@ExtendWith(TestPipelineExtension.class)
class ReadChainTest {
  @TempDir static Path shared;
  static TestChain chain;
  static List<Entry> files;

  @TempDir Path dir;

  @BeforeAll
  static void saveChain() throws Exception {
    chain = TestChain.save(shared, "zstd:3", 4096, 4096);
    files = chain.newestCatalog().entries().stream().filter(Entry::isFile).toList();
  }

  static ImageChain opened() {
    return ImageChain.resolve(chain.newest().toString(), chain.newestCatalog(), files, null,
        Keys.NONE);
  }

  static long pieceBytes(ReadTask t) {
    return t.pieces().stream().mapToLong(p -> p.extent().length()).sum();
  }

  @Test
  void verifyReadsEachShardOfWhicheverImageHoldsItsPiecesAndEmitsTheBytesChecked(
      TestPipeline p) {
    List<ReadTask> tasks = ReadTask.forEntries(opened(), files);
    // a.txt, c.txt and g.txt are in the base; the rest in the newest image's own shards.
    assertThat(tasks).extracting(t -> Path.of(t.image()).getFileName() + ":" + t.shard())
        .containsExactly("newest.bsave:0", "newest.bsave:1", "newest.bsave:2", "base.bsave:0",
            "base.bsave:2", "base.bsave:4");

    PAssert.that(p.apply(Create.of(tasks).withCoder(ReadTask.CODER))
            .apply(ReadShards.verify(null)))
        .containsInAnyOrder(tasks.stream().map(ReadChainTest::pieceBytes).toList());
    p.run().waitUntilFinish();
  }

  @Test
  void aRestoreOfAnIncrementalImageWritesEveryFileWhicheverImageHoldsItsBytes(TestPipeline p)
      throws IOException {
    Path target = Files.createDirectories(dir.resolve("target"));
    RestoreTarget to;
    long[] ids = new long[files.size()];
    try (Dir d = Dir.open(target)) {
      FileStat s = d.stat();
      to = new RestoreTarget(target.toRealPath().toUri().toString(), s.device(), s.inode(), "c1");
      // What a restore creates before its workers run: the files no one piece holds.
      for (int i = 0; i < ids.length; i++) {
        if (!ReadTask.madeByWorker(files.get(i))) {
          try (OpenFile f = d.create(to.temporaryName(files.get(i).path()), 0600)) {
            f.truncate(files.get(i).size());
            ids[i] = f.stat().inode();
          }
        }
      }
    }
    assertThat(files).filteredOn(e -> !ReadTask.madeByWorker(e))
        .extracting(e -> e.path().toString()).containsExactly("f.txt");

    PAssert.thatSingleton(p.apply(Create.of(ReadTask.forEntries(opened(), files, ids))
                .withCoder(ReadTask.CODER))
            .apply(ReadShards.restoreTo(to, null))
            .apply(Sum.longsGlobally()))
        .isEqualTo(chain.newestCatalog().rawBytes());
    p.run().waitUntilFinish();

    for (Map.Entry<String, byte[]> f : chain.files().entrySet()) {
      Path restored = f.getKey().equals("f.txt")
          ? target.resolve(new String(to.temporaryName(PathBytes.of("f.txt")),
              StandardCharsets.ISO_8859_1))
          : target.resolve(f.getKey());
      assertThat(restored).as(f.getKey()).hasBinaryContent(f.getValue());
    }
  }

  @Test
  void anImageReplacedAfterTheChainWasOpenedFailsAsReplaced(TestPipeline p) throws IOException {
    Path newest = Files.copy(chain.newest(), dir.resolve("newest.bsave"));
    String tag;
    try (FileImageSource src = FileImageSource.open(newest)) {
      tag = src.tag();
    }
    ImageChain opened = ImageChain.resolve(
        new ImageChain.Member(newest.toString(), chain.newestCatalog(), tag), files, null,
        Keys.NONE);
    // Another file put in its place: the same bytes, but not the file the chain opened.
    Path other = Files.copy(newest, dir.resolve("other.bsave"));
    Files.move(other, newest, StandardCopyOption.REPLACE_EXISTING);

    p.apply(Create.of(ReadTask.forEntries(opened, files)).withCoder(ReadTask.CODER))
        .apply(ReadShards.verify(null).withTags(opened.tags()));

    assertThatThrownBy(() -> p.run().waitUntilFinish())
        .rootCause()
        .hasMessage(newest + ": it was replaced since this command began reading it (another"
            + " image is at its name now)");
  }

  @Test
  void aPieceWhoseBytesDoNotMatchItsDigestFailsNamingTheFile(TestPipeline p) {
    ReadTask task = ReadTask.forEntries(opened(), files).get(0);
    ShardReader.FileExtent first = task.pieces().get(0);
    byte[] wrong = first.extent().digest().clone();
    wrong[0] ^= 1;
    ShardReader.FileExtent forged = new ShardReader.FileExtent(first.path(), first.fileOffset(),
        first.extent().withDigest(wrong), 0);
    List<ShardReader.FileExtent> pieces = new java.util.ArrayList<>(task.pieces());
    pieces.set(0, forged);

    p.apply(Create.of(new ReadTask(task.image(), task.blockSize(), task.shard(), task.info(),
            pieces)).withCoder(ReadTask.CODER))
        .apply(ReadShards.verify(null));

    assertThatThrownBy(() -> p.run().waitUntilFinish())
        .rootCause()
        .hasMessageContaining(task.image() + ": shard " + task.shard() + ": file " + first.path()
            + ": digest mismatch");
  }
}

package io.beamsave.transforms.io;

import io.beamsave.transforms.sink.FileImageSink;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.ImageException;
import io.beamsave.transforms.image.ImageReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.transforms.Sum;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class ReadShardsTest {
  @Rule public final transient TestPipeline save = TestPipeline.create();
  @Rule public final transient TestPipeline read = TestPipeline.create();
  @Rule public final transient TemporaryFolder tmp = new TemporaryFolder();

  private Path image;
  private Catalog catalog;

  private void saveLibrary() throws IOException {
    Path root = tmp.newFolder("lib").toPath();
    byte[] data = new byte[250_000];
    new Random(9).nextBytes(data);
    Files.write(root.resolve("random.bin"), data);
    Files.writeString(root.resolve("text.txt"), "restore me ".repeat(20_000));
    SaveSpec spec =
        SaveSpec.of(tmp.getRoot() + "/staging")
            .withBlockSize(8192)
            .withShardSize(64 * 1024)
            .withLibrary("lib", root.toString(), new FileImageSink(Path.of(tmp.getRoot() + "/lib.bsave")));
    save.apply(ListLibrary.of(spec))
        .apply(PlanShards.of(spec))
        .apply(Reshuffle.viaRandomKey())
        .apply(CompressShards.of(spec))
        .apply(AssembleImage.of(spec));
    save.run().waitUntilFinish();
    image = tmp.getRoot().toPath().resolve("lib.bsave");
    catalog = ImageReader.readCatalog(image);
  }

  private List<ReadTask> allTasks() {
    return ReadTask.forEntries(catalog, catalog.entries().stream().filter(Entry::isFile).toList());
  }

  @Test
  public void restoresEveryPieceIntoTheFilesCreatedForThem() throws Exception {
    saveLibrary();
    Path target = tmp.newFolder("target").toPath();
    List<Entry> files = catalog.entries().stream().filter(Entry::isFile).toList();
    long[] ids = new long[files.size()];
    RestoreTarget to;
    try (Dir dir = Dir.open(target)) {
      FileStat s = dir.stat();
      to = new RestoreTarget(target.toRealPath().toUri().toString(), s.device(), s.inode(), "t1");
      for (int i = 0; i < ids.length; i++) {
        try (OpenFile f = dir.create(to.temporaryName(files.get(i).path()), 0600)) {
          f.truncate(files.get(i).size());
          ids[i] = f.stat().inode();
        }
      }
    }
    PAssert.thatSingleton(
            read.apply(Create.of(ReadTask.forEntries(catalog, files, ids)).withCoder(ReadTask.CODER))
                .apply(ReadShards.restoreTo(image.toString(), catalog.blockSize(), to, null))
                .apply(Sum.longsGlobally()))
        .isEqualTo(250_000L + 11 * 20_000);
    read.run().waitUntilFinish();
    Path lib = tmp.getRoot().toPath().resolve("lib");
    assertThat(temporary(target, to, "random.bin")).hasSameBinaryContentAs(lib.resolve("random.bin"));
    assertThat(temporary(target, to, "text.txt")).hasSameBinaryContentAs(lib.resolve("text.txt"));
  }

  static Path temporary(Path target, RestoreTarget to, String name) {
    return target.resolve(new String(to.temporaryName(PathBytes.of(name)),
        java.nio.charset.StandardCharsets.US_ASCII));
  }

  @Test
  public void aRestoreWritesIntoNoFileButTheOneCreatedForIt() throws Exception {
    saveLibrary();
    Path target = tmp.newFolder("target2").toPath();
    List<Entry> files = catalog.entries().stream().filter(Entry::isFile).toList();
    RestoreTarget to;
    try (Dir dir = Dir.open(target)) {
      FileStat s = dir.stat();
      to = new RestoreTarget(target.toRealPath().toUri().toString(), s.device(), s.inode(), "t2");
    }
    // Files under the temporary names, but not the ones the restore created (other inodes).
    for (Entry e : files) {
      Files.write(temporary(target, to, e.path().toString()), new byte[0]);
    }
    read.apply(Create.of(ReadTask.forEntries(catalog, files, new long[] {1, 2}))
            .withCoder(ReadTask.CODER))
        .apply(ReadShards.restoreTo(image.toString(), catalog.blockSize(), to, null));
    assertThatThrownBy(() -> read.run().waitUntilFinish())
        .rootCause()
        .hasMessageContaining("was replaced during the restore");
    assertThat(temporary(target, to, "random.bin")).isEmptyFile();
  }

  @Test
  public void verifyFailsNamingTheDamagedShardAndBlock() throws Exception {
    saveLibrary();
    long at = catalog.shards().get(3).blockOffset(2) + 40;
    byte[] bytes = Files.readAllBytes(image);
    bytes[(int) at] ^= 1;
    Files.write(image, bytes);
    read.apply(Create.of(allTasks()).withCoder(ReadTask.CODER))
        .apply(ReadShards.verify(image.toString(), catalog.blockSize(), null));
    assertThatThrownBy(() -> read.run().waitUntilFinish())
        .hasRootCauseInstanceOf(ImageException.class)
        .rootCause()
        .hasMessageContaining("shard 3 block 2");
  }
}

package io.beamsave.transforms.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.image.Catalog;
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
            .withLibrary("lib", root.toString(), tmp.getRoot() + "/lib.bsave");
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
  public void restoresEveryPieceIntoPreparedFiles() throws Exception {
    saveLibrary();
    Path target = tmp.newFolder("target").toPath();
    for (Entry e : catalog.entries()) {
      Files.write(target.resolve(e.path()), new byte[(int) e.size()]);
    }
    PAssert.thatSingleton(
            read.apply(Create.of(allTasks()).withCoder(ReadTask.CODER))
                .apply(ReadShards.restoreTo(image.toString(), catalog.blockSize(), target.toString(), null))
                .apply(Sum.longsGlobally()))
        .isEqualTo(250_000L + 11 * 20_000);
    read.run().waitUntilFinish();
    assertThat(target.resolve("random.bin")).hasSameBinaryContentAs(tmp.getRoot().toPath().resolve("lib/random.bin"));
    assertThat(target.resolve("text.txt")).hasSameTextualContentAs(tmp.getRoot().toPath().resolve("lib/text.txt"));
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

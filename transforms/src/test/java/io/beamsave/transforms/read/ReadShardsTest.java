package io.beamsave.transforms.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.save.AssembleImage;
import io.beamsave.transforms.save.CompressShards;
import io.beamsave.transforms.save.ListLibrary;
import io.beamsave.transforms.save.PlanShards;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.sink.FileImageSink;
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
  @Rule public final transient TestPipeline again = TestPipeline.create();
  @Rule public final transient TemporaryFolder tmp = new TemporaryFolder();

  private Path image;
  private Catalog catalog;

  private void saveLibrary() throws IOException {
    Path root = tmp.newFolder("lib").toPath();
    byte[] data = new byte[250_000];
    new Random(9).nextBytes(data);
    Files.write(root.resolve("random.bin"), data);
    Files.writeString(root.resolve("text.txt"), "restore me ".repeat(20_000));
    saveWithBlocksOf8k(root, 64 * 1024);
  }

  /** Saves {@code root} as library {@code root}'s name, with 8 KiB blocks; reads its catalog. */
  private void saveWithBlocksOf8k(Path root, long shardSize) throws IOException {
    String name = root.getFileName().toString();
    image = tmp.getRoot().toPath().resolve(name + ".bsave");
    SaveSpec spec =
        SaveSpec.of(tmp.getRoot() + "/staging-" + name)
            .withBlockSize(8192)
            .withShardSize(shardSize)
            .withLibrary(name, root.toString(), new FileImageSink(image));
    save.apply(ListLibrary.of(spec))
        .apply(PlanShards.of(spec))
        .apply(Reshuffle.viaRandomKey())
        .apply(CompressShards.of(spec))
        .apply(AssembleImage.of(spec));
    save.run().waitUntilFinish();
    catalog = ImageReader.readCatalog(image);
  }

  private List<ReadTask> allTasks() {
    return ReadTask.forEntries(ImageChain.of(image.toString(), catalog), catalog.entries().stream().filter(Entry::isFile).toList());
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
            read.apply(Create.of(ReadTask.forEntries(ImageChain.of(image.toString(), catalog), files, ids)).withCoder(ReadTask.CODER))
                .apply(ReadShards.restoreTo(to, null))
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
    read.apply(Create.of(ReadTask.forEntries(ImageChain.of(image.toString(), catalog), files, new long[] {1, 2}))
            .withCoder(ReadTask.CODER))
        .apply(ReadShards.restoreTo(to, null));
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
        .apply(ReadShards.verify(null));
    assertThatThrownBy(() -> read.run().waitUntilFinish())
        .hasRootCauseInstanceOf(ImageException.class)
        .rootCause()
        .hasMessageContaining("shard 3 block 2");
  }

  /** Small files, each held whole by one piece, with modes and times to the nanosecond. */
  private Path saveSmallFiles() throws IOException {
    Path root = tmp.newFolder("small").toPath();
    byte[] data = new byte[8192];
    new Random(3).nextBytes(data);
    byte[] trailingZeros = java.util.Arrays.copyOf(data, 8192 * 3);
    Files.write(root.resolve("ends-in-zeros.bin"), trailingZeros);
    Files.write(root.resolve("zeros.bin"), new byte[20_000]);
    for (int i = 0; i < 12; i++) {
      Files.writeString(root.resolve("f" + i + ".txt"), ("file " + i + " ").repeat(100 * i + 1));
      Files.setPosixFilePermissions(root.resolve("f" + i + ".txt"),
          java.nio.file.attribute.PosixFilePermissions.fromString(i % 2 == 0 ? "rw-r-----" : "rwx------"));
    }
    for (Path f : Files.list(root).toList()) {
      Files.setLastModifiedTime(f, java.nio.file.attribute.FileTime.from(
          java.time.Instant.ofEpochSecond(1_600_000_000L, 123_456_789L + f.getFileName().toString().length())));
    }
    saveWithBlocksOf8k(root, 1 << 20);
    return root;
  }

  private RestoreTarget target(Path target, String token) throws IOException {
    try (Dir dir = Dir.open(target)) {
      FileStat s = dir.stat();
      return new RestoreTarget(target.toRealPath().toUri().toString(), s.device(), s.inode(), token);
    }
  }

  @Test
  public void aFileOnePieceHoldsIsMadeByItsWorkerWhole_andATaskRunAgainMakesItAgain()
      throws Exception {
    Path lib = saveSmallFiles();
    List<Entry> files = catalog.entries().stream().filter(Entry::isFile).toList();
    assertThat(files).allMatch(ReadTask::madeByWorker);
    Path target = tmp.newFolder("made").toPath();
    RestoreTarget to = target(target, "t3");
    List<ReadTask> tasks = ReadTask.forEntries(ImageChain.of(image.toString(), catalog), files, new long[files.size()]);
    read.apply(Create.of(tasks).withCoder(ReadTask.CODER))
        .apply(Reshuffle.viaRandomKey())
        .apply(ReadShards.restoreTo(to, null));
    read.run().waitUntilFinish();
    assertRestored(lib, target, files);
    // What a run killed after giving its files their metadata leaves: read-only temporaries.
    for (Entry e : files) {
      Path left = temporary(target, to, e.path().toString());
      Files.writeString(left, "left by an earlier run");
      Files.setPosixFilePermissions(left,
          java.nio.file.attribute.PosixFilePermissions.fromString("r--------"));
    }
    again.apply(Create.of(tasks).withCoder(ReadTask.CODER))
        .apply(Reshuffle.viaRandomKey())
        .apply(ReadShards.restoreTo(to, null));
    again.run().waitUntilFinish();
    assertRestored(lib, target, files);
  }

  private static void assertRestored(Path lib, Path target, List<Entry> files) throws IOException {
    for (Entry e : files) {
      Path saved = lib.resolve(e.path().toString());
      Path restored = target.resolve(e.path().toString());
      assertThat(restored).hasSameBinaryContentAs(saved);
      assertThat(Files.getPosixFilePermissions(restored))
          .isEqualTo(Files.getPosixFilePermissions(saved));
      assertThat(Files.getLastModifiedTime(restored)).isEqualTo(Files.getLastModifiedTime(saved));
    }
    // Nothing left under a temporary name, and the zeros stayed holes.
    try (var left = Files.list(target)) {
      assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(".beamsave-"));
    }
    assertThat((long) Files.getAttribute(target.resolve("zeros.bin"), "unix:size")).isEqualTo(20_000);
  }

  @Test
  public void aWorkerRefusesATemporaryNameThatIsAHardLinkToAFileElsewhere() throws Exception {
    saveSmallFiles();
    List<Entry> files = catalog.entries().stream().filter(Entry::isFile).toList();
    Path target = tmp.newFolder("planted").toPath();
    RestoreTarget to = target(target, "t4");
    Path outside = tmp.newFile("outside").toPath();
    Files.writeString(outside, "not the restore's");
    Files.createLink(temporary(target, to, "f3.txt"), outside);
    read.apply(Create.of(ReadTask.forEntries(ImageChain.of(image.toString(), catalog), files, new long[files.size()]))
            .withCoder(ReadTask.CODER))
        .apply(ReadShards.restoreTo(to, null));
    assertThatThrownBy(() -> read.run().waitUntilFinish())
        .rootCause()
        .hasMessageContaining("f3.txt: its temporary file was made by someone else");
    assertThat(outside).hasContent("not the restore's");
  }
}

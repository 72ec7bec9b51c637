package io.beamsave.pipelines;

import static io.beamsave.pipelines.BadInputTest.assertOneLineError;
import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.transforms.image.ImageWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nothing half-done is left, nor taken for done: what a killed save left is removed by the next
 * save in its place; a save of an image already being saved refuses; a killed restore is
 * recognised, and completed by a rerun with --overwrite.
 */
class LeftoversTest {
  @TempDir Path tmp;
  Path library;
  Path image;

  @BeforeEach
  void library() throws IOException {
    library = Files.createDirectories(tmp.resolve("lib"));
    Trees.mixedData(library, 2 << 20);
    Trees.linksAndEmpties(library);
    image = tmp.resolve("out/lib.bsave");
    Files.createDirectories(image.getParent());
  }

  /** A staging directory as a save run leaves it, with its lock file naming {@code image}. */
  static FileChannel stagingOf(Path dir, Path image, long pid) throws IOException {
    Files.createDirectories(dir.resolve("lib"));
    Files.writeString(dir.resolve("lib/listing"), "the whole listing of the library");
    Properties p = new Properties();
    p.setProperty("pid", Long.toString(pid));
    p.setProperty("host", "here");
    p.setProperty("started", "2026-11-30T02:15:00Z");
    p.setProperty("image.0", image.toString());
    p.setProperty("destination.0", image.toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    p.store(out, null);
    FileChannel ch = FileChannel.open(dir.resolve("lock"), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE);
    ch.write(ByteBuffer.wrap(out.toByteArray()));
    return ch;
  }

  @Test
  void whatAKilledSaveLeftIsRemovedByTheNextSaveOfTheSameImage() throws IOException {
    Path stale = image.resolveSibling(".beamsave-staging-20261130T021500-4242");
    stagingOf(stale, image, 4242).close();
    Files.writeString(ImageWriter.partialPath(image), "shards appended by the killed run");
    Cli save = Cli.ok("save", "--library", library, "--image", image);
    assertThat(save.err()).contains("removed what a killed save (pid 4242, started"
        + " 2026-11-30T02:15:00Z) left: " + stale + ", " + ImageWriter.partialPath(image));
    try (Stream<Path> s = Files.list(image.getParent())) {
      assertThat(s.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("lib.bsave", "beamsave-ledger");
    }
    Cli.ok("verify", "--image", image, "--quiet");
  }

  @Test
  void aSaveOfAnImageAnotherSaveIsWritingRefusesNamingIt() throws IOException {
    Path live = image.resolveSibling(".beamsave-staging-20261130T021500-777");
    try (FileChannel ch = stagingOf(live, image, 777); FileLock held = ch.lock()) {
      assertOneLineError(Cli.run("save", "--library", library, "--image", image),
          "another save of " + image + " is running (pid 777 on here, started"
              + " 2026-11-30T02:15:00Z)");
      assertThat(live.resolve("lib/listing")).as("the running save's staging is untouched")
          .exists();
      // Another image in the same place is another matter.
      Cli.ok("save", "--library", library, "--image", image.resolveSibling("other.bsave"),
          "--quiet");
    }
  }

  @Test
  void aRestoreThatDidNotFinishIsRecognisedAndCompletedWithOverwrite() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path target = tmp.resolve("target");
    Cli.ok("restore", "--image", image, "--target", target, "--quiet");
    // What a restore killed half-way leaves: its marker, a file still under its temporary name.
    Path marker = target.resolve(".beamsave-restore-0badf00d");
    Files.writeString(marker, "beamsave restore of " + image + " into " + target
        + ", started 2026-11-30T02:15:00Z by pid 99\n");
    Path unfinished = target.resolve("data/.beamsave-0badf00d-0123456789abcdef");
    Files.write(unfinished, new byte[4096]);
    Files.delete(target.resolve("data/log.txt"));

    assertOneLineError(Cli.run("restore", "--image", image, "--target", target),
        "holds an unfinished restore (beamsave restore of " + image, "use --overwrite");
    Cli again = Cli.ok("restore", "--image", image, "--target", target, "--overwrite");
    assertThat(again.err()).contains("completing an unfinished restore in " + target);
    assertThat(marker).doesNotExist();
    assertThat(unfinished).doesNotExist();
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
  }

  @Test
  void aRestoreThatFailsLeavesNoFileThatLooksFinishedAndNoMarker() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    byte[] b = Files.readAllBytes(image);
    b[5000] ^= 0x20; // inside a shard of data/random.bin
    Files.write(image, b);
    Path target = tmp.resolve("failed");
    assertOneLineError(Cli.run("restore", "--image", image, "--target", target, "--quiet"),
        "checksum mismatch");
    try (Stream<Path> all = Files.walk(target)) {
      assertThat(all.filter(Files::isRegularFile).map(p -> p.getFileName().toString()))
          .as("no file was moved into place, no temporary or marker is left")
          .isEmpty();
    }
  }
}

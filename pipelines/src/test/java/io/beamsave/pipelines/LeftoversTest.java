package io.beamsave.pipelines;

import static io.beamsave.pipelines.BadInputTest.assertOneLineError;
import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.ImageWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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

  /**
   * What a save run leaves for {@code image}: its lock file, naming its pid and its staging
   * directory (which holds the run's id and the listing). The channel is the lock's, open.
   */
  static OpenFile runOf(Path image, Path staging, long pid) throws IOException {
    Files.createDirectories(staging.resolve("lib"));
    Files.writeString(staging.resolve("lib/listing"), "the whole listing of the library");
    Files.writeString(staging.resolve("run"), "r" + pid);
    Properties p = new Properties();
    p.setProperty("pid", Long.toString(pid));
    p.setProperty("host", "here");
    p.setProperty("started", "2026-11-30T02:15:00Z");
    p.setProperty("image", image.toString());
    p.setProperty("staging", staging.toString());
    p.setProperty("run", "r" + pid);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    p.store(out, null);
    try (Dir dir = Dir.open(image.getParent())) {
      OpenFile f = dir.openOrCreate((image.getFileName() + ".lock").getBytes(), 0644);
      f.write(0, out.toByteArray(), 0, out.size());
      return f;
    }
  }

  @Test
  void whatAKilledSaveLeftIsRemovedByTheNextSaveBesideIt() throws IOException {
    Path stale = image.resolveSibling(".beamsave-staging-20261130T021500-4242");
    runOf(image, stale, 4242).close();
    Files.writeString(ImageWriter.partialPath(image), "shards appended by the killed run");
    // A save of another image in the same place finds it (as a scheduled {utc} save would).
    Path today = image.resolveSibling("lib-today.bsave");
    Cli save = Cli.ok("save", "--library", library, "--image", today);
    assertThat(save.err()).contains("removed what a killed save (pid 4242, started"
        + " 2026-11-30T02:15:00Z) left: " + ImageWriter.partialPath(image) + ", " + stale);
    try (Stream<Path> s = Files.list(image.getParent())) {
      assertThat(s.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("lib-today.bsave", "beamsave-ledger");
    }
    Cli.ok("verify", "--image", today, "--quiet");
  }

  @Test
  void aSaveOfAnImageAnotherSaveIsWritingRefusesNamingItHoweverThePathIsSpelled()
      throws IOException {
    Path live = image.resolveSibling(".beamsave-staging-20261130T021500-777");
    try (OpenFile lock = runOf(image, live, 777)) {
      assertThat(lock.tryLock()).isTrue();
      String refusal = "another save of %s is running (pid 777 on here, started"
          + " 2026-11-30T02:15:00Z)";
      assertOneLineError(Cli.run("save", "--library", library, "--image", image),
          String.format(refusal, image));
      Path spelled = tmp.resolve("out/../out/./lib.bsave");
      assertOneLineError(Cli.run("save", "--library", library, "--image", spelled,
          "--staging", Files.createDirectories(tmp.resolve("elsewhere"))), "another save of",
          "is running (pid 777");
      Path link = Files.createSymbolicLink(tmp.resolve("out-link"), image.getParent());
      assertOneLineError(Cli.run("save", "--library", library, "--image",
          link.resolve("lib.bsave")), "is running (pid 777");
      assertThat(live.resolve("lib/listing")).as("the running save's staging is untouched")
          .exists();
      // Another image in the same place is another matter.
      Cli.ok("save", "--library", library, "--image", image.resolveSibling("other.bsave"),
          "--quiet");
      assertThat(live.resolve("lib/listing")).exists();
    }
  }

  @Test
  void aLockFileNeverRemovesWhatIsNotItsOwnRunsToRemove() throws IOException {
    // A lock file without a run beside it, naming a partial image and a staging directory
    // elsewhere (as a library holding its own image directory would carry into a restore).
    Path elsewhere = Files.createDirectories(tmp.resolve("live"));
    Path livePartial = Files.writeString(elsewhere.resolve("live.bsave.partial"), "live");
    Path liveStaging = Files.createDirectories(elsewhere.resolve(".beamsave-staging-1-1"));
    Files.writeString(liveStaging.resolve("run"), "the live run");
    Path fake = Files.createDirectories(tmp.resolve("fake"));
    Properties p = new Properties();
    p.setProperty("image", elsewhere.resolve("live.bsave").toString());
    p.setProperty("staging", liveStaging.toString());
    p.setProperty("run", "not the live run");
    try (var out = Files.newOutputStream(fake.resolve("x.bsave.lock"))) {
      p.store(out, null);
    }
    Cli.ok("save", "--library", library, "--image", fake.resolve("y.bsave"), "--quiet");
    assertThat(livePartial).hasContent("live");
    assertThat(liveStaging.resolve("run")).exists();
    assertThat(fake.resolve("x.bsave.lock")).as("the stale lock itself is gone").doesNotExist();
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
  void aMarkerLeftHalfWrittenByAKilledRestoreIsRemovedAndTheRestoreGoesOn() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path target = Files.createDirectories(tmp.resolve("target"));
    // Killed after creating its marker's temporary file: empty, or a beginning of the line.
    Path empty = Files.createFile(target.resolve(".beamsave-restore-0badf00d.new"));
    Path begun = Files.writeString(target.resolve(".beamsave-restore-0badf00e.new"), "beamsave re");
    Cli.ok("restore", "--image", image, "--target", target, "--quiet");
    assertThat(empty).doesNotExist();
    assertThat(begun).doesNotExist();
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();

    // A user's file that merely has such a name is not removed: the restore refuses instead.
    Path other = Files.createDirectories(tmp.resolve("other"));
    Path users = Files.writeString(other.resolve(".beamsave-restore-0badf00f.new"), "my notes");
    assertOneLineError(Cli.run("restore", "--image", image, "--target", other),
        "is not empty; use --overwrite");
    assertThat(users).hasContent("my notes");
  }

  @Test
  void aRestoreThatFailsLeavesNoUnfinishedFileAtItsNameAndItsMarkerSaysSo() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    byte[] b = Files.readAllBytes(image);
    b[5000] ^= 0x20; // inside a shard of data/random.bin
    Files.write(image, b);
    Path target = tmp.resolve("failed");
    assertOneLineError(Cli.run("restore", "--image", image, "--target", target, "--quiet"),
        "checksum mismatch");
    try (Stream<Path> all = Files.walk(target)) {
      for (Path p : all.filter(Files::isRegularFile).toList()) {
        String name = p.getFileName().toString();
        assertThat(name).as("no temporary is left").doesNotMatch("\\.beamsave-[0-9a-f]+-.*");
        if (!name.startsWith(".beamsave-restore-")) {
          // Files a worker finished before the failure are whole.
          assertThat(p).hasSameBinaryContentAs(library.resolve(target.relativize(p)));
        }
      }
    }
    assertThat(Cli.run("restore", "--image", image, "--target", target, "--quiet").err())
        .as("the marker says the tree is unfinished")
        .contains("holds an unfinished restore");
  }

  @Test
  void onlyBeamsavesOwnMarkerCounts() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path outside = Files.writeString(tmp.resolve("secret"), "beamsave restore of a secret\n");
    Path target = Files.createDirectories(tmp.resolve("target"));
    // A directory by a marker's name, and a hard link to a file elsewhere: neither is a marker.
    Files.createDirectories(target.resolve(".beamsave-restore-0000000a"));
    Files.createLink(target.resolve(".beamsave-restore-0000000b"), outside);
    Files.writeString(target.resolve(".beamsave-0000000b-0123456789abcdef"), "a user's file");
    Cli restore = Cli.ok("restore", "--image", image, "--target", target, "--overwrite");
    assertThat(restore.err()).doesNotContain("secret").doesNotContain("unfinished");
    assertThat(target.resolve(".beamsave-0000000b-0123456789abcdef")).hasContent("a user's file");
    assertThat(target.resolve(".beamsave-restore-0000000a")).isDirectory();
    assertThat(outside).hasContent("beamsave restore of a secret\n");
  }

  /** Makes {@code depth} directories {@code name} nested in {@code top}, through handles. */
  static void nest(Path top, byte[] name, int depth) throws IOException {
    io.beamsave.transforms.fs.Dir at = io.beamsave.transforms.fs.Dir.open(top);
    for (int i = 0; i < depth; i++) {
      at.mkdir(name, 0700);
      io.beamsave.transforms.fs.Dir next = at.openDir(name);
      at.close();
      at = next;
    }
    at.close();
  }

  /** Removes what {@link #nest} made: deeper than Java's file API can remove. */
  static void unnest(Path top, byte[] name) throws IOException {
    java.util.ArrayDeque<io.beamsave.transforms.fs.Dir> chain = new java.util.ArrayDeque<>();
    chain.push(io.beamsave.transforms.fs.Dir.open(top));
    while (true) {
      try {
        chain.push(chain.peek().openDir(name));
      } catch (java.nio.file.NoSuchFileException bottom) {
        break;
      }
    }
    while (chain.size() > 1) {
      chain.pop().close();
      chain.peek().deleteDirectory(name);
    }
    chain.pop().close();
  }

  @Test
  void aTreeNestedThousandsDeepInTheTargetDoesNotStopAnOverwrite() throws IOException {
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path target = Files.createDirectories(tmp.resolve("deep-target"));
    nest(target, new byte[] {'a'}, 1500);
    try {
      Files.writeString(target.resolve(".beamsave-restore-0badf00d"),
          "beamsave restore of an image into " + target + ", started then by pid 1\n");
      Cli restore = Cli.ok("restore", "--image", image, "--target", target, "--overwrite");
      assertThat(restore.err()).contains("completing an unfinished restore");
      assertThat(target.resolve(".beamsave-restore-0badf00d")).doesNotExist();
      assertThat(target.resolve("data/log.txt")).exists();
    } finally {
      unnest(target, new byte[] {'a'});
    }
  }

  @Test
  void aLibraryNestingDeeperThanAThousandDirectoriesFailsTheSaveNamingWhere() throws IOException {
    Path deep = Files.createDirectories(tmp.resolve("deep-lib"));
    nest(deep, new byte[] {'d'}, 1030);
    try {
      assertOneLineError(Cli.run("save", "--library", deep, "--image",
          tmp.resolve("deep.bsave")), "cannot save " + deep + "/d/d/",
          "nests deeper than 1024 directories");
    } finally {
      unnest(deep, new byte[] {'d'});
    }
  }
}

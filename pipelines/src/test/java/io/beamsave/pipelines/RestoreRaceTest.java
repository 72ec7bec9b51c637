package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restore target is hostile: while a restore runs, anyone who can write inside it may swap a
 * directory for a symlink to somewhere else. Nothing may then be written, chowned, chmodded or
 * touched outside the target.
 */
class RestoreRaceTest {
  @TempDir Path tmp;

  @Test
  void directoriesSwappedForSymlinksMidRestore_nothingOutsideIsTouchedAndEachRestoreEndsOrRefuses()
      throws Exception {
    Path library = Files.createDirectories(tmp.resolve("lib"));
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    byte[] data = new byte[64 << 10];
    new Random(5).nextBytes(data);
    for (String dir : new String[] {"d", "d/e"}) {
      Files.createDirectories(library.resolve(dir));
      Files.createDirectories(outside.resolve(dir.substring(1).replaceFirst("^/", "")));
      for (int i = 0; i < 150; i++) {
        String name = String.format("f%03d", i);
        Files.write(library.resolve(dir).resolve(name), data);
        // The victims: files outside with the names the restore writes, which a restore that
        // follows the swapped-in link would overwrite.
        Path victim = outside.resolve(dir.substring(1).replaceFirst("^/", "")).resolve(name);
        Files.writeString(victim, "untouched " + name);
        Files.setPosixFilePermissions(victim, java.nio.file.attribute.PosixFilePermissions
            .fromString("r--------"));
      }
    }
    TreeSnapshot before = TreeSnapshot.of(outside);
    Path image = tmp.resolve("lib.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--codec", "lz4", "--quiet");

    Map<String, String> saved = withoutTop(TreeSnapshot.of(library));
    int swaps = 0;
    for (int round = 0; round < 6; round++) {
      Path target = tmp.resolve("target-" + round);
      AtomicBoolean done = new AtomicBoolean();
      AtomicInteger swapped = new AtomicInteger();
      CompletableFuture<Void> swapper = CompletableFuture.runAsync(() -> {
        Path d = target.resolve("d");
        Path aside = target.resolve("d-aside");
        while (!done.get()) {
          try {
            if (Files.isDirectory(d, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
              Files.move(d, aside, StandardCopyOption.ATOMIC_MOVE);
              Files.createSymbolicLink(d, outside);
              swapped.incrementAndGet();
              Thread.onSpinWait();
              Files.delete(d);
              Files.move(aside, d, StandardCopyOption.ATOMIC_MOVE);
            }
          } catch (IOException raced) {
            // The restore moved on meanwhile; try again.
          }
        }
      });
      Cli restore = Cli.run("restore", "--image", image, "--target", target, "--quiet");
      done.set(true);
      swapper.join();
      swaps += swapped.get();
      String said = "round " + round + ", " + swapped.get() + " swaps; restore said: "
          + restore.err();
      assertThat(TreeSnapshot.of(outside).diff(before))
          .as("outside the target after %s", said)
          .isNull();
      if (restore.exit() == 0) {
        // It restored: the library is in the target, every byte of it, and nothing else (the
        // top directory's mtime aside: the swapper renames in it after the restore set it).
        assertThat(withoutTop(TreeSnapshot.of(target)))
            .as("the target of a restore that succeeded, %s", said)
            .isEqualTo(saved);
      } else {
        // It met the swap and refused, in one line naming the directory it would not take: a
        // link there (not followed), or no directory at all while it was moved aside.
        BadInputTest.assertOneLineError(restore, "beamsave: error: ", target + "/d");
        assertThat(restore.err().strip()).as(said).matches(
            ".*: " + java.util.regex.Pattern.quote(target + "/d") + ": (is a symbolic link"
                + " \\(not followed\\)|not a directory|no such file or directory)"
                + "|.* was replaced during the restore");
        assertThat(swapped.get()).as("swaps in a round whose restore failed: %s", said)
            .isPositive();
      }
    }
    assertThat(swaps).as("the race was run").isPositive();
  }

  @Test
  void deleteRemovesWhatTheImageLacksAndNothingOutsideWhileADirectoryIsSwappedForALink()
      throws Exception {
    Path library = Files.createDirectories(tmp.resolve("mirror-lib"));
    Files.createDirectories(library.resolve("kept"));
    Files.writeString(library.resolve("kept/a.txt"), "a");
    Files.writeString(library.resolve("b.txt"), "b");
    Path image = tmp.resolve("mirror.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path outside = Files.createDirectories(tmp.resolve("mirror-outside"));
    for (int i = 0; i < 200; i++) {
      Files.writeString(outside.resolve(String.format("victim%03d", i)), "untouched");
    }
    Files.createDirectories(outside.resolve("sub"));
    Files.writeString(outside.resolve("sub/deep"), "untouched");
    TreeSnapshot before = TreeSnapshot.of(outside);
    int swaps = 0;
    for (int round = 0; round < 6; round++) {
      Path target = Files.createDirectories(tmp.resolve("mirror-target-" + round));
      // What the image lacks: a directory of the victims' names, a link to outside, a stray
      // file in a directory the image has.
      Path stale = Files.createDirectories(target.resolve("stale"));
      for (int i = 0; i < 200; i++) {
        Files.writeString(stale.resolve(String.format("victim%03d", i)), "stale");
      }
      Files.createDirectories(stale.resolve("sub"));
      Files.writeString(stale.resolve("sub/deep"), "stale");
      Files.createSymbolicLink(target.resolve("link-out"), outside);
      Files.createDirectories(target.resolve("kept"));
      Files.writeString(target.resolve("kept/stray"), "stray");
      AtomicBoolean done = new AtomicBoolean();
      AtomicInteger swapped = new AtomicInteger();
      CompletableFuture<Void> swapper = CompletableFuture.runAsync(() -> {
        Path aside = target.resolve("stale-aside");
        while (!done.get()) {
          try {
            if (Files.isDirectory(stale, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
              Files.move(stale, aside, StandardCopyOption.ATOMIC_MOVE);
              Files.createSymbolicLink(stale, outside);
              swapped.incrementAndGet();
              Thread.onSpinWait();
              Files.delete(stale);
              Files.move(aside, stale, StandardCopyOption.ATOMIC_MOVE);
            }
          } catch (IOException raced) {
            // The removal moved on meanwhile; try again.
          }
        }
      });
      Cli restore = Cli.run("restore", image, "--target", target, "--delete", "--overwrite",
          "--quiet");
      done.set(true);
      swapper.join();
      swaps += swapped.get();
      String said = "round " + round + ", " + swapped.get() + " swaps; restore said: "
          + restore.err() + restore.out();
      assertThat(TreeSnapshot.of(outside).diff(before)).as("outside, %s", said).isNull();
      if (restore.exit() == 0) {
        assertThat(target.resolve("link-out")).as(said).doesNotExist();
        assertThat(target.resolve("kept/stray")).as(said).doesNotExist();
        assertThat(Files.readString(target.resolve("kept/a.txt"))).isEqualTo("a");
      } else {
        BadInputTest.assertOneLineError(restore, "beamsave: error: ", "stale");
      }
    }
    assertThat(swaps).as("the race was run").isPositive();
  }

  @Test
  void deleteMakesTheTargetTheImagesTree() throws Exception {
    Path library = Files.createDirectories(tmp.resolve("exact-lib"));
    Trees.linksAndEmpties(library);
    Trees.unicodeNames(library);
    Path image = tmp.resolve("exact.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path target = Files.createDirectories(tmp.resolve("exact-target"));
    Files.createDirectories(target.resolve("old/older"));
    Files.writeString(target.resolve("old/older/x"), "x");
    Files.writeString(target.resolve("zzz"), "z");
    Cli dry = Cli.ok("restore", image, "--target", target, "--delete", "--overwrite",
        "--dry-run");
    assertThat(dry.out()).contains("would remove 4 entries the image does not hold, e.g. old");
    assertThat(target.resolve("zzz")).exists();
    Cli done = Cli.ok("restore", image, "--target", target, "--delete", "--overwrite");
    assertThat(done.out()).contains("removed 4 entries the image does not hold");
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
    Cli withInclude = Cli.run("restore", image, "--target", target, "--delete", "--include",
        "x");
    assertThat(withInclude.exit()).isEqualTo(2);
  }

  /** A snapshot's entries but the top directory's. */
  private static Map<String, String> withoutTop(TreeSnapshot s) {
    Map<String, String> m = new TreeMap<>(s.entries());
    m.remove(".");
    return m;
  }

  @Test
  void aTargetThatIsASymlinkIsFollowedOnceWhenTheRestoreStarts() throws Exception {
    Path library = Files.createDirectories(tmp.resolve("lib2"));
    Files.writeString(library.resolve("a.txt"), "a");
    Path image = tmp.resolve("lib2.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path real = Files.createDirectories(tmp.resolve("real-target"));
    Path link = Files.createSymbolicLink(tmp.resolve("current"), real);
    Cli.ok("restore", "--image", image, "--target", link, "--quiet");
    assertThat(real.resolve("a.txt")).hasContent("a");
    assertThat(Files.isSymbolicLink(link)).as("the link itself stays a link").isTrue();
    assertThat(TreeSnapshot.of(real).diff(TreeSnapshot.of(library))).isNull();
  }
}

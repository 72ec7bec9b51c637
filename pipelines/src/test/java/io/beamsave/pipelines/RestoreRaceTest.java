package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Random;
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
  void directoriesSwappedForSymlinksMidRestoreGetNothingWrittenOutside() throws Exception {
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

    int swaps = 0;
    int failedRestores = 0;
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
      if (restore.exit() != 0) {
        failedRestores++;
        BadInputTest.assertOneLineError(restore, "beamsave: error: ");
      }
      assertThat(TreeSnapshot.of(outside).diff(before))
          .as("round %d: %d swaps; restore said: %s", round, swapped.get(), restore.err())
          .isNull();
    }
    assertThat(swaps).as("the race was run").isPositive();
    assertThat(failedRestores).as("restores that met a swap and stopped").isBetween(0, 6);
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

package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar as its own process, interrupted the ways an operator's processes are: Ctrl-C,
 * SIGTERM (systemd, Kubernetes), SIGKILL (the OOM killer, a lost node). Nothing half-written may
 * be left where a whole image or file is expected, and no leftover may outlive the next run.
 */
class InterruptsIT {
  @TempDir Path tmp;
  Path library;
  Path image;
  Path out;
  Path err;

  @BeforeEach
  void setUp() throws IOException {
    library = Files.createDirectories(tmp.resolve("lib"));
    Random r = new Random(13);
    byte[] data = new byte[16 << 20];
    for (int i = 0; i < 6; i++) {
      r.nextBytes(data);
      Files.write(library.resolve("random-" + i + ".bin"), data);
    }
    Trees.tinyFiles(library, 2000);
    image = tmp.resolve("images/lib.bsave");
    Files.createDirectories(image.getParent());
    out = tmp.resolve("out.txt");
    err = tmp.resolve("err.txt");
  }

  /** A save slow enough to be caught in the middle: xz on 96 MiB that does not compress. */
  Process startSlowSave() throws IOException {
    return LauncherIT.start(Map.of(), List.of(), out, err, "save", "--library", library,
        "--image", image, "--codec", "xz:6", "--shard-size", "8MiB", "--", "--targetParallelism=2");
  }

  static void await(String what, BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("gave up waiting for " + what);
      }
      Thread.sleep(5);
    }
  }

  Path partial() {
    return image.resolveSibling("lib.bsave.partial");
  }

  List<String> leftIn(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  static void signal(Process p, String signal) throws Exception {
    assertThat(new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor())
        .isZero();
  }

  void interruptedSaveCleansUp(String signal, int exit) throws Exception {
    Process save = startSlowSave();
    await("the first shard", () -> Files.exists(partial()));
    signal(save, signal);
    assertThat(save.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(save.exitValue()).as(Files.readString(err)).isEqualTo(exit);
    assertThat(Files.readString(err).strip()).endsWith("beamsave: interrupted");
    assertThat(Files.readString(err)).doesNotContain("error").doesNotContain("\tat ");
    assertThat(leftIn(image.getParent())).as("no partial image, no staging").isEmpty();
  }

  @Test
  void ctrlCRemovesThePartialImageAndTheStagingAndExits130() throws Exception {
    interruptedSaveCleansUp("INT", 130);
  }

  @Test
  void sigtermRemovesThePartialImageAndTheStagingAndExits143() throws Exception {
    interruptedSaveCleansUp("TERM", 143);
  }

  @Test
  void anInterruptedSaveRunsItsAfterHooksTellingThemSo() throws Exception {
    Path heard = tmp.resolve("heard");
    Process save = LauncherIT.start(Map.of(), List.of(), out, err, "save", "--library", library,
        "--image", image, "--codec", "xz:6", "--shard-size", "8MiB",
        "--after", "echo \"$BEAMSAVE_RESULT $BEAMSAVE_EXIT_CODE\" > '" + heard + "'",
        "--", "--targetParallelism=2");
    await("the first shard", () -> Files.exists(partial()));
    signal(save, "INT");
    assertThat(save.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(save.exitValue()).as(Files.readString(err)).isEqualTo(130);
    assertThat(Files.readString(heard)).isEqualTo("interrupted 130\n");
    assertThat(leftIn(image.getParent())).as("no partial image, no staging").isEmpty();
  }

  /**
   * SIGINT and SIGTERM at several points of a save (its first shard, half-way, its last shards
   * and the assembly), the machine's cores busy with other work: whatever the moment, the save
   * either ends interrupted leaving nothing, or finished first and left its whole image.
   */
  @Test
  void aSignalAtAnyPointOfASaveOnALoadedMachineLeavesNothingHalfMade() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean loading =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    List<Thread> load = new java.util.ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Thread t = new Thread(() -> {
        long x = 0;
        while (loading.get()) {
          x = x * 6364136223846793005L + 1442695040888963407L;
        }
        if (x == 42) {
          System.out.print("");
        }
      });
      t.setDaemon(true);
      t.start();
      load.add(t);
    }
    // Half the library, zlib: a run short enough to be caught late as often as early.
    for (int i = 3; i < 6; i++) {
      Files.delete(library.resolve("random-" + i + ".bin"));
    }
    long raw = 3L * (16 << 20);
    try {
      int n = 0;
      for (double share : new double[] {0, 0.5, 0.95, 0.95}) {
        String signal = n++ % 2 == 0 ? "INT" : "TERM";
        Process save = LauncherIT.start(Map.of(), List.of(), out, err, "save", "--library",
            library, "--image", image, "--codec", "zlib:6", "--shard-size", "8MiB", "--",
            "--targetParallelism=2");
        await("the save to reach " + share, () -> !save.isAlive() || Files.exists(image)
            || (Files.exists(partial()) && sizeOf(partial()) >= share * raw));
        signal(save, signal);
        assertThat(save.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String said = Files.readString(err);
        if (save.exitValue() == 0) {
          assertThat(leftIn(image.getParent())).as("finished first")
              .containsExactly("beamsave-ledger", "lib.bsave");
        } else {
          assertThat(save.exitValue()).as(said).isEqualTo(signal.equals("INT") ? 130 : 143);
          assertThat(said).doesNotContain("error").doesNotContain("\tat ")
              .doesNotContain("[ERROR]");
          assertThat(leftIn(image.getParent())).as("interrupted at " + share + " by " + signal
              + ": " + said).isEmpty();
        }
        Files.deleteIfExists(image);
        io.beamsave.transforms.fs.Removal.tree(image.resolveSibling("beamsave-ledger"));
      }
    } finally {
      loading.set(false);
      for (Thread t : load) {
        t.join();
      }
    }
  }

  static long sizeOf(Path p) {
    try {
      return Files.size(p);
    } catch (IOException gone) {
      return 0;
    }
  }

  @Test
  void whatAKilledSaveLeftIsRemovedByTheNextSave() throws Exception {
    Process save = startSlowSave();
    await("the first shard", () -> Files.exists(partial()));
    save.destroyForcibly().waitFor();
    List<String> left = leftIn(image.getParent());
    assertThat(left).contains("lib.bsave.partial").anyMatch(n -> n.startsWith(".beamsave-staging-"));
    String staging = left.stream().filter(n -> n.startsWith(".beamsave-staging-")).findFirst()
        .orElseThrow();

    LauncherIT.Run again = LauncherIT.beamsave(List.of(), "save", "--library", library, "--image",
        image, "--codec", "lz4");
    assertThat(again.exit()).as(again.err()).isZero();
    assertThat(again.err()).contains("removed what a killed save (pid " + save.pid())
        .contains(image.getParent().resolve(staging).toString());
    assertThat(leftIn(image.getParent())).containsExactly("beamsave-ledger", "lib.bsave");
    assertThat(LauncherIT.beamsave(List.of(), "verify", "--image", image).exit()).isZero();
    assertThat(left.stream().filter(n -> n.startsWith(".beamsave-lease-")))
        .as("the killed run's lease, which the next save beside it removed").isNotEmpty();
  }

  @Test
  void aSecondSaveOfAnImageBeingSavedRefusesNamingTheFirst() throws Exception {
    Process first = startSlowSave();
    try {
      await("the first shard", () -> Files.exists(partial()));
      LauncherIT.Run second = LauncherIT.beamsave(List.of(), "save", "--library", library,
          "--image", image, "--codec", "lz4");
      assertThat(second.exit()).isEqualTo(1);
      assertThat(second.err().strip())
          .startsWith("beamsave: error: another save of " + image + " is running (pid "
              + first.pid() + " on ")
          .doesNotContain("\n");
      assertThat(first.isAlive()).as("the first save goes on").isTrue();
    } finally {
      signal(first, "INT");
      first.waitFor(60, TimeUnit.SECONDS);
    }
  }

  @Test
  void aKilledRestoreLeavesItsMarkerAndNoFinishedLookingFileAndARerunCompletesIt()
      throws Exception {
    LauncherIT.Run save = LauncherIT.beamsave(List.of(), "save", "--library", library, "--image",
        image, "--codec", "lz4");
    assertThat(save.exit()).as(save.err()).isZero();
    Path target = tmp.resolve("target");
    Process restore = LauncherIT.start(Map.of(), List.of(), out, err, "restore", "--image", image,
        "--target", target);
    await("the restore's marker", () -> marker(target) != null);
    restore.destroyForcibly().waitFor();
    assertThat(marker(target)).as("the marker stays").isNotNull();
    try (Stream<Path> all = Files.walk(target)) {
      for (Path p : all.filter(Files::isRegularFile).toList()) {
        if (!p.getFileName().toString().startsWith(".beamsave-")) {
          // Files still being written keep their temporary names; those at their own are whole.
          assertThat(p).hasSameBinaryContentAs(library.resolve(target.relativize(p)));
        }
      }
    }
    LauncherIT.Run refused = LauncherIT.beamsave(List.of(), "restore", "--image", image,
        "--target", target);
    assertThat(refused.exit()).isEqualTo(1);
    assertThat(refused.err()).contains("holds an unfinished restore", "use --overwrite");
    LauncherIT.Run rerun = LauncherIT.beamsave(List.of(), "restore", "--image", image,
        "--target", target, "--overwrite");
    assertThat(rerun.exit()).as(rerun.err()).isZero();
    assertThat(rerun.err()).contains("completing an unfinished restore");
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
  }

  static Path marker(Path target) {
    try (Stream<Path> s = Files.list(target)) {
      // The marker in place, not the one still being written under a temporary name.
      return s.filter(p -> p.getFileName().toString().matches("\\.beamsave-restore-[0-9a-f]+"))
          .findFirst().orElse(null);
    } catch (IOException notYet) {
      return null;
    }
  }
}

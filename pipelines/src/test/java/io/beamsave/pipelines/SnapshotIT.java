package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.Notes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code save --snapshot btrfs} on a real btrfs file system (a loop device, as root): files a
 * writer keeps changing as a pair restore as a pair, and no snapshot outlives its save, whether
 * it succeeded, failed or was interrupted; a killed save's is found and removed by cleanup.
 */
class SnapshotIT {
  @TempDir static Path dir;
  static Path mnt;
  static Path library;

  @BeforeAll
  static void btrfs() throws Exception {
    assumeThat(Dir.effectiveUid()).as("run as root").isZero();
    assumeThat(run("sh", "-c", "command -v mkfs.btrfs").exit()).as("btrfs-progs").isZero();
    Path img = dir.resolve("btrfs.img");
    try (FileChannel f = FileChannel.open(img, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE)) {
      f.truncate(512L << 20);
      f.write(ByteBuffer.wrap(new byte[1]), (512L << 20) - 1);
    }
    ok("mkfs.btrfs", "-q", img.toString());
    mnt = Files.createDirectories(dir.resolve("mnt"));
    ok("mount", "-o", "loop", img.toString(), mnt.toString());
    ok("btrfs", "subvolume", "create", mnt.resolve("lib").toString());
    library = mnt.resolve("lib");
    Random r = new Random(7);
    byte[] data = new byte[4 << 20];
    for (int i = 0; i < 4; i++) {
      r.nextBytes(data);
      Files.write(library.resolve("random-" + i + ".bin"), data);
    }
    Files.createDirectories(library.resolve("pair"));
  }

  @AfterAll
  static void unmount() throws Exception {
    if (mnt != null) {
      run("umount", "-l", mnt.toString());
    }
  }

  /**
   * A writer rewrites pair/a and pair/b with one counter as fast as it can; a --before hook
   * pauses it at a pair's end and --after-snapshot lets it go on, so each snapshot is of a
   * moment the application calls consistent. Every image restores a pair that agrees, though
   * the writer goes on through every save.
   */
  @Test
  void aPairWrittenDuringEachSaveRestoresAsAPair() throws Exception {
    Path pair = library.resolve("pair");
    Path request = dir.resolve("pause-request");
    Path ack = dir.resolve("pause-ack");
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicLong counter = new AtomicLong();
    Thread writer = new Thread(() -> {
      try {
        while (running.get()) {
          while (Files.exists(request) && running.get()) {
            if (!Files.exists(ack)) {
              Files.createFile(ack);
            }
            Thread.sleep(1);
          }
          long n = counter.incrementAndGet();
          writePair(pair, n);
        }
      } catch (IOException | InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }, "pair-writer");
    writer.setDaemon(true);
    writer.start();
    String before = "rm -f '" + ack + "'; touch '" + request + "'; until [ -e '" + ack
        + "' ]; do sleep 0.01; done";
    String resume = "rm -f '" + request + "'";
    try {
      for (int run = 0; run < 8; run++) {
        Path image = dir.resolve("pairs/run-" + run + ".bsave");
        long atStart = counter.get();
        Cli save = Cli.ok("save", "--library", library, "--image", image, "--snapshot", "btrfs",
            "--codec", "lz4", "--before", before, "--after-snapshot", resume, "--quiet");
        assertThat(save.err()).contains("saving from a btrfs snapshot taken at");
        assertThat(counter.get()).as("the writer went on during save " + run)
            .isGreaterThan(atStart);
        Path target = dir.resolve("pairs/restored-" + run);
        Cli.ok("restore", image, "--target", target, "--quiet");
        String a = Files.readString(target.resolve("pair/a"));
        String b = Files.readString(target.resolve("pair/b"));
        assertThat(a).as("run " + run + ": pair/a whole").matches("(\\d{12}\n)+");
        assertThat(a).as("run " + run + ": pair/a and pair/b agree").isEqualTo(b);
        assertThat(ImageReader.readCatalog(image).notes())
            .containsEntry(Notes.SNAPSHOT, "btrfs").containsKey(Notes.SNAPSHOT_TAKEN);
        assertThat(snapshotsLeft()).as("after save " + run).isEmpty();
      }
    } finally {
      running.set(false);
      Files.deleteIfExists(request);
      writer.join(10_000);
    }
  }

  static void writePair(Path pair, long n) throws IOException {
    byte[] line = String.format("%012d\n", n).getBytes(StandardCharsets.US_ASCII);
    byte[] content = new byte[line.length * 20_000];
    for (int i = 0; i < content.length; i += line.length) {
      System.arraycopy(line, 0, content, i, line.length);
    }
    for (String name : List.of("a", "b")) {
      try (FileChannel f = FileChannel.open(pair.resolve(name), StandardOpenOption.CREATE,
          StandardOpenOption.WRITE)) {
        f.write(ByteBuffer.wrap(content), 0);
      }
    }
  }

  /** An image that cannot be written (a full file system): the snapshot goes all the same. */
  @Test
  void aSaveThatFailsLeavesNoSnapshot() throws Exception {
    Path small = Files.createDirectories(dir.resolve("full"));
    ok("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small.toString());
    try {
      Cli failed = Cli.run("save", "--library", library, "--image", small.resolve("x.bsave"),
          "--snapshot", "btrfs", "--codec", "none");
      assertThat(failed.exit()).as(failed.err()).isEqualTo(1);
      assertThat(failed.err()).contains("No space left on device");
      assertThat(snapshotsLeft()).isEmpty();
    } finally {
      run("umount", "-l", small.toString());
    }
  }

  @Test
  void snapshotsThatCannotBeTakenAreRefusedInOneLine() throws Exception {
    Path plain = Files.createDirectories(dir.resolve("plain"));
    Cli auto = Cli.run("save", "--library", plain, "--image", dir.resolve("p.bsave"),
        "--snapshot", "auto");
    assertThat(auto.exit()).isEqualTo(1);
    assertThat(auto.err().strip()).doesNotContain("\n").contains("--snapshot auto: " + plain)
        .contains("which has no snapshot beamsave can take");
    Path nested = library.resolve("nested");
    ok("btrfs", "subvolume", "create", nested.toString());
    try {
      Cli refused = Cli.run("save", "--library", library, "--image", dir.resolve("n.bsave"),
          "--snapshot", "btrfs");
      assertThat(refused.exit()).isEqualTo(1);
      assertThat(refused.err()).contains(nested + " is a btrfs subvolume of its own");
      Cli leftOut = Cli.ok("save", "--library", library, "--image", dir.resolve("n.bsave"),
          "--snapshot", "btrfs", "-x", "--codec", "none", "--quiet");
      assertThat(leftOut.err()).contains("saving from a btrfs snapshot");
      assertThat(Cli.ok("list", dir.resolve("n.bsave")).out()).contains("  nested\n")
          .doesNotContain("nested/");
    } finally {
      ok("btrfs", "subvolume", "delete", nested.toString());
    }
    Cli usage = Cli.run("save", "--library", library, "--image", dir.resolve("u.bsave"),
        "--after-snapshot", "true");
    assertThat(usage.exit()).isEqualTo(2);
    assertThat(snapshotsLeft()).isEmpty();
  }

  /** SIGINT while the save reads the snapshot: it is removed before the process exits. */
  @Test
  void anInterruptedSaveRemovesItsSnapshot() throws Exception {
    Path image = dir.resolve("int/lib.bsave");
    Files.createDirectories(image.getParent());
    Process save = slowSave(image);
    InterruptsIT.await("the snapshot and the first shard",
        () -> !save.isAlive() || Files.exists(partial(image)));
    InterruptsIT.signal(save, "INT");
    assertThat(save.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(save.exitValue()).as(Files.readString(dir.resolve("err.txt"))).isEqualTo(130);
    assertThat(snapshotsLeft()).isEmpty();
  }

  /** SIGKILL leaves the snapshot; cleanup names it, and removes it with --yes. */
  @Test
  void aKilledSavesSnapshotIsRemovedByCleanup() throws Exception {
    Path image = dir.resolve("kill/lib.bsave");
    Files.createDirectories(image.getParent());
    Process save = slowSave(image);
    InterruptsIT.await("the snapshot and the first shard",
        () -> !save.isAlive() || Files.exists(partial(image)));
    save.destroyForcibly();
    assertThat(save.waitFor(60, TimeUnit.SECONDS)).isTrue();
    List<String> left = snapshotsLeft();
    assertThat(left).hasSize(1);
    Cli dry = Cli.ok("cleanup", "--at", library);
    assertThat(dry.out()).contains("snapshot").contains(".beamsave-snapshots/");
    assertThat(snapshotsLeft()).as("a dry run removes nothing").hasSize(1);
    Cli.ok("cleanup", "--at", library, "--yes");
    assertThat(snapshotsLeft()).isEmpty();
    Cli.ok("cleanup", "--at", image.getParent(), "--yes");
  }

  Process slowSave(Path image) throws IOException {
    return LauncherIT.start(Map.of(), List.of(), dir.resolve("out.txt"), dir.resolve("err.txt"),
        "save", "--library", library, "--image", image, "--snapshot", "btrfs", "--codec",
        "xz:9", "--shard-size", "4MiB", "--", "--targetParallelism=1");
  }

  static Path partial(Path image) {
    return image.resolveSibling(image.getFileName() + ".partial");
  }

  /** The snapshots on the file system: subvolumes in a .beamsave-snapshots directory. */
  static List<String> snapshotsLeft() throws Exception {
    List<String> out = new ArrayList<>();
    for (String line : ok("btrfs", "subvolume", "list", mnt.toString()).lines().toList()) {
      if (line.contains(".beamsave-snapshots/")) {
        out.add(line);
      }
    }
    return out;
  }

  record Ran(int exit, String out) {}

  static Ran run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return new Ran(p.waitFor(), out);
  }

  static String ok(String... cmd) throws Exception {
    Ran r = run(cmd);
    assertThat(r.exit()).as(String.join(" ", cmd) + ": " + r.out()).isZero();
    return r.out();
  }
}

package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Notes;
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
            "--codec", "lz4", "--before", before, "--after-snapshot", resume, "--tag", "pairs",
            "--quiet");
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
            .containsEntry(Notes.SNAPSHOT, "btrfs").containsKey(Notes.SNAPSHOT_TAKEN)
            .containsEntry(Notes.TAGS, "pairs");
        assertThat(snapshotsLeft()).as("after save " + run).isEmpty();
        assertThat(mnt.resolve(".beamsave-snapshots")).as("its directory, once empty")
            .doesNotExist();
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
    ok("chown", "1234:5678", nested.toString());
    ok("chmod", "0750", nested.toString());
    ok("touch", "-m", "-d", "2021-02-03 04:05:06.123456789Z", nested.toString());
    try {
      Cli refused = Cli.run("save", "--library", library, "--image", dir.resolve("n.bsave"),
          "--snapshot", "btrfs");
      assertThat(refused.exit()).isEqualTo(1);
      assertThat(refused.err()).contains(nested + " is a btrfs subvolume of its own");
      java.io.PrintStream err = System.err;
      java.io.ByteArrayOutputStream walk = new java.io.ByteArrayOutputStream();
      Cli leftOut;
      try {
        System.setErr(new java.io.PrintStream(walk, true, StandardCharsets.UTF_8));
        leftOut = Cli.ok("save", "--library", library, "--image", dir.resolve("n.bsave"),
            "--snapshot", "btrfs", "-x", "--codec", "none", "--quiet");
      } finally {
        System.setErr(err);
      }
      assertThat(leftOut.err()).contains("saving from a btrfs snapshot");
      assertThat(walk.toString(StandardCharsets.UTF_8))
          .as("messages name the library, not the snapshot")
          .contains("not descending into " + nested + ":").doesNotContain(".beamsave-snapshots/");
      assertThat(Cli.ok("list", dir.resolve("n.bsave")).out()).contains("  nested\n")
          .doesNotContain("nested/");
      // The empty directory the snapshot holds in its place is the real one's: mode, owner,
      // time.
      Path back = dir.resolve("n-restored");
      Cli.ok("restore", dir.resolve("n.bsave"), "--target", back, "--quiet");
      Path kept = back.resolve("nested");
      assertThat(Files.getAttribute(kept, "unix:mode", java.nio.file.LinkOption.NOFOLLOW_LINKS))
          .isEqualTo(040750);
      assertThat(Files.getAttribute(kept, "unix:uid")).isEqualTo(1234);
      assertThat(Files.getAttribute(kept, "unix:gid")).isEqualTo(5678);
      assertThat(Files.getLastModifiedTime(kept).toInstant())
          .isEqualTo(java.time.Instant.parse("2021-02-03T04:05:06.123456789Z"));
    } finally {
      ok("btrfs", "subvolume", "delete", nested.toString());
    }
    Cli usage = Cli.run("save", "--library", library, "--image", dir.resolve("u.bsave"),
        "--after-snapshot", "true");
    assertThat(usage.exit()).isEqualTo(2);
    Cli two = Cli.run("save", "--library", library, "--library", mnt, "--image",
        dir.resolve("{library}.bsave"), "--postgres", "host=127.0.0.1");
    assertThat(two.exit()).isEqualTo(2);
    assertThat(two.err()).contains("--postgres saves one library");
    assertThat(snapshotsLeft()).isEmpty();
  }

  /**
   * A directory of the library's that happens to be named .beamsave-snapshots is the library's:
   * saved, restored, and never taken for a snapshot by cleanup.
   */
  @Test
  void aLibrarysOwnSnapshotsNamedDirectoryIsSavedAndLeftAloneByCleanup() throws Exception {
    Path inner = Files.createDirectories(library.resolve("sub/.beamsave-snapshots/keep"));
    Files.writeString(inner.resolve("data"), "precious");
    Path own = library.resolve("sub");
    try {
      Path image = dir.resolve("own/sub.bsave");
      Cli.ok("save", "--library", own, "--image", image, "--snapshot", "btrfs", "--quiet");
      Path target = dir.resolve("own/restored");
      Cli.ok("restore", image, "--target", target, "--quiet");
      assertThat(target.resolve(".beamsave-snapshots/keep/data")).hasContent("precious");
      Cli cleanup = Cli.ok("cleanup", "--at", own, "--yes");
      assertThat(cleanup.out()).doesNotContain("snapshot");
      assertThat(inner.resolve("data")).hasContent("precious");
      assertThat(inner.getParent().resolve("keep.lock")).doesNotExist();
    } finally {
      run("rm", "-rf", own.toString());
    }
  }

  /** SIGINT while the save reads the snapshot: it is removed before the process exits. */
  @Test
  void anInterruptedSaveRemovesItsSnapshot() throws Exception {
    Path image = dir.resolve("int/lib.bsave");
    Files.createDirectories(image.getParent());
    Process save = slowSave(image);
    InterruptsIT.await("the snapshot and the first shard",
        () -> !save.isAlive() || Files.exists(partial(image)));
    // A second save of the image is refused before it takes a snapshot of its own.
    Cli second = Cli.run("save", "--library", library, "--image", image, "--snapshot", "btrfs");
    assertThat(second.exit()).isEqualTo(1);
    assertThat(second.err()).contains("another save of").contains("is running");
    assertThat(snapshotsLeft()).as("the first save's alone").hasSize(1);
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

  /**
   * PostgreSQL 15 under a steady pgbench load, checkpoints forced every 100 ms besides, saved
   * three times with --snapshot btrfs --postgres: each image restores into an empty directory
   * on which PostgreSQL starts, recovers, and holds tables that agree (pgbench's branches,
   * tellers and accounts sum to one balance), that pg_amcheck finds sound, and at least every
   * row committed before the save began. (A live copy under the same load fails those checks:
   * docs/operators-guide.md, "Saving data in use".)
   */
  @Test
  void aRunningPostgresSavedFromASnapshotRestoresAndRecoversConsistent() throws Exception {
    Path bin = postgresBin();
    assumeThat(bin).as("PostgreSQL's server binaries").isNotNull();
    assumeThat(run("id", "postgres").exit()).as("a postgres user").isZero();
    Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions
        .fromString("rwxr-xr-x"));
    Path pg = mnt.resolve("pg");
    ok("btrfs", "subvolume", "create", pg.toString());
    ok("chown", "postgres:postgres", pg.toString());
    Path data = pg.resolve("data");
    Path sockets = Files.createDirectories(dir.resolve("pg-sockets"));
    ok("chown", "postgres", sockets.toString());
    String conninfo = startCluster(bin, data, sockets);
    List<Process> load = new ArrayList<>();
    try {
      load.addAll(load(bin, conninfo, dir));
      for (int round = 0; round < 3; round++) {
        long committed = Long.parseLong(sql(conninfo, "SELECT count(*) FROM pgbench_history"));
        Path image = dir.resolve("pg/run-" + round + ".bsave");
        Cli save = Cli.ok("save", "--library", data, "--image", image, "--snapshot", "btrfs",
            "--postgres", conninfo, "--codec", "lz4", "--quiet");
        assertThat(save.err()).contains("no backup mode is needed");
        Path target = dir.resolve("pg/restored-" + round);
        Cli restore = Cli.ok("restore", image, "--target", target, "--quiet");
        assertThat(restore.out()).contains("next: a PostgreSQL 15").contains("pg_ctl -D "
            + target + " start");
        assertThat(target.resolve("postmaster.pid")).doesNotExist();
        int restoredPort = freePort();
        String restored = "host=127.0.0.1 port=" + restoredPort + " user=postgres dbname=postgres";
        asPostgres(bin.resolve("pg_ctl"), "-D", target, "-o", "-p " + restoredPort + " -k "
            + sockets + " -c listen_addresses=127.0.0.1", "-l",
            sockets.resolve("restored-" + round + ".log"), "-w", "-t", "120", "start");
        try {
          assertThat(Files.readString(sockets.resolve("restored-" + round + ".log")))
              .contains("redo done at").contains("ready to accept connections");
          String sums = sql(restored, "SELECT (SELECT sum(abalance) FROM pgbench_accounts),"
              + " (SELECT sum(bbalance) FROM pgbench_branches),"
              + " (SELECT sum(tbalance) FROM pgbench_tellers)");
          String[] s3 = sums.split("\\|");
          assertThat(s3).as("round " + round + ": balances agree").containsOnly(s3[0]);
          assertThat(Long.parseLong(sql(restored, "SELECT count(*) FROM pgbench_history")))
              .as("round " + round + ": rows committed before the save")
              .isGreaterThanOrEqualTo(committed);
          Ran check = run(bin.resolve("pg_amcheck").toString(), "-h", "127.0.0.1", "-p",
              Integer.toString(restoredPort), "-U", "postgres", "-d", "postgres",
              "--install-missing", "--heapallindexed");
          assertThat(check.exit()).as("pg_amcheck: " + check.out()).isZero();
        } finally {
          asPostgres(bin.resolve("pg_ctl"), "-D", target, "-m", "immediate", "-w", "stop");
        }
        assertThat(snapshotsLeft()).isEmpty();
      }
    } finally {
      for (Process p : load) {
        p.destroy();
        p.waitFor(10, TimeUnit.SECONDS);
      }
      run("runuser", "-u", "postgres", "--", bin.resolve("pg_ctl").toString(), "-D",
          data.toString(), "-m", "immediate", "-w", "stop");
      run("btrfs", "subvolume", "delete", pg.toString());
    }
  }

  static Path postgresBin() throws IOException {
    Path versions = Path.of("/usr/lib/postgresql");
    if (!Files.isDirectory(versions)) {
      return null;
    }
    try (var s = Files.list(versions)) {
      return s.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")))
          .max(java.util.Comparator.comparing(Path::toString)).orElse(null);
    }
  }

  /**
   * A new cluster in {@code data} (its parent owned by postgres), started on a free port of
   * loopback with its sockets and log in {@code sockets}, holding pgbench's tables at scale 4;
   * returns its conninfo.
   */
  static String startCluster(Path bin, Path data, Path sockets) throws Exception {
    asPostgres(bin.resolve("initdb"), "-D", data, "-A", "trust", "-U", "postgres");
    int port = freePort();
    asPostgres(bin.resolve("pg_ctl"), "-D", data, "-o", "-p " + port + " -k " + sockets
        + " -c listen_addresses=127.0.0.1", "-l", sockets.resolve("server.log"), "-w", "start");
    String conninfo = "host=127.0.0.1 port=" + port + " user=postgres dbname=postgres";
    ok(bin.resolve("pgbench").toString(), "-q", "-i", "-s", "4", conninfo);
    return conninfo;
  }

  /**
   * A steady load on the cluster at {@code conninfo}: pgbench with two clients, and a forced
   * checkpoint every 100 ms; their output goes to {@code logs}.
   */
  static List<Process> load(Path bin, String conninfo, Path logs) throws IOException {
    return List.of(
        new ProcessBuilder(bin.resolve("pgbench").toString(), "-c", "2", "-T", "900",
            conninfo).redirectErrorStream(true)
            .redirectOutput(logs.resolve("pgbench.log").toFile()).start(),
        new ProcessBuilder("sh", "-c", "while :; do psql -X -q -d '" + conninfo
            + "' -c checkpoint; sleep 0.1; done").redirectErrorStream(true)
            .redirectOutput(logs.resolve("checkpoints.log").toFile()).start());
  }

  static void asPostgres(Object... cmd) throws Exception {
    List<String> all = new ArrayList<>(List.of("runuser", "-u", "postgres", "--"));
    for (Object c : cmd) {
      all.add(c.toString());
    }
    ok(all.toArray(new String[0]));
  }

  static String sql(String conninfo, String query) throws Exception {
    return ok("psql", "-X", "-A", "-t", "-d", conninfo, "-c", query).strip();
  }

  static int freePort() throws IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      return s.getLocalPort();
    }
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

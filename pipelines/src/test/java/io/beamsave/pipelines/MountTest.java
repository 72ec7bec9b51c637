package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.beamsave.pipelines.cli.BeamsaveCommand;
import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.testing.FaultProxy;
import io.beamsave.testing.S3TestServer;
import io.beamsave.transforms.fs.Dir;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code beamsave mount} as an operator uses it: the mount served by the command line on a
 * thread of this JVM, read by this JVM and by the usual tools (cat, find, stat, diff), then
 * unmounted with fusermount. Needs root, /dev/fuse, libfuse 2 and fusermount (CI installs
 * them).
 */
class MountTest {
  @TempDir static Path dir;
  static S3TestServer server;
  static Path lib;
  static Path image;

  @BeforeAll
  static void start() throws Exception {
    assumeThat(Dir.effectiveUid()).as("run as root").isZero();
    assumeThat(Files.exists(Path.of("/dev/fuse"))).as("/dev/fuse").isTrue();
    assumeThat(run("sh", "-c", "command -v fusermount").exit).as("fusermount installed").isZero();
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), "backups");
    lib = Files.createDirectories(dir.resolve("lib"));
    Trees.unicodeNames(lib);
    Trees.mixedData(lib, 6L << 20);
    Trees.linksAndEmpties(lib);
    Files.writeString(lib.resolve("small.txt"), "just this one\n");
    // A name that is not UTF-8, and an attribute on a file.
    assertThat(run("sh", "-c", "cd '" + lib + "' && printf 'raw' > \"$(printf 'n\\377me')\""
        + " && setfattr -n user.colour -v blue small.txt").exit).isZero();
    image = dir.resolve("lib.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--shard-size", "2MiB", "--quiet");
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  record Ran(int exit, String out) {}

  static Ran run(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
    return new Ran(p.exitValue(), out);
  }

  /** A mount served by {@code beamsave mount ARGS MOUNTPOINT} on a thread, until closed. */
  static final class Mounted implements AutoCloseable {
    final Path at;
    final StringWriter err = new StringWriter();
    private final Thread serving;
    private volatile int exit = -1;

    Mounted(Object... args) throws Exception {
      this(Files.createDirectories(dir.resolve("mnt-" + System.nanoTime())), args);
    }

    /** Mounted on {@code mountPoint}, an empty directory. */
    Mounted(Path mountPoint, Object[] args) throws Exception {
      at = mountPoint;
      List<String> argv = new ArrayList<>(List.of("mount"));
      for (Object a : args) {
        argv.add(String.valueOf(a));
      }
      argv.add(at.toString());
      serving = new Thread(() -> exit = BeamsaveCommand.execute(argv.toArray(String[]::new),
          new PrintWriter(new StringWriter(), true), new PrintWriter(err, true)), "mount");
      serving.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!mounted(at) || !err.toString().contains(" on " + at + ";")) {
        if (!serving.isAlive()) {
          throw new AssertionError("mount exited " + exit + ": " + err);
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError("not mounted after 60 s: " + err);
        }
        Thread.sleep(50);
      }
    }

    static boolean mounted(Path at) throws IOException {
      return Files.readAllLines(Path.of("/proc/self/mounts")).stream()
          .anyMatch(l -> l.split(" ")[1].equals(at.toString()));
    }

    @Override
    public void close() throws Exception {
      run("fusermount", "-u", at.toString());
      serving.join(TimeUnit.SECONDS.toMillis(30));
      assertThat(serving.isAlive()).as("mount still serving after fusermount -u").isFalse();
      assertThat(exit).as(err.toString()).isZero();
      assertThat(mounted(at)).isFalse();
    }
  }

  @Test
  void aLocalImageReadsAsTheLibrary() throws Exception {
    try (Mounted m = new Mounted(image)) {
      assertThat(m.err.toString()).contains("mounted " + image + " on " + m.at);
      // Every name, type, mode, owner, mtime to the nanosecond, content, link, hard link
      // group and attribute, as read through the kernel.
      assertThat(TreeSnapshot.of(m.at).diff(TreeSnapshot.of(lib))).isNull();
      assertThat(run("cat", m.at.resolve("small.txt").toString()).out())
          .isEqualTo("just this one\n");
      assertThat(run("getfattr", "--absolute-names", "--only-values", "-n", "user.colour",
          m.at.resolve("small.txt").toString()).out()).isEqualTo("blue");
      assertThat(run("sh", "-c", "cd '" + m.at + "' && find . | sort").out())
          .isEqualTo(run("sh", "-c", "cd '" + lib + "' && find . | sort").out());
      assertThat(run("stat", "-c", "%s %Y %a", m.at.resolve("small.txt").toString()).out())
          .isEqualTo(run("stat", "-c", "%s %Y %a", lib.resolve("small.txt").toString()).out());
      // Read-only: nothing can be written, made or removed.
      assertThat(run("sh", "-c", "echo x > '" + m.at.resolve("small.txt") + "'").exit())
          .isNotZero();
      assertThat(run("touch", m.at.resolve("new").toString()).exit()).isNotZero();
      assertThat(run("rm", m.at.resolve("small.txt").toString()).exit()).isNotZero();
    }
  }

  @Test
  void aFileOfAnImageInObjectStorageFetchesOnlyItsBlocks() throws Exception {
    Path large = Files.createDirectories(dir.resolve("large"));
    Random random = new Random(5);
    for (int i = 0; i < 24; i++) {
      byte[] b = new byte[1 << 20];
      random.nextBytes(b);
      Files.write(large.resolve("part-" + i + ".bin"), b);
    }
    Files.writeString(large.resolve("note.txt"), "the one file\n");
    Path local = dir.resolve("large.bsave");
    Cli.ok("save", "--library", large, "--image", local, "--codec", "none", "--shard-size",
        "4MiB", "--quiet");
    String port = "http://127.0.0.1:" + server.port();
    Cli.ok("upload", "--from", local, "--to", "s3://backups/large.bsave", "--s3-endpoint", port,
        "--quiet");
    try (FaultProxy counting = new FaultProxy(server.port(), 0, 1);
        Mounted m = new Mounted("s3://backups/large.bsave", "--s3-endpoint",
            "http://127.0.0.1:" + counting.port())) {
      int requests = counting.requests();
      long bytes = counting.answerBytes();
      assertThat(Files.readString(m.at.resolve("note.txt"))).isEqualTo("the one file\n");
      assertThat(counting.requests() - requests).as("requests to read one file").isEqualTo(1);
      assertThat(counting.answerBytes() - bytes).as("bytes fetched to read one small file")
          .isLessThan(Files.size(local) / 20);
      assertThat(Files.mismatch(m.at.resolve("part-7.bin"), large.resolve("part-7.bin")))
          .isEqualTo(-1);
    }
  }

  @Test
  void theMiddleOfAChainShowsItsWholeTree() throws Exception {
    Path chain = Files.createDirectories(dir.resolve("chain"));
    Files.writeString(chain.resolve("kept.txt"), "from the full save\n");
    Files.writeString(chain.resolve("changed.txt"), "first\n");
    Cli.ok("save", "--library", chain, "--image", dir.resolve("c0.bsave"), "--quiet");
    Files.writeString(chain.resolve("changed.txt"), "second, longer\n");
    Files.writeString(chain.resolve("added.txt"), "added in the middle\n");
    Cli.ok("save", "--library", chain, "--image", dir.resolve("c1.bsave"), "--base",
        dir.resolve("c0.bsave"), "--quiet");
    TreeSnapshot middle = TreeSnapshot.of(chain);
    Files.delete(chain.resolve("added.txt"));
    Files.writeString(chain.resolve("changed.txt"), "third\n");
    Cli.ok("save", "--library", chain, "--image", dir.resolve("c2.bsave"), "--base",
        dir.resolve("c1.bsave"), "--quiet");
    try (Mounted m = new Mounted(dir.resolve("c1.bsave"))) {
      assertThat(TreeSnapshot.of(m.at).diff(middle)).isNull();
    }
  }

  @Test
  void anEncryptedImageMountsWithItsKey() throws Exception {
    Path password = Files.writeString(dir.resolve("password"), "mount me\n");
    Path sealed = dir.resolve("sealed.bsave");
    Cli.ok("save", "--library", lib, "--image", sealed, "--password-file", password, "--quiet");
    try (Mounted m = new Mounted(sealed, "--password-file", password)) {
      assertThat(TreeSnapshot.of(m.at).diff(TreeSnapshot.of(lib))).isNull();
    }
    Cli without = Cli.run("mount", sealed, Files.createDirectories(dir.resolve("nokey")));
    assertThat(without.exit()).isEqualTo(1);
    assertThat(without.err().strip()).startsWith("beamsave: error: ").hasLineCount(1)
        .contains("encrypted");
  }

  @Test
  void aLocationShowsEveryImageBySeriesAndTime() throws Exception {
    Path store = Files.createDirectories(dir.resolve("store"));
    Path mail = Files.createDirectories(dir.resolve("mail"));
    Files.writeString(mail.resolve("inbox"), "one\n");
    Cli.ok("save", "--library", mail, "--image", store.resolve("mail-20261201T010000Z.bsave"),
        "--quiet");
    TreeSnapshot firstMail = TreeSnapshot.of(mail);
    Files.writeString(mail.resolve("inbox"), "one\ntwo\n");
    Cli.ok("save", "--library", mail, "--image", store.resolve("mail-20261202T010000Z.bsave"),
        "--quiet");
    Cli.ok("save", "--library", lib, "--image",
        store.resolve("nightly/lib-20261202T020000Z.bsave"), "--quiet");
    try (Mounted m = new Mounted(store)) {
      assertThat(run("ls", m.at.toString()).out()).isEqualTo("mail\nnightly\n");
      assertThat(run("ls", m.at.resolve("mail").toString()).out())
          .isEqualTo("2026-12-01T01:00:00Z\n2026-12-02T01:00:00Z\nlatest\n");
      assertThat(Files.readSymbolicLink(m.at.resolve("mail/latest")))
          .isEqualTo(Path.of("2026-12-02T01:00:00Z"));
      assertThat(Files.readString(m.at.resolve("mail/latest/inbox"))).isEqualTo("one\ntwo\n");
      assertThat(TreeSnapshot.of(m.at.resolve("mail/2026-12-01T01:00:00Z")).diff(firstMail))
          .isNull();
      assertThat(TreeSnapshot.of(m.at.resolve("nightly/lib/2026-12-02T02:00:00Z"))
          .diff(TreeSnapshot.of(lib))).isNull();
    }
  }

  @Test
  void aDamagedBlockIsAnErrorForItsFileAloneAndOneLine() throws Exception {
    Path damaged = dir.resolve("damaged.bsave");
    Files.copy(image, damaged);
    try (var ch = java.nio.channels.FileChannel.open(damaged,
        java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
      ch.read(b, 1 << 20);
      b.put(0, (byte) (b.get(0) ^ 0x40)).rewind();
      ch.write(b, 1 << 20);
    }
    try (Mounted m = new Mounted(damaged)) {
      assertThat(Files.readString(m.at.resolve("small.txt"))).isEqualTo("just this one\n");
      Ran cmp = run("sh", "-c", "cd '" + m.at + "' && find . -type f -exec cat {} + > /dev/null");
      assertThat(cmp.exit()).as("reading every file").isNotZero();
      assertThat(cmp.out()).contains("Input/output error");
      assertThat(m.err.toString()).contains("checksum mismatch");
    }
  }
}

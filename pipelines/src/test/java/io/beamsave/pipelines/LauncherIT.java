package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.runner.BeamOptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The packaged jar as its own process, the way the launcher runs it. */
class LauncherIT {
  @TempDir Path tmp;

  record Run(int exit, String out, String err) {}

  static Run beamsave(List<String> prefix, Object... args) throws Exception {
    return beamsave(Map.of(), prefix, args);
  }

  /** Runs the packaged jar as its own process with extra environment, and waits for it. */
  static Run beamsave(Map<String, String> env, List<String> prefix, Object... args)
      throws Exception {
    Path out = Files.createTempFile("out", ".txt");
    Path err = Files.createTempFile("err", ".txt");
    try {
      Process p = start(env, prefix, out, err, args);
      if (!p.waitFor(5, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new AssertionError("beamsave " + List.of(args) + " did not finish in 5 minutes");
      }
      return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  /** Starts the packaged jar as its own process, its output going to {@code out}/{@code err}. */
  static Process start(
      Map<String, String> env, List<String> prefix, Path out, Path err, Object... args)
      throws IOException {
    String jar = System.getProperty("beamsave.jar", "target/beamsave.jar");
    List<String> cmd = new ArrayList<>(prefix);
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    if (java.util.Arrays.stream(args).map(String::valueOf).anyMatch(BeamOptions::namesFlink)) {
      // As bin/beamsave runs it on Flink: with the runner's directory on the class path.
      cmd.addAll(List.of("-cp", jar + ":" + System.getProperty("beamsave.flink.lib") + "/*",
          "io.beamsave.pipelines.cli.BeamsaveCommand"));
    } else {
      cmd.addAll(List.of("-jar", jar));
    }
    for (Object a : args) {
      cmd.add(String.valueOf(a));
    }
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().put("LC_ALL", "C.UTF-8");
    pb.environment().putAll(env);
    return pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
  }

  static boolean isRoot() throws IOException {
    return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
  }

  @Test
  void catWritesAFilesBytesToStdoutExactly() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("catlib"));
    byte[] bytes = new byte[3 << 20];
    new java.util.Random(9).nextBytes(bytes);
    Files.write(lib.resolve("random.bin"), bytes);
    Path image = tmp.resolve("cat.bsave");
    Run save = beamsave(List.of(), "save", "--library", lib, "--image", image, "-q");
    assertThat(save.exit()).as(save.err()).isZero();
    Path out = tmp.resolve("cat-stdout");
    Path err = tmp.resolve("cat-stderr");
    Process p = start(Map.of(), List.of(), out, err, "cat", image, "random.bin");
    assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(p.exitValue()).as(Files.readString(err)).isZero();
    assertThat(Files.readAllBytes(out)).isEqualTo(bytes);
  }

  @Test
  void savesVerifiesAndRestoresAsAProcess() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("lib"));
    Trees.unicodeNames(lib);
    Trees.mixedData(lib, 1 << 20);
    Path image = tmp.resolve("lib.bsave");
    Run save = beamsave(List.of(), "save", "--library", lib, "--image", image, "--codec", "zstd:3",
        "--", "--targetParallelism=2");
    assertThat(save.exit()).as(save.err()).isZero();
    assertThat(save.out()).contains("zstd:3").contains("image: " + image);
    Run verify = beamsave(List.of(), "verify", "--image", image);
    assertThat(verify.exit()).as(verify.err()).isZero();
    Run restore = beamsave(List.of(), "restore", "--image", image, "--target", tmp.resolve("r"));
    assertThat(restore.exit()).as(restore.err()).isZero();
    assertThat(Files.readString(tmp.resolve("r/ünïcödé/日本語/файл κείμενο 🎉.txt"),
        StandardCharsets.UTF_8)).isEqualTo("unicode");
  }

  /**
   * Memory for many files: 200,000 entries saved, listed and restored by JVMs of 256 MiB of
   * heap (about 1.3 KiB of heap an entry), and restored identical; their pieces in two shards.
   */
  @Test
  void twoHundredThousandEntriesInASmallHeap() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("many"));
    for (int d = 0; d < 200; d++) {
      Path sub = Files.createDirectories(lib.resolve(String.format("d%03d", d)));
      for (int f = 0; f < 999; f++) {
        Files.writeString(sub.resolve("file-" + f + ".txt"), d + "/" + f + "\n");
      }
    }
    Map<String, String> small = Map.of("JAVA_TOOL_OPTIONS", "-Xmx256m");
    Path image = tmp.resolve("many.bsave");
    // 1.6 MB fit one shard of 64 MiB; describing 199,800 pieces would take 16.6 MiB, so the
    // shard closes at 16 MiB of them (ShardPlanner) and a worker holds at most that many.
    Run save = beamsave(small, List.of(), "save", "--library", lib, "--image", image,
        "--shard-size", "64MiB", "-q");
    assertThat(save.exit()).as(save.err()).isZero();
    Run list = beamsave(small, List.of(), "list", image, "--json");
    assertThat(list.exit()).as(list.err()).isZero();
    assertThat(list.out().lines().findFirst().orElseThrow()).contains("\"shards\":2,");
    assertThat(list.out().lines().filter(l -> l.contains("\"type\":\"entry\"")).count())
        .isEqualTo(200_000);
    Path back = tmp.resolve("many-back");
    Run restore = beamsave(small, List.of(), "restore", image, "--target", back, "-q");
    assertThat(restore.exit()).as(restore.err()).isZero();
    assertThat(io.beamsave.pipelines.restore.TreeSnapshot.of(back)
        .diff(io.beamsave.pipelines.restore.TreeSnapshot.of(lib))).isNull();
  }

  @Test
  void anUnreadableFileFailsTheSaveNamingItAndLeavesNothing() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("lib"));
    Trees.mixedData(lib, 1 << 20);
    Path secret = Files.writeString(lib.resolve("secret.txt"), "no peeking");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("---------"));
    // Root reads everything; drop the capabilities that let it, as a real operator's
    // unprivileged account would lack them.
    List<String> prefix =
        isRoot() ? List.of("setpriv", "--bounding-set=-dac_override,-dac_read_search") : List.of();
    Path out = Files.createDirectories(tmp.resolve("out"));
    Run save = beamsave(prefix, "save", "--library", lib, "--image", out.resolve("lib.bsave"));
    assertThat(save.exit()).isEqualTo(1);
    assertThat(save.err().strip())
        .isEqualTo("beamsave: error: cannot read " + secret + ": permission denied");
    try (Stream<Path> s = Files.list(out)) {
      assertThat(s.toList()).as("no image, partial image or staging left").isEmpty();
    }

    Run verbose =
        beamsave(prefix, "save", "--verbose", "--library", lib, "--image", out.resolve("lib.bsave"));
    assertThat(verbose.exit()).isEqualTo(1);
    assertThat(verbose.err()).contains("permission denied").contains("\tat ");
  }

  @Test
  void anUnreadableDirectoryFailsTheSaveNamingIt() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("lib"));
    Path closed = Files.createDirectories(lib.resolve("closed"));
    Files.writeString(closed.resolve("inside.txt"), "hidden");
    Files.setPosixFilePermissions(closed, PosixFilePermissions.fromString("---------"));
    List<String> prefix =
        isRoot() ? List.of("setpriv", "--bounding-set=-dac_override,-dac_read_search") : List.of();
    Path out = Files.createDirectories(tmp.resolve("out"));
    try {
      Run save = beamsave(prefix, "save", "--library", lib, "--image", out.resolve("lib.bsave"));
      assertThat(save.exit()).isEqualTo(1);
      assertThat(save.err().strip())
          .isEqualTo("beamsave: error: cannot list " + closed + ": permission denied");
      try (Stream<Path> s = Files.list(out)) {
        assertThat(s.toList()).isEmpty();
      }
    } finally {
      Files.setPosixFilePermissions(closed, PosixFilePermissions.fromString("rwx------"));
    }
  }

  /**
   * As another user than root, a restore gives back what that user may set (modes, ACLs,
   * {@code user.} attributes, FIFOs) and warns once per kind, with a count and the first entry,
   * for what it may not: devices, capabilities, {@code trusted.} attributes.
   */
  @Test
  void asAnotherUserARestoreKeepsWhatItMayAndSaysWhatItCouldNot() throws Exception {
    MetadataTest.assumeRootAndTools();
    Path shared = Files.createTempDirectory("beamsave-nonroot");
    try {
      Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
      Path lib = Files.createDirectories(shared.resolve("lib"));
      MetadataTest.sh("cd '" + lib + "' && echo x > f && setfattr -n user.u -v 1 f"
          + " && setfattr -n trusted.t -v 2 f && setfacl -m u:nobody:rw f && mkfifo p"
          + " && mknod c c 1 3 && mknod b b 7 0 && cp /bin/true cap"
          + " && setcap cap_net_raw+ep cap");
      Path image = shared.resolve("n.bsave");
      Run save = beamsave(List.of(), "save", "--library", lib, "--image", image, "-q");
      assertThat(save.exit()).as(save.err()).isZero();
      Files.setPosixFilePermissions(image, PosixFilePermissions.fromString("rw-r--r--"));
      Path out = shared.resolve("out");
      Run restore = beamsave(Map.of("HOME", shared.toString()),
          List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"),
          // Granted all the image asks for, it gets what this user may set and hears of the rest.
          "restore", image, "--target", out, "--trust-image", "-q");
      assertThat(restore.exit()).as(restore.err()).isZero();
      assertThat(restore.err().lines()).containsExactly(
          "beamsave: note: trusting the image: set-id bits, file capabilities, devices and"
              + " trusted. and security. attributes are restored as saved",
          "beamsave: warning: could not restore 2 devices (only root may make them; first: "
              + out.resolve("b") + ")",
          "beamsave: warning: could not restore file capabilities of 1 entry (not permitted as"
              + " this user; first: " + out.resolve("cap") + ")",
          "beamsave: warning: could not restore trusted. extended attributes of 1 entry (not"
              + " permitted as this user; first: " + out.resolve("f") + ")");
      assertThat(MetadataTest.sh("cd '" + out + "' && getfattr -d -m - f && getfacl -P f"
          + " && stat -c '%F' p"))
          .contains("user.u=\"1\"", "user:nobody:rw-", "fifo");
      assertThat(Files.exists(out.resolve("c"), java.nio.file.LinkOption.NOFOLLOW_LINKS))
          .isFalse();
    } finally {
      MetadataTest.sh("rm -rf '" + shared + "'");
    }
  }

  @Test
  void aSocketIsWarnedAboutAsEveryWarningIs() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("lib"));
    Files.writeString(lib.resolve("plain.txt"), "plain");
    assertThat(new ProcessBuilder("mkfifo", lib.resolve("pipe").toString()).start().waitFor())
        .isZero();
    Path socket = lib.resolve("sock");
    try (java.nio.channels.ServerSocketChannel s =
        java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
      s.bind(java.net.UnixDomainSocketAddress.of(socket));
      Run save = beamsave(List.of(), "save", "--library", lib, "--image",
          tmp.resolve("l.bsave"), "-q");
      assertThat(save.exit()).as(save.err()).isZero();
      // The FIFO is saved (format version 9 on); the socket alone is skipped, and said so.
      assertThat(save.err().strip()).isEqualTo("beamsave: warning: skipping socket " + socket
          + ": a socket is made by the program that listens on it, not restored");
    }
  }

  /**
   * A base in a directory the saving user may not write: the save runs, and warns that a
   * prune there cannot see it (its lease cannot be left there).
   */
  @Test
  void anIncrementalSaveAgainstABaseInAReadOnlyDirectoryWarnsAndSaves() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("lib"));
    Trees.mixedData(lib, 1 << 20);
    Path ro = Files.createDirectories(tmp.resolve("ro"));
    Path base = ro.resolve("base.bsave");
    assertThat(beamsave(List.of(), "save", "--library", lib, "--image", base, "-q").exit())
        .isZero();
    Files.writeString(lib.resolve("new.txt"), "new");
    Path out = Files.createDirectories(tmp.resolve("out"));
    Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("r-xr-xr-x"));
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxrwxrwx"));
    Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rwxrwxrwx"));
    try {
      List<String> prefix = isRoot()
          ? List.of("setpriv", "--bounding-set=-dac_override,-dac_read_search") : List.of();
      Run save = beamsave(prefix, "save", "--library", lib, "--image",
          out.resolve("inc.bsave"), "--base", base, "-q");
      assertThat(save.exit()).as(save.err()).isZero();
      assertThat(save.err()).contains("beamsave: warning: cannot leave a lease beside " + base)
          .contains("a prune there meanwhile cannot see");
      assertThat(beamsave(List.of(), "verify", out.resolve("inc.bsave")).exit()).isZero();
    } finally {
      Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
  }

  @Test
  void helpExplainsEveryCommand() throws Exception {
    Run help = beamsave(List.of(), "--help");
    assertThat(help.exit()).isZero();
    assertThat(help.out()).contains("save", "restore", "verify", "list", "codecs", "demo");
    Run codecs = beamsave(List.of(), "codecs");
    assertThat(codecs.out()).contains("*MEDIUM       zstd:3").contains("*ZLIB         zlib:6");
  }
}

package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The release tarball as an operator installs it: unpacked into a directory nobody may write,
 * run by an unprivileged user (nobody, when the tests run as root) with a Maven on the PATH that
 * must never be called. Save, verify and restore all succeed, with a writable cache for the
 * class-data archive and without one.
 */
class ReleaseIT {
  Path work;
  Path install;
  Path mvnCalled;

  @BeforeEach
  void unpack() throws Exception {
    // Under /tmp and open to all: the unprivileged user must reach it.
    work = Files.createTempDirectory(Path.of("/tmp"), "beamsave-release-");
    Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path tarball;
    try (Stream<Path> s = Files.list(Path.of(System.getProperty("beamsave.jar")).getParent())) {
      tarball = s.filter(p -> p.getFileName().toString().matches("beamsave-.*\\.tar\\.gz"))
          .findFirst().orElseThrow(() -> new AssertionError("no release tarball in target/"));
    }
    Path root = Files.createDirectories(work.resolve("opt"));
    run(List.of("tar", "-xzf", tarball.toString(), "-C", root.toString()), null, null);
    // The Flink session cluster's jars, which unpack over the release (cluster/flink-LINE/).
    try (Stream<Path> s = Files.list(Path.of("..", "deploy", "flink", "target"))) {
      Path cluster = s.filter(p -> p.getFileName().toString()
              .matches("beamsave-flink-cluster-.*\\.tar\\.gz"))
          .findFirst().orElseThrow(() -> new AssertionError("no cluster tarball in deploy/flink"));
      run(List.of("tar", "-xzf", cluster.toString(), "-C", root.toString()), null, null);
    }
    try (Stream<Path> s = Files.list(root)) {
      install = s.findFirst().orElseThrow();
    }
    assertThat(install.getFileName().toString()).matches("beamsave-[0-9].*");
    assertThat(install.resolve("bin/beamsave")).isExecutable();
    assertThat(install.resolve("lib/beamsave.jar")).isRegularFile();
    assertThat(install.resolve("docs/operators-guide.md")).isRegularFile();
    run(List.of("chmod", "-R", "a-w", root.toString()), null, null);
    // A Maven that records being called: the release's launcher must never build.
    Path bin = Files.createDirectories(work.resolve("fake-bin"));
    mvnCalled = work.resolve("mvn-was-called");
    Path mvn = Files.writeString(bin.resolve("mvn"),
        "#!/bin/sh\ntouch " + mvnCalled + "\nexit 1\n");
    Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @AfterEach
  void remove() throws Exception {
    run(List.of("chmod", "-R", "u+w", work.toString()), null, null);
    run(List.of("rm", "-rf", work.toString()), null, null);
  }

  static boolean isRoot() throws IOException {
    return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
  }

  /** Runs {@code cmd} with only PATH, HOME and the locale set; returns its exit and output. */
  static LauncherIT.Run run(List<String> cmd, String path, Path home) throws Exception {
    return run(cmd, path, home, false);
  }

  /** As {@link #run(List, String, Path)}; with {@code mayFail}, a failure is returned too. */
  static LauncherIT.Run run(List<String> cmd, String path, Path home, boolean mayFail)
      throws Exception {
    Path out = Files.createTempFile("out", ".txt");
    Path err = Files.createTempFile("err", ".txt");
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd);
      if (path != null) {
        pb.environment().clear();
        pb.environment().put("PATH", path);
        pb.environment().put("HOME", home.toString());
        pb.environment().put("LC_ALL", "C.UTF-8");
      }
      Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      if (!p.waitFor(5, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new AssertionError(cmd + " did not finish in 5 minutes");
      }
      LauncherIT.Run r = new LauncherIT.Run(p.exitValue(), Files.readString(out),
          Files.readString(err));
      if (path == null && !mayFail && r.exit() != 0) {
        throw new AssertionError(cmd + ": " + r.err());
      }
      return r;
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  /** The unpacked bin/beamsave, as nobody when root, with the fake Maven first on the PATH. */
  LauncherIT.Run beamsave(Path home, Object... args) throws Exception {
    return asNobody(home, install.resolve("bin/beamsave"), args);
  }

  /** A program of the unpacked release, as {@link #beamsave} runs bin/beamsave. */
  LauncherIT.Run asNobody(Path home, Path program, Object... args) throws Exception {
    return run(nobody(program, args), path(), home);
  }

  List<String> nobody(Path program, Object... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    if (isRoot()) {
      cmd.addAll(List.of("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"));
    }
    cmd.add(program.toString());
    for (Object a : args) {
      cmd.add(String.valueOf(a));
    }
    return cmd;
  }

  /** The fake Maven first, then this Java, then the system's programs. */
  String path() {
    return work.resolve("fake-bin") + ":" + Path.of(System.getProperty("java.home"), "bin")
        + ":/usr/local/bin:/usr/bin:/bin";
  }

  /** Makes {@code dir} (a tree) the unprivileged user's, so a restore as that user matches it. */
  static void giveToNobody(Path dir) throws IOException {
    if (!isRoot()) {
      return;
    }
    UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
    UserPrincipal nobody = users.lookupPrincipalByName("nobody");
    GroupPrincipal nogroup = users.lookupPrincipalByGroupName("nogroup");
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.toList()) {
        PosixFileAttributeView v = Files.getFileAttributeView(p, PosixFileAttributeView.class,
            java.nio.file.LinkOption.NOFOLLOW_LINKS);
        v.setOwner(nobody);
        v.setGroup(nogroup);
      }
    }
  }

  @Test
  void theUnpackedReleaseSavesVerifiesAndRestoresFromAReadOnlyDirectoryWithoutMaven()
      throws Exception {
    Path lib = Files.createDirectories(work.resolve("data/lib"));
    Trees.unicodeNames(lib);
    Trees.mixedData(lib, 3 << 20);
    Path home = Files.createDirectories(work.resolve("home"));
    giveToNobody(work.resolve("data"));
    giveToNobody(home);
    Path image = work.resolve("data/lib.bsave");

    LauncherIT.Run save = beamsave(home, "save", "--library", lib, "--image", image, "--quiet");
    assertThat(save.exit()).as(save.err()).isZero();
    assertThat(save.err()).doesNotContain("Error occurred").doesNotContain("shared archive");
    try (Stream<Path> s = Files.list(home.resolve(".cache/beamsave"))) {
      assertThat(s.map(p -> p.getFileName().toString()))
          .as("the class-data archive, made in the cache").anyMatch(n -> n.contains(".jsa"));
    }
    LauncherIT.Run verify = beamsave(home, "verify", "--image", image);
    assertThat(verify.exit()).as(verify.err()).isZero();
    assertThat(verify.out()).startsWith("OK ");
    Path target = work.resolve("data/restored");
    LauncherIT.Run restore =
        beamsave(home, "restore", "--image", image, "--target", target, "--quiet");
    assertThat(restore.exit()).as(restore.err()).isZero();
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();

    // No writable cache at all (a service account without a home): still no failure.
    LauncherIT.Run homeless = beamsave(Path.of("/nonexistent"), "save", "--library", lib,
        "--image", work.resolve("data/again.bsave"), "--quiet");
    assertThat(homeless.exit()).as(homeless.err()).isZero();
    assertThat(homeless.err()).doesNotContain("Error occurred");
    assertThat(mvnCalled).as("the release's launcher never runs Maven").doesNotExist();
  }

  /**
   * On a Java of 23 or later (when one is installed beside this one), a save and a restore say
   * nothing on stderr: without the launcher's flags every run printed eight WARNING lines about
   * jnr-ffi's native access and its use of sun.misc.Unsafe.
   */
  @Test
  void onANewerJavaTheReleaseRunsWithoutItsWarnings() throws Exception {
    Path jdk = null;
    try (Stream<Path> s = Files.list(Path.of("/usr/lib/jvm"))) {
      for (Path p : s.sorted().toList()) {
        Path release = p.resolve("release");
        if (Files.isRegularFile(release) && Files.isExecutable(p.resolve("bin/java"))) {
          java.util.regex.Matcher m = java.util.regex.Pattern
              .compile("(?m)^JAVA_VERSION=\"(\\d+)").matcher(Files.readString(release));
          if (m.find() && Integer.parseInt(m.group(1)) >= 23) {
            jdk = p;
          }
        }
      }
    } catch (java.nio.file.NoSuchFileException none) {
      // No JDKs where Debian keeps them.
    }
    org.junit.jupiter.api.Assumptions.assumeTrue(jdk != null, "no Java 23 or later installed");
    Path lib = Files.createDirectories(work.resolve("data/lib"));
    Trees.mixedData(lib, 1 << 20);
    Path home = Files.createDirectories(work.resolve("home"));
    giveToNobody(work.resolve("data"));
    giveToNobody(home);
    Path image = work.resolve("data/lib.bsave");
    Path target = work.resolve("data/restored");
    for (Object[] args : List.of(
        new Object[] {"save", "--library", lib, "--image", image, "--quiet"},
        new Object[] {"restore", image, "--target", target, "--quiet"})) {
      List<Object> withJava = new ArrayList<>(List.of("JAVA_HOME=" + jdk,
          install.resolve("bin/beamsave")));
      withJava.addAll(List.of(args));
      LauncherIT.Run r = asNobody(home, Path.of("/usr/bin/env"), withJava.toArray());
      assertThat(r.exit()).as(r.err()).isZero();
      assertThat(r.err()).as(jdk + " " + args[0]).isEmpty();
    }
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();
  }

  /**
   * As deploy/systemd runs it: a user of its own that reads the library through
   * CAP_DAC_READ_SEARCH alone, which must reach files and directories only root may read.
   */
  @Test
  void aServiceUserWithOnlyCapDacReadSearchSavesWhatOnlyRootMayRead() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(isRoot(), "needs root to hand out a capability");
    Path lib = Files.createDirectories(work.resolve("root-only/lib/private"));
    Files.writeString(lib.resolve("secret.txt"), "only root may read this\n");
    Files.writeString(lib.getParent().resolve("open.txt"), "anyone may\n");
    Files.setPosixFilePermissions(lib.resolve("secret.txt"), PosixFilePermissions.fromString("rw-------"));
    Files.setPosixFilePermissions(lib, PosixFilePermissions.fromString("rwx------"));
    Path image = work.resolve("service.bsave");
    Path home = Files.createDirectories(work.resolve("service-home"));
    giveToNobody(home);
    String path = work.resolve("fake-bin") + ":" + Path.of(System.getProperty("java.home"), "bin")
        + ":/usr/local/bin:/usr/bin:/bin";
    List<String> asService = List.of("setpriv", "--reuid=nobody", "--regid=nogroup",
        "--clear-groups", "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search",
        install.resolve("bin/beamsave").toString());
    List<String> save = new ArrayList<>(asService);
    save.addAll(List.of("save", "--library", lib.getParent().toString(), "--image",
        image.toString(), "-q"));
    LauncherIT.Run saved = run(save, path, home);
    assertThat(saved.exit()).as(saved.err()).isZero();
    List<String> list = new ArrayList<>(asService);
    list.addAll(List.of("list", image.toString()));
    assertThat(run(list, path, home).out()).contains("private/secret.txt").contains("open.txt");
    assertThat(mvnCalled).doesNotExist();
  }

  @Test
  void theUnpackedReleaseShipsBashCompletionAndManPagesForEveryCommand() throws Exception {
    Path completion = install.resolve("completion/beamsave.bash");
    assertThat(completion).isRegularFile();
    assertThat(Files.readString(completion))
        .contains("images", "prune", "--exclude-caches", "complete -F _complete_beamsave")
        .doesNotContain("\r");
    // Sourced into bash, it completes a subcommand and one of that subcommand's options.
    String complete = "source " + completion + "\n"
        + "c() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMP_LINE=\"$*\";"
        + " COMP_POINT=${#COMP_LINE}; _complete_beamsave 2>/dev/null;"
        + " echo \"${COMPREPLY[*]}\"; }\n"
        + "c beamsave ima\nc beamsave save --exclude-c\nc beamsave save --codec zs\n";
    LauncherIT.Run bash = run(List.of("bash", "-c", complete), null, null);
    assertThat(bash.out().lines().toList())
        .containsExactly("images", "--exclude-caches", "zstd:3 zstd:19");

    Path man1 = install.resolve("man/man1");
    try (Stream<Path> s = Files.list(man1)) {
      assertThat(s.map(p -> p.getFileName().toString()))
          .contains("beamsave.1", "beamsave-save.1", "beamsave-restore.1", "beamsave-verify.1",
              "beamsave-images.1", "beamsave-prune.1")
          .allMatch(n -> n.matches("beamsave(-[a-z0-9-]+)?\\.1"));
    }
    String save = Files.readString(man1.resolve("beamsave-save.1"));
    assertThat(save).contains(".TH \"BEAMSAVE\\-SAVE\" \"1\"")
        .contains("\\-\\-exclude\\-caches", "\\-\\-library")
        // A glob's '*' in the help text stays a '*', not bold markup.
        .contains("\\*(Aqvar/log/*.gz\\*(Aq")
        .doesNotContain("pass:c[");
    assertThat(Files.readString(man1.resolve("beamsave.1"))).contains(".SH \"COMMANDS\"");
  }

  @Test
  void theUnpackedReleaseRunsTheDemoToAnIdenticalRestoreFromItsOwnS3Server() throws Exception {
    Path source = Files.createDirectories(work.resolve("data/source"));
    Trees.unicodeNames(source);
    Trees.mixedData(source, 4 << 20);
    Path home = Files.createDirectories(work.resolve("home"));
    giveToNobody(work.resolve("data"));
    giveToNobody(home);
    LauncherIT.Run demo = beamsave(home, "demo", "--source", source, "--work",
        work.resolve("data/demo"), "--codecs", "zstd:3");
    assertThat(demo.exit()).as(demo.err()).isZero();
    assertThat(demo.out()).contains("started S3Proxy on http://127.0.0.1:")
        .contains("restored tree is identical to " + source);
    assertThat(mvnCalled).doesNotExist();
  }

  @Test
  void theReleasesS3ServerTakesASaveThatVerifiesAndRestoresAndStopsOnSigterm() throws Exception {
    Path lib = Files.createDirectories(work.resolve("data/lib"));
    Trees.mixedData(lib, 3 << 20);
    Trees.unicodeNames(lib);
    Path home = Files.createDirectories(work.resolve("home"));
    Path objects = Files.createDirectories(work.resolve("data/s3"));
    giveToNobody(work.resolve("data"));
    giveToNobody(home);
    Path out = Files.createTempFile(work, "s3-server", ".out");
    Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rw-rw-rw-"));
    ProcessBuilder pb = new ProcessBuilder(nobody(install.resolve("bin/beamsave"), "s3-server",
        "--dir", objects, "--port", "0", "--bucket", "trial"));
    pb.environment().clear();
    pb.environment().putAll(java.util.Map.of("PATH", path(), "HOME", home.toString(),
        "LC_ALL", "C.UTF-8"));
    Process server = pb.redirectErrorStream(true).redirectOutput(out.toFile()).start();
    try {
      String endpoint = null;
      for (int i = 0; i < 600 && endpoint == null; i++) {
        java.util.regex.Matcher m = java.util.regex.Pattern
            .compile("at (http://127\\.0\\.0\\.1:[0-9]+)").matcher(Files.readString(out));
        if (m.find()) {
          endpoint = m.group(1);
        } else {
          assertThat(server.isAlive()).as(Files.readString(out)).isTrue();
          Thread.sleep(100);
        }
      }
      assertThat(endpoint).as(Files.readString(out)).isNotNull();
      assertThat(Files.readString(out)).contains("export AWS_ACCESS_KEY_ID=");
      // The credentials it printed, as an operator would export them.
      String exports = Files.readString(out).lines().filter(l -> l.contains("export "))
          .findFirst().orElseThrow().trim().substring("export ".length());
      List<Object> withKeys = new ArrayList<>(List.of("env"));
      withKeys.addAll(List.of((Object[]) exports.split(" ")));
      withKeys.add(install.resolve("bin/beamsave"));
      String image = "s3://trial/lib.bsave";
      LauncherIT.Run save = run(nobodyEnv(withKeys, "save", "--library", lib, "--image", image,
          "--s3-endpoint", endpoint, "--quiet"), path(), home);
      assertThat(save.exit()).as(save.err()).isZero();
      assertThat(objects.resolve("trial/lib.bsave")).isRegularFile();
      LauncherIT.Run verify = run(nobodyEnv(withKeys, "verify", image, "--s3-endpoint",
          endpoint), path(), home);
      assertThat(verify.exit()).as(verify.err()).isZero();
      Path target = work.resolve("data/restored");
      LauncherIT.Run restore = run(nobodyEnv(withKeys, "restore", image, "--target", target,
          "--s3-endpoint", endpoint, "--quiet"), path(), home);
      assertThat(restore.exit()).as(restore.err()).isZero();
      assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();
    } finally {
      server.destroy(); // SIGTERM, as an operator's kill or systemd would send
      assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(server.exitValue()).isEqualTo(128 + 15);
    // Its S3Proxy went with it: nothing is left serving the directory.
    assertThat(run(List.of("pgrep", "-f", objects + "/s3proxy.properties"), null, null, true)
        .exit()).isEqualTo(1);
    assertThat(mvnCalled).doesNotExist();
  }

  /** The ends of a cluster's logs, for a failure's message. */
  static String logs(Path dir) {
    StringBuilder b = new StringBuilder();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path log : s.sorted().toList()) {
        List<String> lines = Files.readAllLines(log);
        b.append("\n== ").append(log.getFileName()).append('\n')
            .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
      }
    } catch (IOException e) {
      b.append(e);
    }
    return b.toString();
  }

  private List<String> nobodyEnv(List<Object> envAndProgram, Object... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    if (isRoot()) {
      cmd.addAll(List.of("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"));
    }
    envAndProgram.forEach(a -> cmd.add(String.valueOf(a)));
    for (Object a : args) {
      cmd.add(String.valueOf(a));
    }
    return cmd;
  }

  /**
   * deploy/flink/start-cluster.sh from the unpacked release, with no Maven to call: a session
   * cluster of the Flink beamsave is built for, which says so on its REST API, takes a save given
   * only its address (bin/beamsave picks the runner of its line by asking it), and the image
   * restores identical on the DirectRunner.
   */
  @Test
  void aClusterStartedFromTheUnpackedReleaseRunsASaveGivenOnlyItsAddress() throws Exception {
    Path lib = Files.createDirectories(work.resolve("data/lib"));
    Trees.mixedData(lib, 24 << 20);
    Trees.linksAndEmpties(lib);
    Trees.unicodeNames(lib);
    Path home = Files.createDirectories(work.resolve("home"));
    Path flink = Files.createDirectories(work.resolve("data/flink"));
    giveToNobody(work.resolve("data"));
    giveToNobody(home);
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1,
        java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Path scripts = install.resolve("deploy/flink");
    try {
      LauncherIT.Run start = asNobody(home, scripts.resolve("start-cluster.sh"), flink, 1, port);
      assertThat(start.exit()).as(() -> start.err() + start.out() + logs(flink.resolve("log")))
          .isZero();
      assertThat(Files.readString(flink.resolve("classpath")))
          .contains(install.resolve("cluster").toString());
      com.fasterxml.jackson.databind.JsonNode config =
          new com.fasterxml.jackson.databind.ObjectMapper().readTree(
              java.net.URI.create("http://127.0.0.1:" + port + "/config").toURL());
      assertThat(config.get("flink-version").asText())
          .isEqualTo(io.beamsave.pipelines.cli.BuildInfo.flinkVersion());

      Path image = work.resolve("data/lib.bsave");
      LauncherIT.Run save = beamsave(home, "save", "--library", lib, "--image", image, "--quiet",
          "--", "--runner=FlinkRunner", "--flinkMaster=127.0.0.1:" + port);
      assertThat(save.exit()).as(save.err()).isZero();
      com.fasterxml.jackson.databind.JsonNode jobs =
          new com.fasterxml.jackson.databind.ObjectMapper().readTree(
              java.net.URI.create("http://127.0.0.1:" + port + "/jobs/overview").toURL());
      assertThat(jobs.get("jobs")).hasSize(1);
      assertThat(jobs.get("jobs").get(0).get("state").asText()).isEqualTo("FINISHED");

      Path target = work.resolve("data/restored");
      LauncherIT.Run restore =
          beamsave(home, "restore", "--image", image, "--target", target, "--quiet");
      assertThat(restore.exit()).as(restore.err()).isZero();
      assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();

      // A line the release does not carry is refused before anything runs, naming both.
      LauncherIT.Run other = beamsave(home, "save", "--library", lib, "--image",
          work.resolve("data/other.bsave"), "--flink-version", "2.0.1", "--quiet", "--",
          "--runner=FlinkRunner", "--flinkMaster=127.0.0.1:" + port);
      assertThat(other.exit()).isEqualTo(1);
      assertThat(other.err().strip()).startsWith("beamsave: error: no Flink runner for Flink 2.0.1")
          .contains("carries the runner for Flink "
              + io.beamsave.pipelines.runner.FlinkRunnerLine.line(
                  io.beamsave.pipelines.cli.BuildInfo.flinkVersion()))
          .doesNotContain("\n");
      assertThat(work.resolve("data/other.bsave")).doesNotExist();
    } finally {
      asNobody(home, scripts.resolve("stop-cluster.sh"), flink);
    }
    assertThat(mvnCalled).as("the cluster came from the release's jars").doesNotExist();
  }
}

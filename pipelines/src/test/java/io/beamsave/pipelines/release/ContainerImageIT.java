package io.beamsave.pipelines.release;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.pipelines.cli.BuildInfo;
import io.beamsave.pipelines.runner.FlinkRunnerLine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The OCI image tarball that {@code mvn package -Pcontainer} writes, read as a container runtime
 * would: index, manifest, config and layers. Its layers, unpacked, are a root file system a
 * chroot can run beamsave in as the image's user, with nothing from the host but /proc.
 */
class ContainerImageIT {
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  static Path work;
  static Path oci;
  static Path rootfs;
  static JsonNode config;
  static JsonNode manifest;

  @BeforeAll
  static void unpack() throws Exception {
    Path tar = Path.of(System.getProperty("beamsave.image.tar", "target/beamsave-image.tar"));
    boolean required = Boolean.getBoolean("beamsave.image.required");
    if (!required) {
      assumeTrue(Files.isRegularFile(tar),
          "no container image at " + tar + "; build it with mvn package -Pcontainer");
    }
    assertThat(tar).as("the container profile writes the image").isRegularFile();
    oci = Files.createDirectories(work.resolve("oci"));
    run("tar", "-xf", tar.toString(), "-C", oci.toString());
    assertThat(Files.readString(oci.resolve("oci-layout"))).contains("\"imageLayoutVersion\"");
    JsonNode index = JSON.readTree(oci.resolve("index.json").toFile());
    assertThat(index.at("/manifests")).hasSize(1);
    JsonNode ref = index.at("/manifests/0");
    assertThat(ref.at("/mediaType").asText()).isEqualTo("application/vnd.oci.image.manifest.v1+json");
    assertThat(ref.at("/annotations/org.opencontainers.image.ref.name").asText())
        .isEqualTo("beamsave:" + io.beamsave.pipelines.cli.BuildInfo.version());
    manifest = JSON.readTree(blob(ref.at("/digest").asText()).toFile());
    config = JSON.readTree(blob(manifest.at("/config/digest").asText()).toFile());

    // Layers in order, as a runtime stacks them (the base is empty: nothing to whiteout).
    rootfs = Files.createDirectories(work.resolve("rootfs"));
    for (JsonNode layer : manifest.get("layers")) {
      assertThat(layer.at("/mediaType").asText()).endsWith(".tar+gzip");
      run("tar", "--warning=no-unknown-keyword", "--same-permissions", "-xzf",
          blob(layer.at("/digest").asText()).toString(), "-C", rootfs.toString());
    }
  }

  static Path blob(String digest) {
    assertThat(digest).startsWith("sha256:");
    Path p = oci.resolve("blobs/sha256").resolve(digest.substring("sha256:".length()));
    assertThat(p).isRegularFile();
    return p;
  }

  record Run(int exit, String out, String err) {}

  static Run run(String... cmd) throws Exception {
    Path out = Files.createTempFile(work, "out", ".txt");
    Path err = Files.createTempFile(work, "err", ".txt");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile())
        .redirectError(err.toFile());
    // The image's environment, not the build's.
    pb.environment().clear();
    pb.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    Process p = pb.start();
    if (!p.waitFor(5, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new AssertionError(List.of(cmd) + " did not finish in 5 minutes");
    }
    Run r = new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    if (!cmd[0].equals("unshare") && r.exit() != 0) {
      throw new AssertionError(List.of(cmd) + ": " + r.err());
    }
    return r;
  }

  static List<String> strings(JsonNode array) {
    List<String> l = new ArrayList<>();
    array.forEach(n -> l.add(n.asText()));
    return l;
  }

  @Test
  void configRunsTheReleaseJarWithTheLaunchersFlagsAsANonRootUser() {
    JsonNode c = config.get("config");
    List<String> entrypoint = strings(c.get("Entrypoint"));
    assertThat(entrypoint.get(0)).isEqualTo("/opt/java/bin/java");
    String line = FlinkRunnerLine.line(BuildInfo.flinkVersion());
    assertThat(entrypoint).containsSubsequence("-cp",
            "/opt/beamsave/lib/beamsave.jar:/opt/beamsave/lib/flink-" + line + "/*",
            "io.beamsave.pipelines.cli.BeamsaveCommand")
        .contains("-XX:+UseSerialGC", "-Djava.io.tmpdir=/tmp", "@/opt/beamsave/lib/jvm-opens");
    String user = c.get("User").asText();
    assertThat(user).matches("[1-9][0-9]*:[1-9][0-9]*");
    assertThat(strings(c.get("Env"))).contains("LC_ALL=C.UTF-8", "JAVA_HOME=/opt/java");
    assertThat(c.at("/Volumes").has("/tmp")).as("/tmp declared writable").isTrue();
    assertThat(config.get("os").asText()).isEqualTo("linux");
    assertThat(config.get("architecture").asText()).isEqualTo("amd64");
    assertThat(config.at("/rootfs/diff_ids")).hasSameSizeAs(manifest.get("layers"));
  }

  @Test
  void layersHoldTheJarAJreTheLibrariesItLinksAndTheUser() throws IOException {
    Path jar = rootfs.resolve("opt/beamsave/lib/beamsave.jar");
    assertThat(jar).isRegularFile();
    assertThat(Files.size(jar)).isEqualTo(Files.size(Path.of("target/beamsave.jar")));
    // The Flink runner of the image's line, whole.
    Path runner = Path.of(System.getProperty("beamsave.flink.lib"));
    try (var built = Files.list(runner); var shipped = Files.list(
        rootfs.resolve("opt/beamsave/lib").resolve(runner.getFileName()))) {
      assertThat(shipped.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrderElementsOf(built.map(p -> p.getFileName().toString()).toList())
          .anyMatch(n -> n.startsWith("beam-runners-flink"));
    }
    assertThat(Files.readAllLines(rootfs.resolve("opt/beamsave/lib/jvm-opens")))
        .isEqualTo(Files.readAllLines(Path.of("../deploy/flink/jvm-opens")));
    assertThat(rootfs.resolve("opt/java/bin/java")).isExecutable();
    assertThat(rootfs.resolve("opt/java/lib/server/libjvm.so")).isRegularFile();
    assertThat(rootfs.resolve("lib64/ld-linux-x86-64.so.2")).isExecutable();
    assertThat(rootfs.resolve("lib/x86_64-linux-gnu/libc.so.6")).isRegularFile();
    assertThat(rootfs.resolve("lib/x86_64-linux-gnu/libz.so.1")).isRegularFile();
    assertThat(rootfs.resolve("usr/lib/locale/C.utf8/LC_CTYPE")).isRegularFile();
    String uid = config.at("/config/User").asText().split(":")[0];
    assertThat(Files.readAllLines(rootfs.resolve("etc/passwd")))
        .anyMatch(l -> l.startsWith("beamsave:x:" + uid + ":"));
    assertThat(Files.getPosixFilePermissions(rootfs.resolve("tmp")))
        .contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE);
  }

  static boolean isRoot() throws IOException {
    return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
  }

  /**
   * Runs the image's entrypoint and {@code args} in a chroot of its layers as its user, in a
   * mount and PID namespace of its own with a fresh /proc (gone when the command ends).
   */
  static Run inImage(String... args) throws Exception {
    JsonNode c = config.get("config");
    List<String> cmd = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private",
        "--pid", "--fork", "--mount-proc=" + rootfs.resolve("proc"),
        "env", "-i"));
    cmd.addAll(strings(c.get("Env")));
    cmd.addAll(List.of("/usr/sbin/chroot", "--userspec=" + c.get("User").asText(),
        rootfs.toString()));
    cmd.addAll(strings(c.get("Entrypoint")));
    cmd.addAll(List.of(args));
    return run(cmd.toArray(String[]::new));
  }

  @Test
  void beamsaveSavesAndVerifiesInAChrootOfTheLayersAsTheImagesUser() throws Exception {
    assumeTrue(isRoot(), "chroot needs root; the layout tests above still ran");
    Files.createDirectories(rootfs.resolve("proc"));
    Files.createDirectories(rootfs.resolve("dev"));
    // What a container runtime gives every container.
    run("mknod", "-m", "666", rootfs.resolve("dev/null").toString(), "c", "1", "3");
    run("mknod", "-m", "666", rootfs.resolve("dev/urandom").toString(), "c", "1", "9");
    Path lib = Files.createDirectories(rootfs.resolve("data/lib/ünïcødé"));
    Files.writeString(lib.resolve("a.txt"), "hello\n".repeat(10_000));
    byte[] noise = new byte[2 << 20];
    new java.util.Random(7).nextBytes(noise);
    Files.write(rootfs.resolve("data/lib/noise.bin"), noise);
    String owner = config.at("/config/User").asText();
    run("chown", "-R", owner, rootfs.resolve("data").toString());

    Run version = inImage("--version");
    assertThat(version.exit()).as(version.err()).isZero();
    assertThat(version.out()).startsWith("beamsave ");

    Run save = inImage("save", "--library", "/data/lib", "--image", "/data/lib.bsave", "--quiet");
    assertThat(save.exit()).as(save.err()).isZero();
    assertThat(rootfs.resolve("data/lib.bsave")).isRegularFile();
    Run verify = inImage("verify", "--image", "/data/lib.bsave");
    assertThat(verify.exit()).as(verify.err()).isZero();
    assertThat(verify.out()).startsWith("OK ").contains("2 files");
    Run list = inImage("list", "--image", "/data/lib.bsave");
    assertThat(list.out()).as("a UTF-8 name survives the image's locale").contains("ünïcødé/a.txt");

    // Encryption in the image: X25519 from the JRE's jdk.crypto.ec, AES-GCM from Conscrypt's
    // native library (unpacked to /tmp), Argon2id from Bouncy Castle.
    Run keygen = inImage("keygen", "--identity", "/data/me.id");
    assertThat(keygen.exit()).as(keygen.err()).isZero();
    Files.writeString(rootfs.resolve("data/pw"), "a password\n");
    run("chown", owner, rootfs.resolve("data/pw").toString());
    Run sealed = inImage("save", "--library", "/data/lib", "--image", "/data/sealed.bsave",
        "--recipient", keygen.out().strip(), "--password-file", "/data/pw", "--quiet");
    assertThat(sealed.exit()).as(sealed.err()).isZero();
    Run opened = inImage("verify", "/data/sealed.bsave", "--identity", "/data/me.id");
    assertThat(opened.exit()).as(opened.err()).isZero();
    assertThat(opened.out()).startsWith("OK ").contains("every block and digest checked");
    assertThat(inImage("list", "/data/sealed.bsave", "--password-file", "/data/pw").out())
        .contains("ünïcødé/a.txt");

    Run missing = inImage("verify", "--image", "/data/none.bsave");
    assertThat(missing.exit()).isNotZero();
    assertThat(missing.err().strip().lines()).hasSize(1);
    assertThat(missing.err()).contains("/data/none.bsave");
  }
}

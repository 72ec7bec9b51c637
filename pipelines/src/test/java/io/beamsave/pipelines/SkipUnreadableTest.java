package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.pipelines.cli.BeamsaveCommand;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * save --skip-unreadable: a file and a directory the save may not read are skipped with a
 * warning each, recorded in the image as unreadable, counted in the report, and the save exits
 * 3; the rest restores byte for byte. Without the option the save fails naming one of them.
 *
 * <p>The saves run in a child JVM: as root, with the capabilities that let root read everything
 * dropped (as an operator's unprivileged account lacks them), so mode 000 really denies.
 */
class SkipUnreadableTest {
  @TempDir Path tmp;
  private Path lib;
  private Path secret;
  private Path closed;

  record Run(int exit, String out, String err) {}

  @BeforeEach
  void library() throws Exception {
    boolean root = ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
    assumeTrue(!root || Files.isExecutable(Path.of("/usr/bin/setpriv")),
        "running as root without setpriv: no way to make a file unreadable to the save");
    lib = Files.createDirectories(tmp.resolve("lib")).toRealPath();
    Trees.mixedData(lib, 3 << 20);
    Files.writeString(Files.createDirectories(lib.resolve("sub")).resolve("kept.txt"), "kept");
    secret = Files.writeString(lib.resolve("secret.txt"), "no peeking");
    closed = Files.createDirectories(lib.resolve("closed"));
    Files.writeString(closed.resolve("inside.txt"), "hidden");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("---------"));
    Files.setPosixFilePermissions(closed, PosixFilePermissions.fromString("---------"));
  }

  @AfterEach
  void reopen() throws Exception {
    if (closed != null) {
      Files.setPosixFilePermissions(closed, PosixFilePermissions.fromString("rwx------"));
    }
  }

  /** The command line in its own JVM, unable to read what its mode bits deny. */
  static Run beamsave(Object... args) throws Exception {
    boolean root = ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
    List<String> cmd = new ArrayList<>();
    if (root) {
      cmd.addAll(List.of("setpriv", "--bounding-set=-dac_override,-dac_read_search"));
    }
    cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), BeamsaveCommand.class.getName()));
    for (Object a : args) {
      cmd.add(String.valueOf(a));
    }
    Path out = Files.createTempFile("out", ".txt");
    Path err = Files.createTempFile("err", ".txt");
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile())
          .redirectError(err.toFile());
      pb.environment().put("LC_ALL", "C.UTF-8");
      Process p = pb.start();
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

  @Test
  void skipsWhatItCannotReadWarnsRecordsItAndExits3() throws Exception {
    Path image = tmp.resolve("out/lib.bsave");
    Path json = tmp.resolve("report.json");

    Run save = beamsave("save", "--library", lib, "--image", image, "--skip-unreadable",
        "--report-json", json, "--quiet");

    assertThat(save.exit()).as(save.err()).isEqualTo(3);
    assertThat(save.err().lines().toList()).containsExactly(
        "beamsave: warning: cannot read " + closed + ": permission denied; skipped",
        "beamsave: warning: cannot read " + secret + ": permission denied; skipped");
    assertThat(save.out()).contains("unreadable: 2 entries could not be read and were skipped");
    Map<?, ?> report = new ObjectMapper().readValue(json.toFile(), Map.class);
    assertThat(report.get("filesUnreadable")).isEqualTo(2);

    Map<String, Entry> catalog = ImageReader.readCatalog(image).entries().stream()
        .collect(Collectors.toMap(e -> e.path().toString(), e -> e));
    assertThat(catalog.get("secret.txt").unreadable()).isTrue();
    assertThat(catalog.get("secret.txt").type()).isEqualTo(EntryType.FILE);
    assertThat(catalog.get("closed").unreadable()).isTrue();
    assertThat(catalog).doesNotContainKey("closed/inside.txt");
    assertThat(catalog.get("sub/kept.txt").unreadable()).isFalse();

    Cli list = Cli.ok("list", "--image", image);
    assertThat(list.out().lines().filter(l -> l.endsWith("secret.txt")).findFirst().orElseThrow())
        .startsWith("f?");
    assertThat(list.out().lines().filter(l -> l.endsWith(" closed")).findFirst().orElseThrow())
        .startsWith("d?");
    assertThat(Cli.ok("verify", "--image", image, "--quiet").out())
        .contains("note: 2 entries could not be read when saved");

    Path target = tmp.resolve("restored");
    Cli restore = Cli.ok("restore", "--image", image, "--target", target, "--quiet");
    assertThat(restore.out() + restore.err()).contains("1 file could not be read when saved");
    assertThat(target.resolve("secret.txt")).as("never passed off as the file").doesNotExist();
    assertThat(target.resolve("closed")).isDirectory().isEmptyDirectory();
    List<Path> saved;
    try (Stream<Path> s = Files.walk(lib)) {
      saved = s.filter(p -> !p.startsWith(closed) && !p.equals(secret))
          .filter(Files::isRegularFile).toList();
    }
    assertThat(saved).hasSizeGreaterThan(2);
    for (Path f : saved) {
      assertThat(Files.mismatch(f, target.resolve(lib.relativize(f)))).as(f.toString())
          .isEqualTo(-1L);
    }
  }

  @Test
  void withoutTheOptionTheSaveFailsInOneLineNamingWhatItCannotRead() throws Exception {
    Path out = Files.createDirectories(tmp.resolve("out"));

    Run save = beamsave("save", "--library", lib, "--image", out.resolve("lib.bsave"));

    assertThat(save.exit()).isEqualTo(1);
    assertThat(save.err().strip()).isIn(
        "beamsave: error: cannot read " + secret + ": permission denied",
        "beamsave: error: cannot list " + closed + ": permission denied");
    try (Stream<Path> s = Files.list(out)) {
      assertThat(s.toList()).as("no image, partial image or staging left").isEmpty();
    }
  }
}

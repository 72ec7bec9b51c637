package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code save --before} and {@code --after}: order, environment, exit codes, time limits. */
class HooksTest {
  @TempDir static Path dir;
  static Path lib;

  @BeforeAll
  static void library() throws Exception {
    lib = Files.createDirectories(dir.resolve("lib"));
    Files.writeString(lib.resolve("a.txt"), "a\n");
  }

  /** A hook that appends its name and what it was told to {@code log}. */
  static String record(Path log, String name) {
    return "echo \"" + name + " lib=$BEAMSAVE_LIBRARY image=$BEAMSAVE_IMAGE"
        + " run=${BEAMSAVE_RUN_ID:+set} result=$BEAMSAVE_RESULT code=$BEAMSAVE_EXIT_CODE\" >> '"
        + log + "'";
  }

  @Test
  void hooksRunInOrderAroundASaveAndAreToldWhatItIs() throws Exception {
    Path log = dir.resolve("order.log");
    Path image = dir.resolve("ordered.bsave");
    Cli save = Cli.ok("save", "--library", lib, "--image", image, "-q",
        "--before", record(log, "b1") + "; test ! -e '" + image + "'",
        "--before", record(log, "b2"),
        "--after", record(log, "a1") + "; test -e '" + image + "'",
        "--after", record(log, "a2"));
    assertThat(Files.readAllLines(log)).containsExactly(
        "b1 lib=" + lib + " image=" + image + " run=set result= code=",
        "b2 lib=" + lib + " image=" + image + " run=set result= code=",
        "a1 lib=" + lib + " image=" + image + " run=set result=success code=0",
        "a2 lib=" + lib + " image=" + image + " run=set result=success code=0");
    assertThat(save.err()).contains("--before #1 ").contains("exited 0");
    assertThat(image).exists();
  }

  @Test
  void aFailingBeforeHookStopsTheSaveAndTheAfterHooksHearOfTheFailure() throws Exception {
    Path log = dir.resolve("failed.log");
    Path image = dir.resolve("never.bsave");
    Path metrics = dir.resolve("failed.prom");
    Cli save = Cli.run("save", "--library", lib, "--image", image, "-q",
        "--before", "echo frozen? no >&2; exit 3",
        "--after", record(log, "a1"), "--metrics-file", metrics);
    assertThat(save.exit()).isEqualTo(1);
    assertThat(save.err()).contains("beamsave: hook --before #1: frozen? no");
    assertThat(save.err().lines().filter(l -> l.contains("exited 3"))).as("said once").hasSize(1);
    assertThat(save.err().strip().lines().reduce((a, b) -> b).orElseThrow())
        .isEqualTo("beamsave: error: --before #1 'echo frozen? no >&2; exit 3' exited 3 in "
            + save.err().replaceAll("(?s).*exited 3 in ([0-9.]+s); nothing.*", "$1")
            + "; nothing was saved");
    assertThat(image).doesNotExist();
    try (var s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("never"));
    }
    assertThat(Files.readAllLines(log)).singleElement().asString()
        .endsWith("result=failure code=1");
    // The monitoring hears of a save that never ran, and of each hook's exit code.
    assertThat(Files.readString(metrics)).contains("beamsave_save_success 0")
        .contains("beamsave_save_hook_exit_code{index=\"1\",phase=\"before\"} 3")
        .contains("beamsave_save_hook_exit_code{index=\"1\",phase=\"after\"} 0");
  }

  @Test
  void aFailingSaveRunsTheAfterHooksAndAFailingAfterHookDoesNotHideASuccess() throws Exception {
    Path log = dir.resolve("after.log");
    Cli failed = Cli.run("save", "--library", dir.resolve("missing"), "--image",
        dir.resolve("x.bsave"), "-q", "--after", record(log, "a1"));
    assertThat(failed.exit()).isEqualTo(1);
    assertThat(failed.err().strip()).endsWith("does not exist");
    assertThat(Files.readAllLines(log)).singleElement().asString()
        .endsWith("result=failure code=1");
    Cli ok = Cli.run("save", "--library", lib, "--image", dir.resolve("y.bsave"), "-q",
        "--after", "exit 5", "--json");
    assertThat(ok.exit()).isZero();
    assertThat(ok.err()).contains("beamsave: warning: --after #1 'exit 5' exited 5");
    assertThat(ok.err().lines().filter(l -> l.contains("exited 5"))).as("said once").hasSize(1);
    List<String> hooks = ok.out().lines().filter(l -> l.contains("\"type\":\"hook\"")).toList();
    assertThat(hooks).singleElement().asString().contains("\"phase\":\"after\"")
        .contains("\"exitCode\":5").contains("\"timedOut\":false");
  }

  @Test
  void aHookPastItsTimeLimitIsKilledWithWhatItStarted() throws Exception {
    Path marker = dir.resolve("survived");
    Cli save = Cli.run("save", "--library", lib, "--image", dir.resolve("slow.bsave"), "-q",
        "--hook-timeout", "1", "--before", "(sleep 3; touch '" + marker + "') & sleep 30");
    assertThat(save.exit()).isEqualTo(1);
    assertThat(save.err()).contains("was killed at its time limit, after 1 s; nothing was saved");
    Thread.sleep(3500);
    assertThat(marker).as("what the hook started was killed too").doesNotExist();
    assertThat(Cli.run("save", "--library", lib, "--image", dir.resolve("z.bsave"),
        "--hook-timeout", "0", "--before", "true").exit()).isEqualTo(2);
  }
}

package io.beamsave.pipelines;

import static io.beamsave.pipelines.BadInputTest.assertOneLineError;
import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Root restores into a directory a local user (uid 65534) owns, their home say, with {@code
 * --overwrite} and {@code --delete}: the user may swap the files the restore writes under
 * temporary names for links while it runs, leave hard links (made for them: the kernel refuses
 * them links to root's files) to root's files where the image has files or has nothing, and
 * give names that would forge lines of the output. Root's files are never written, chowned or
 * removed through any of it, and every line printed is one line.
 */
class RestoreIntoAUsersDirectoryTest {
  @TempDir Path tmp;
  Path library;
  Path image;
  Path victim;
  Path victimFile;
  TreeSnapshot victimBefore;

  @BeforeEach
  void setUp() throws Exception {
    Nobody.assumeRootWithSetpriv();
    Nobody.root("chmod 0755 '" + tmp + "'");
    library = Files.createDirectories(tmp.resolve("lib"));
    for (int i = 0; i < 400; i++) {
      Files.writeString(library.resolve(String.format("f%03d", i)), "the image's " + i);
    }
    Files.writeString(library.resolve("a.txt"), "the image's a");
    image = tmp.resolve("lib.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    victim = Files.createDirectories(tmp.resolve("victim"));
    victimFile = Files.writeString(victim.resolve("shadow"), "root:secret:::\n");
    Nobody.root("chmod 0600 '" + victimFile + "' && chmod 0755 '" + victim + "'");
    victimBefore = TreeSnapshot.of(victim);
  }

  @Test
  void filesWrittenUnderTemporaryNamesSwappedForLinksNeverLeadOutside() throws Exception {
    List<String> said = new ArrayList<>();
    long swaps = 0;
    for (int round = 0; round < 4; round++) {
      Path target = Nobody.owns(tmp.resolve("home-" + round));
      Cli restore;
      List<String> acted;
      try (Nobody.Act act = Nobody.start(tmp, "swaptemps", target, victimFile)) {
        restore = Cli.run("restore", image, "--target", target, "--overwrite", "--delete",
            "--quiet");
        acted = act.stop();
      }
      String as = "round " + round + ", the user " + acted + "; restore said " + restore.err();
      said.add(as);
      swaps += Long.parseLong(acted.get(acted.size() - 1).replace("swaps ", ""));
      assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as("the victim, %s", as).isNull();
      if (restore.exit() != 0) {
        // Refused in one line: the file written was replaced, or taken away, meanwhile.
        BadInputTest.assertOneLineError(restore, "beamsave: error: ");
        assertThat(restore.err()).as(as).containsAnyOf("was replaced during the restore",
            "no such file or directory", "symbolic link");
      }
    }
    assertThat(swaps).as("the race was run: %s", said).isPositive();
  }

  @Test
  void hardLinksToRootsFilesAreReplacedOrRemovedAsNamesNeverWrittenThrough() throws Exception {
    Path target = Nobody.owns(tmp.resolve("home"));
    Path second = Files.writeString(victim.resolve("second"), "root's second\n");
    Nobody.root("chmod 0600 '" + second + "' && ln '" + victimFile + "' '" + target
        + "/a.txt' && ln '" + second + "' '" + target + "/stale'");
    victimBefore = TreeSnapshot.of(victim);

    Cli.ok("restore", image, "--target", target, "--overwrite", "--delete", "--quiet");

    assertThat(TreeSnapshot.of(victim).diff(victimBefore)).isNull();
    assertThat(victimFile).hasContent("root:secret:::\n");
    assertThat(target.resolve("a.txt")).hasContent("the image's a");
    assertThat(target.resolve("stale")).doesNotExist();
    assertThat(second).hasContent("root's second\n");
  }

  @Test
  void namesThatWouldForgeLinesArePrintedAsOneLineEach() throws Exception {
    Path target = Nobody.owns(tmp.resolve("home"));
    Nobody.Ran made = Nobody.sh("cd '" + target + "' && mkdir \"$(printf 'd\\nbeamsave:"
        + " error: forged')\" && : > \"$(printf 'x\\nwould remove everything')\""
        + " && : > \"$(printf 'esc\\033]0;title\\007')\"");
    assertThat(made.exit()).as(made.err()).isZero();

    Cli dry = Cli.ok("restore", image, "--target", target, "--overwrite", "--delete",
        "--dry-run");
    assertThat(dry.out().lines())
        .contains("  x\\x0awould remove everything", "  d\\x0abeamsave: error: forged",
            "  esc\\x1b]0;title\\x07")
        .noneMatch(l -> l.equals("would remove everything"));
    assertThat(dry.out() + dry.err()).doesNotContain("\u001b").doesNotContain("\u0007")
        .doesNotContain("\nbeamsave: error: forged");

    Cli restore = Cli.ok("restore", image, "--target", target, "--overwrite", "--delete");
    assertThat(restore.out() + restore.err()).doesNotContain("\nwould remove everything")
        .doesNotContain("\nbeamsave: error: forged").doesNotContain("\u001b");
    assertThat(target.resolve("f000")).hasContent("the image's 0");
    try (var left = Files.list(target)) {
      assertThat(left.count()).isEqualTo(401);
    }
  }

  @Test
  void aTargetLinkedToTheRootDirectoryIsRefusedInADryRun() throws Exception {
    Path home = Nobody.owns(tmp.resolve("home"));
    Path link = home.resolve("restore-here");
    assertThat(Nobody.sh("ln -s / '" + link + "'").exit()).isZero();
    // Only ever a dry run: a restore that went on would empty this machine.
    Cli dry = Cli.run("restore", image, "--target", link, "--delete", "--overwrite",
        "--dry-run");
    assertOneLineError(dry, "refusing --delete into " + link, "--no-preserve-root");
    assertThat(dry.out()).doesNotContain("would remove");
  }

  @Test
  void aDirectoryOfTheImagesSwappedForALinkWhileDeleteRunsLeadsNowhere() throws Exception {
    // The user's own tree (their home): restored, its top stays theirs to rename in.
    Path theirs = Files.createDirectories(tmp.resolve("their-lib"));
    Files.createDirectories(theirs.resolve("kept"));
    Files.writeString(theirs.resolve("kept/a"), "a");
    Nobody.root("chown -R 65534:65534 '" + theirs + "'");
    Path theirImage = tmp.resolve("theirs.bsave");
    Cli.ok("save", "--library", theirs, "--image", theirImage, "--quiet");
    for (int i = 0; i < 300; i++) {
      Files.writeString(victim.resolve(String.format("s%03d", i)), "root's " + i);
    }
    victimBefore = TreeSnapshot.of(victim);
    List<String> said = new ArrayList<>();
    for (int round = 0; round < 4; round++) {
      Path target = Nobody.owns(tmp.resolve("home-" + round));
      Nobody.Ran stale = Nobody.sh("set -e; mkdir '" + target + "/kept'; cd '" + target
          + "/kept'; for i in $(seq -w 0 299); do : > s$i; done");
      assertThat(stale.exit()).as(stale.err()).isZero();
      Cli restore;
      try (Nobody.Act act = Nobody.start(tmp, "swap", target.resolve("kept"), victim)) {
        restore = Cli.run("restore", theirImage, "--target", target, "--overwrite", "--delete",
            "--quiet");
        said.add("round " + round + ": " + act.stop() + "; restore said " + restore.err());
      }
      assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as("the victim, %s", said)
          .isNull();
      if (restore.exit() != 0) {
        assertOneLineError(restore, target + "/kept");
      }
    }
  }

  @Test
  void aTreeNestedThousandsDeepAtANameTheImageLacksIsRemovedOrRefusedInOneLine()
      throws Exception {
    Path target = Nobody.owns(tmp.resolve("deep-home"));
    Nobody.nest(target, 3000);
    try {
      Cli restore = Cli.run("restore", image, "--target", target, "--overwrite", "--delete");
      if (restore.exit() != 0) {
        assertOneLineError(restore, "nested");
      } else {
        assertThat(target.resolve("d")).doesNotExist();
      }
    } finally {
      LeftoversTest.unnest(target, new byte[] {'d'});
    }
  }
}

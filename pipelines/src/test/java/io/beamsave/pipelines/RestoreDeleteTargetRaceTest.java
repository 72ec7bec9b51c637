package io.beamsave.pipelines;

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
 * {@code restore --delete --overwrite} as root into a target an unprivileged user (uid 65534)
 * reaches: they own the link named as {@code --target} and the directory that holds it and the
 * real target. Once the restore has begun they point the link at a victim of root's, a
 * directory they cannot write that holds files the image lacks, or move the real target away
 * and put a link to the victim in its place. The victim keeps every file, every round; a
 * restore that succeeds has made the real target, wherever it now is, the image's tree.
 */
class RestoreDeleteTargetRaceTest {
  @TempDir Path tmp;
  Path library;
  Path image;
  Path home;
  Path victim;
  TreeSnapshot victimBefore;

  @BeforeEach
  void setUp() throws Exception {
    Nobody.assumeRootWithSetpriv();
    Nobody.root("chmod 0755 '" + tmp + "'");
    library = Files.createDirectories(tmp.resolve("lib"));
    Trees.tinyFiles(library, 3000);
    Files.createDirectories(library.resolve("kept"));
    Files.writeString(library.resolve("kept/a.txt"), "a");
    image = tmp.resolve("lib.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    home = Nobody.owns(tmp.resolve("home"));
    // Root's, outside everything the restore removes: what the image lacks, and names the
    // image has in a directory it has (kept/), which --delete would empty of the rest.
    victim = Files.createDirectories(tmp.resolve("victim"));
    for (int i = 0; i < 300; i++) {
      Files.writeString(victim.resolve(String.format("precious%03d", i)), "root's own " + i);
    }
    Files.createDirectories(victim.resolve("kept"));
    Files.writeString(victim.resolve("kept/ledger"), "root's ledger");
    Nobody.root("chmod -R go-w '" + victim + "'");
    victimBefore = TreeSnapshot.of(victim);
  }

  /** A real target of root's in the user's directory, holding what the image lacks. */
  Path realTarget(String name) throws Exception {
    Path real = Files.createDirectories(home.resolve(name));
    for (int i = 0; i < 2000; i++) {
      Files.writeString(real.resolve(String.format("stale%04d", i)), "stale");
    }
    Files.createDirectories(real.resolve("kept"));
    Files.writeString(real.resolve("kept/stray"), "stray");
    return real;
  }

  /** The user's link to {@code real}, beside it. */
  Path linkTo(Path real, String name) throws Exception {
    Path link = home.resolve(name);
    assertThat(Nobody.sh("ln -s '" + real.getFileName() + "' '" + link + "'").exit()).isZero();
    return link;
  }

  @Test
  void aLinkRepointedAtARootDirectoryOnceTheRestoreBeganLeavesItAndMirrorsTheRealTarget()
      throws Exception {
    List<String> said = new ArrayList<>();
    int inTime = 0;
    for (int round = 0; round < 4; round++) {
      Path real = realTarget("real-" + round);
      Path link = linkTo(real, "current-" + round);
      Cli restore;
      List<String> acted;
      try (Nobody.Act act = Nobody.start(tmp, "repoint", real, link, victim)) {
        restore = Cli.run("restore", image, "--target", link, "--delete", "--overwrite",
            "--quiet");
        acted = act.stop();
      }
      String as = "round " + round + ", the user " + acted + "; restore said " + restore.err()
          + restore.out();
      said.add(as);
      inTime += acted.contains("repointed while restoring") ? 1 : 0;
      assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as("the victim, %s", as).isNull();
      assertThat(restore.exit()).as(as).isZero();
      assertThat(TreeSnapshot.of(real).diff(TreeSnapshot.of(library)))
          .as("the real target, %s", as).isNull();
      assertThat(Files.readSymbolicLink(link)).isEqualTo(victim);
    }
    assertThat(inTime).as("rounds whose link moved while the restore ran: %s", said)
        .isPositive();
  }

  @Test
  void aRealTargetMovedAwayForALinkToARootDirectoryLeavesThatDirectoryWhole() throws Exception {
    List<String> said = new ArrayList<>();
    int moved = 0;
    int succeeded = 0;
    for (int round = 0; round < 6; round++) {
      Path real = realTarget("real-" + round);
      Path link = linkTo(real, "current-" + round);
      Path aside = home.resolve("moved-" + round);
      // Half the rounds as soon as the marker is there, half once the tree is whole and
      // --delete is about to begin.
      String when = round % 2 == 0 ? "begun" : "finished";
      Cli restore;
      List<String> acted;
      try (Nobody.Act act = Nobody.start(tmp, "moveaway", real, aside, victim, when)) {
        restore = Cli.run("restore", image, "--target", link, "--delete", "--overwrite",
            "--quiet");
        acted = act.stop();
      }
      String as = "round " + round + " (" + when + "), the user " + acted + "; restore said "
          + restore.err() + restore.out();
      said.add(as);
      moved += acted.stream().anyMatch(l -> l.startsWith("moved ")) ? 1 : 0;
      assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as("the victim, %s", as).isNull();
      if (restore.exit() == 0) {
        succeeded++;
        Path now = Files.exists(aside) ? aside : real;
        assertThat(TreeSnapshot.of(now).diff(TreeSnapshot.of(library)))
            .as("the real target, now %s, %s", now, as).isNull();
      } else {
        // Its workers found a link where the target was: the restore stopped, in one line.
        BadInputTest.assertOneLineError(restore, real.toString());
      }
    }
    assertThat(moved).as("rounds whose target moved: %s", said).isPositive();
    assertThat(succeeded).as("rounds that went on to --delete beneath the moved target: %s",
        said).isPositive();
  }
}

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
 * {@code cleanup --at DIR --yes} as root, where a local user (uid 65534) may write: the
 * location itself (mode 1777) and a directory of theirs beneath it. They plant what looks like
 * a killed run's staging, with and without a run id, and keep swapping a directory in it for a
 * link to a directory of root's they cannot write, while cleanup runs. Nothing outside the
 * location is touched, in any round.
 */
class CleanupRaceTest {
  @TempDir Path tmp;
  Path at;
  Path theirs;
  Path victim;
  TreeSnapshot victimBefore;

  @BeforeEach
  void setUp() throws Exception {
    Nobody.assumeRootWithSetpriv();
    Nobody.root("chmod 0755 '" + tmp + "'");
    at = Files.createDirectories(tmp.resolve("backups"));
    Nobody.root("chmod 1777 '" + at + "'");
    theirs = Nobody.owns(at.resolve("theirs"));
    victim = Files.createDirectories(tmp.resolve("victim"));
    for (int i = 0; i < 500; i++) {
      Files.writeString(victim.resolve(String.format("f%03d", i)), "root's " + i);
    }
    for (int i = 0; i < 100; i++) {
      // What root's saves elsewhere left: cleanup of that place's business, not this one's.
      Files.writeString(victim.resolve(String.format("p%02d.bsave.partial", i)), "root's");
    }
    Nobody.root("chmod -R go-w '" + victim + "'");
    victimBefore = TreeSnapshot.of(victim);
  }

  /** As the user: a directory like a killed run's staging, with {@code sub} of many files. */
  static void plantStaging(Path staging, String run) throws Exception {
    Nobody.Ran r = Nobody.sh("set -e; mkdir -p '" + staging + "/sub'; cd '" + staging + "'; "
        + (run == null ? "" : "printf %s " + run + " > run; ")
        + "cd sub; for i in $(seq -w 0 499); do : > f$i; done; mkdir deep; : > deep/x");
    assertThat(r.exit()).as(r.out() + r.err()).isZero();
  }

  /** Runs cleanup as root while the user swaps {@code swapped} for a link to the victim. */
  Cli cleanupWhileSwapping(Path swapped, List<String> said) throws Exception {
    try (Nobody.Act act = Nobody.start(tmp, "swap", swapped, victim)) {
      Cli cleanup = Cli.run("cleanup", "--at", at, "--yes");
      said.add(act.stop() + "; cleanup said " + cleanup.err() + cleanup.out());
      return cleanup;
    }
  }

  @Test
  void aStagingWithARunIdIsRemovedBeneathTheLocationWhileADirectoryInItIsSwappedForALink()
      throws Exception {
    List<String> said = new ArrayList<>();
    int removed = 0;
    for (int round = 0; round < 6; round++) {
      Path where = round % 2 == 0 ? at : theirs;
      Path staging = where.resolve(".beamsave-staging-20261130T021500-4242-" + round);
      plantStaging(staging, "run" + round);
      Cli cleanup = cleanupWhileSwapping(staging.resolve("sub"), said);
      String as = "round " + round + " in " + where + ": " + said.get(round);
      assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as("the victim, %s", as).isNull();
      if (cleanup.exit() == 0) {
        removed++;
        assertThat(cleanup.out()).as(as).contains("removed  staging");
        assertThat(staging).as(as).doesNotExist();
      } else {
        // Only the failure of the walk for leases, which met a directory the user moved (the
        // bug the disabled test below names): before anything is removed.
        BadInputTest.assertOneLineError(cleanup, "NoSuchFileException: " + staging);
        assertThat(staging.resolve("run")).as(as).exists();
      }
    }
    assertThat(removed).as("rounds that removed the staging: %s", said).isPositive();
  }

  @Test
  void aStagingWithoutARunIdIsNotBeamsavesAndIsLeftWithTheVictim() throws Exception {
    List<String> said = new ArrayList<>();
    for (int round = 0; round < 4; round++) {
      Path where = round % 2 == 0 ? at : theirs;
      Path staging = where.resolve(".beamsave-staging-20261130T021500-4243-" + round);
      plantStaging(staging, null);
      Cli cleanup = cleanupWhileSwapping(staging.resolve("sub"), said);
      String as = "round " + round + " in " + where + ": " + said.get(round);
      assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as("the victim, %s", as).isNull();
      assertThat(cleanup.out()).as(as).doesNotContain("staging");
      assertThat(staging.resolve("sub/f000")).as("left, %s", as).exists();
    }
  }

  @Test
  void aDirectoryRenamedUnderTheLocationWhileCleanupLooksDoesNotFailIt() throws Exception {
    List<String> said = new ArrayList<>();
    for (int round = 0; round < 6; round++) {
      Path mine = theirs.resolve("mine" + round);
      plantStaging(mine, null);
      Cli cleanup = cleanupWhileSwapping(mine.resolve("sub"), said);
      assertThat(cleanup.exit()).as("round " + round + ": " + said.get(round)).isZero();
    }
  }

  @Test
  void aPartialImageWhoseDirectoryBecomesALinkAfterTheWalkIsNotRemovedOutsideTheLocation()
      throws Exception {
    // Cleanup removes the stale locks it found before the partial images: once the first of
    // the user's many locks goes, the walk is over, and the user moves their directory.
    Nobody.Ran r = Nobody.sh("set -e; cd '" + theirs + "'; mkdir a-sub locks; for i in"
        + " $(seq -w 0 99); do echo theirs > a-sub/p$i.bsave.partial; done; cd locks; for i"
        + " in $(seq -w 0 19999); do : > l$i.bsave.lock; done");
    assertThat(r.exit()).as(r.out() + r.err()).isZero();
    Cli cleanup;
    List<String> acted;
    try (Nobody.Act act = Nobody.start(tmp, "relink", theirs.resolve("a-sub"), victim,
        theirs.resolve("locks/l00000.bsave.lock"))) {
      cleanup = Cli.run("cleanup", "--at", at, "--yes");
      acted = act.stop();
    }
    String as = "the user " + acted + "; cleanup said " + cleanup.err()
        + cleanup.out().lines().filter(l -> l.contains("partial")).findFirst().orElse("");
    assertThat(victim.resolve("p00.bsave.partial")).as("root's, %s", as).exists();
    assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as("the victim, %s", as).isNull();
  }

  @Test
  void aTreeNestedThousandsDeepUnderTheLocationDoesNotStopCleanup() throws Exception {
    Path staging = theirs.resolve(".beamsave-staging-20261130T021500-4244-0");
    plantStaging(staging, "run0");
    Nobody.nest(theirs, 3000);
    try {
      Cli cleanup = Cli.run("cleanup", "--at", at, "--yes");
      assertThat(cleanup.exit()).as(cleanup.err()).isZero();
      assertThat(staging).doesNotExist();
    } finally {
      LeftoversTest.unnest(theirs, new byte[] {'d'});
    }
  }
}

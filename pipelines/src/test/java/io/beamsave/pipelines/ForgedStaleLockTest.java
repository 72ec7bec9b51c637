package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A local user (uid 65534) who may write where root's nightly save puts its image (a directory
 * of mode 1777, or one they own) forges what a killed save leaves: an unlocked {@code
 * x.bsave.lock} naming a staging directory with a matching run id, inside which they keep
 * swapping a subdirectory for a link to a directory of root's that they cannot write. The lock
 * is the user's, so root's save obeys nothing it says: no staging it names is removed, beside it
 * or anywhere else; the victim keeps every file in every round and every save succeeds. (A
 * lock of the save's own user names staging beside itself only, removed beneath the lock
 * directory's handle: ImageLockTest.)
 */
class ForgedStaleLockTest {
  @TempDir Path tmp;
  Path library;
  Path victim;
  TreeSnapshot victimBefore;

  @BeforeEach
  void setUp() throws Exception {
    Nobody.assumeRootWithSetpriv();
    Nobody.root("chmod 0755 '" + tmp + "'");
    library = Files.createDirectories(tmp.resolve("lib"));
    Files.writeString(library.resolve("a.txt"), "a");
    Files.createDirectories(library.resolve("d"));
    Files.writeString(library.resolve("d/b.txt"), "b");
    victim = Files.createDirectories(tmp.resolve("victim"));
    for (int i = 0; i < 500; i++) {
      Files.writeString(victim.resolve(String.format("f%03d", i)), "root's " + i);
    }
    Files.createDirectories(victim.resolve("deep"));
    Files.writeString(victim.resolve("deep/x"), "root's deep file");
    Nobody.root("chmod -R go-w '" + victim + "'");
    victimBefore = TreeSnapshot.of(victim);
  }

  /** The image directories a user may write in: root's with mode 1777, and one of theirs. */
  List<Path> imageDirs(String name) throws Exception {
    Path sticky = Files.createDirectories(tmp.resolve(name + "-sticky"));
    Nobody.root("chmod 1777 '" + sticky + "'");
    return List.of(sticky, Nobody.owns(tmp.resolve(name + "-theirs")));
  }

  /**
   * As the user: staging directory {@code staging} holding run id {@code run} and {@code sub}
   * (files of the victim's names), and beside image {@code x.bsave} in {@code dir} an unlocked
   * lock naming them.
   */
  static void forge(Path dir, Path staging, String run) throws Exception {
    as("set -e; mkdir -p '" + staging + "/sub'; printf '%s' " + run + " > '" + staging
        + "/run'; cd '" + staging + "/sub'; for i in $(seq -w 0 499); do : > f$i; done;"
        + " mkdir deep; : > deep/x");
    forgeLock(dir, staging, run);
  }

  /** As the user: an unlocked lock beside {@code dir/x.bsave} naming {@code staging}. */
  static void forgeLock(Path dir, Path staging, String run) throws Exception {
    as("printf 'kind=save\\npid=4242\\nhost=here\\nstarted=2026-11-30T02:15:00Z\\n"
        + "image=" + dir.resolve("x.bsave") + "\\nstaging=" + staging + "\\nrun=" + run
        + "\\n' > '" + dir.resolve("x.bsave.lock") + "'");
  }

  static void as(String script) throws Exception {
    Nobody.Ran r = Nobody.sh(script);
    assertThat(r.exit()).as(script + ": " + r.out() + r.err()).isZero();
  }

  /** Saves {@code dir/x.bsave} as root while the user swaps {@code swapped} for the victim. */
  Cli saveWhileSwapping(Path dir, Path swapped, List<String> said) throws Exception {
    try (Nobody.Act act = Nobody.start(tmp, "swap", swapped, victim)) {
      Cli save = Cli.run("save", "--library", library, "--image", dir.resolve("x.bsave"));
      said.add(act.stop() + "; save said " + save.err());
      return save;
    }
  }

  @Test
  void aForgedLockNamingAStagingElsewhereIsNotObeyedAndTheSaveSucceeds()
      throws Exception {
    List<String> said = new ArrayList<>();
    for (Path dir : imageDirs("images")) {
      for (int round = 0; round < 3; round++) {
        Path elsewhere = Nobody.owns(tmp.resolve("elsewhere-" + dir.getFileName() + round));
        Path staging = elsewhere.resolve(".beamsave-staging-20261130T021500-4242-" + round);
        forge(dir, staging, "run" + round);
        Cli save = saveWhileSwapping(dir, staging.resolve("sub"), said);
        String as = dir + " round " + round + ": " + said.get(said.size() - 1);
        assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as("the victim, %s", as).isNull();
        assertThat(save.exit()).as(as).isZero();
        // The lock is the user's: what it names is theirs, never removed on its word.
        assertThat(save.err()).as(as).doesNotContain("removed what a killed");
        assertThat(staging.resolve("run")).as("not the save's to remove, %s", as).exists();
        Cli.ok("verify", "--image", dir.resolve("x.bsave"), "--quiet");
      }
    }
  }

  @Test
  void aForgedLockNamingAStagingBesideItIsNotObeyedAndTheVictimIsWhole()
      throws Exception {
    List<String> said = new ArrayList<>();
    int swaps = 0;
    for (Path dir : imageDirs("images")) {
      for (int round = 0; round < 4; round++) {
        Path staging = dir.resolve(".beamsave-staging-20261130T021500-4242-" + round);
        forge(dir, staging, "run" + round);
        Cli save = saveWhileSwapping(dir, staging.resolve("sub"), said);
        String as = dir + " round " + round + ": " + said.get(said.size() - 1);
        swaps += Integer.parseInt(said.get(said.size() - 1).replaceAll("(?s).*swaps (\\d+).*",
            "$1"));
        assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as("the victim, %s", as).isNull();
        assertThat(save.exit()).as(as).isZero();
        assertThat(save.err()).as(as).doesNotContain("removed what a killed");
        assertThat(staging.resolve("run")).as("the user's, left: %s", as).exists();
        Cli.ok("verify", "--image", dir.resolve("x.bsave"), "--quiet");
      }
    }
    assertThat(swaps).as("the race was run: %s", said).isPositive();
  }

  @Test
  void oddThingsByALocksNameNeitherHangNorReachPastTheImageDirectory() throws Exception {
    Path victimFile = victim.resolve("f000");
    for (Path dir : imageDirs("odd")) {
      Path lock = dir.resolve("x.bsave.lock");
      Path image = dir.resolve("x.bsave");
      // A FIFO: never opened to block, never taken for a lock to read.
      as("mkfifo '" + lock + "'");
      Cli fifo = Cli.run("save", "--library", library, "--image", image, "--quiet");
      if (fifo.exit() != 0) {
        BadInputTest.assertOneLineError(fifo, "x.bsave");
      }
      Nobody.root("rm -f '" + lock + "'");
      // A huge lock: read no further than a lock can be long.
      as("truncate -s 10G '" + lock + "'");
      Cli.ok("save", "--library", library, "--image", image, "--quiet");
      assertThat(lock).as("the killed run's lock was replaced by the save's and removed")
          .doesNotExist();
      // A link to root's file: never followed, never written through.
      as("ln -s '" + victimFile + "' '" + lock + "'");
      Cli linked = Cli.run("save", "--library", library, "--image", image, "--quiet");
      if (linked.exit() != 0) {
        BadInputTest.assertOneLineError(linked, "x.bsave");
      }
      Nobody.root("rm -f '" + lock + "'");
      // A staging that is a link to root's directory, named by a forged lock.
      Path staging = dir.resolve(".beamsave-staging-20261130T021500-4242-9");
      as("ln -s '" + victim + "' '" + staging + "'");
      forgeLock(dir, staging, "run9");
      Cli.ok("save", "--library", library, "--image", image, "--quiet");
      assertThat(Files.isSymbolicLink(staging)).as("left as the link it is").isTrue();
      Nobody.root("rm -f '" + staging + "'");
      // A hard link in a forged staging to a file of root's (made as root: the kernel refuses
      // the user, fs.protected_hardlinks): the name goes, the file stays.
      Path beside = dir.resolve(".beamsave-staging-20261130T021500-4242-8");
      forge(dir, beside, "run8");
      Nobody.root("ln '" + victimFile + "' '" + beside + "/sub/hard'");
      Cli.ok("save", "--library", library, "--image", image, "--quiet");
      assertThat(beside.resolve("sub/hard")).as("the user's lock is not obeyed").exists();
      assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as("the victim after %s", dir)
          .isNull();
      assertThat(Files.exists(lock, LinkOption.NOFOLLOW_LINKS)).isFalse();
    }
  }

  @Test
  void aForgedLockNamingALiveRunsStagingDoesNotHaveTheNextSaveRemoveIt() throws Exception {
    Path dir = imageDirs("live").get(0);
    Path staging = dir.resolve(".beamsave-staging-20261130T021500-777-abcdef");
    try (io.beamsave.pipelines.locks.ImageLock live = io.beamsave.pipelines.locks.ImageLock
        .acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(dir.resolve("live.bsave").toString()), staging.toString(),
            null)) {
      Files.writeString(staging.resolve("listing"), "the live save's listing");
      Nobody.Ran read = Nobody.sh("cat '" + dir.resolve("live.bsave.lock") + "'");
      Properties said = new Properties();
      said.load(new java.io.StringReader(read.out()));
      assertThat(said.getProperty("run")).as("the user reads the live lock").isNotBlank();
      forgeLock(dir, Path.of(said.getProperty("staging")), said.getProperty("run"));

      Cli save = Cli.run("save", "--library", library, "--image", dir.resolve("other.bsave"),
          "--quiet");

      assertThat(staging.resolve("listing")).as("the live save's staging; the other save said"
          + " %s", save.err()).exists();
    }
  }

  @Test
  void aForgedStagingNestedThousandsDeepNeitherStopsTheSaveNorCrashesIt() throws Exception {
    Path dir = imageDirs("deep").get(1);
    Path staging = dir.resolve(".beamsave-staging-20261130T021500-4242-7");
    forge(dir, staging, "run7");
    Nobody.nest(staging, 3000);
    try {
      Cli save = Cli.run("save", "--library", library, "--image", dir.resolve("x.bsave"),
          "--quiet");
      assertThat(save.exit()).as(save.err()).isZero();
      // The user's lock is not obeyed: their tree stays, and the save goes on.
      assertThat(staging.resolve("run")).exists();
    } finally {
      if (Files.exists(staging)) {
        LeftoversTest.unnest(staging, new byte[] {'d'});
      }
    }
  }
}

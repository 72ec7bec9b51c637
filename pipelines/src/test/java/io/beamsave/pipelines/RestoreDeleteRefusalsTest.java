package io.beamsave.pipelines;

import static io.beamsave.pipelines.BadInputTest.assertOneLineError;
import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code restore --delete} refuses before it touches anything, each in one line: {@code /}
 * (even in a dry run), the root of a mounted file system reached through a link (a link someone
 * re-pointed must not empty a file system), a target that holds anything without {@code
 * --overwrite}; and what a dry run of it says: the first 20 entries it would remove and how many
 * more, every one of them with {@code --json}.
 */
class RestoreDeleteRefusalsTest {
  @TempDir Path tmp;
  Path library;
  Path image;

  @BeforeEach
  void setUp() throws Exception {
    library = Files.createDirectories(tmp.resolve("lib"));
    Files.writeString(library.resolve("a.txt"), "a");
    Files.createDirectories(library.resolve("d"));
    Files.writeString(library.resolve("d/b.txt"), "b");
    image = tmp.resolve("lib.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
  }

  @Test
  void deleteIntoTheRootDirectoryIsRefusedEvenInADryRun() {
    // A dry run only: a restore that went on would empty this machine.
    String refusal = "refusing --delete into /: it would remove from the whole system what the"
        + " image does not hold; add --no-preserve-root if that is what you mean";
    // The stronger reason first, also where --overwrite was not given.
    Cli dry = Cli.run("restore", image, "--target", "/", "--delete", "--dry-run");
    assertThat(dry.exit()).isEqualTo(1);
    assertOneLineError(dry, refusal);
    assertThat(dry.out()).doesNotContain("would remove");
    Cli overwriting = Cli.run("restore", image, "--target", "/", "--delete", "--overwrite",
        "--dry-run");
    assertThat(overwriting.exit()).isEqualTo(1);
    assertOneLineError(overwriting, refusal);
    assertThat(overwriting.out()).doesNotContain("would remove");
  }

  @Test
  void aMountRootReachedThroughALinkIsRefusedButNamedItselfOrWithNoPreserveRootIsEmptied()
      throws Exception {
    Nobody.assumeRootWithSetpriv();
    Path mnt = Files.createDirectories(tmp.resolve("mnt"));
    Nobody.root("mount -t tmpfs beamsave-refusals '" + mnt + "'");
    try {
      Path link = Files.createSymbolicLink(tmp.resolve("link"), mnt);
      Files.writeString(mnt.resolve("stale"), "on the mount");
      TreeSnapshot before = TreeSnapshot.of(mnt);

      Cli refused = Cli.run("restore", image, "--target", link, "--delete", "--overwrite");
      assertOneLineError(refused, "refusing --delete into " + link + ": it leads through a link"
          + " to " + mnt + ", the root of a mounted file system; name " + mnt + " itself, or"
          + " add --no-preserve-root");
      assertThat(TreeSnapshot.of(mnt).diff(before)).as("nothing is written").isNull();
      assertOneLineError(Cli.run("restore", image, "--target", link, "--delete", "--overwrite",
          "--dry-run"), "refusing --delete into " + link);

      Cli.ok("restore", image, "--target", mnt, "--delete", "--overwrite", "--quiet");
      assertThat(mnt.resolve("stale")).doesNotExist();
      assertThat(mnt.resolve("d/b.txt")).hasContent("b");

      Files.writeString(mnt.resolve("stale"), "on the mount again");
      Cli.ok("restore", image, "--target", link, "--delete", "--overwrite",
          "--no-preserve-root", "--quiet");
      assertThat(mnt.resolve("stale")).doesNotExist();
      assertThat(mnt.resolve("a.txt")).hasContent("a");
    } finally {
      Nobody.root("umount '" + mnt + "'");
    }
  }

  @Test
  void deleteIntoATargetThatHoldsAnythingNeedsOverwrite() throws Exception {
    Path target = Files.createDirectories(tmp.resolve("target"));
    Files.writeString(target.resolve("mine"), "the operator's");
    TreeSnapshot before = TreeSnapshot.of(target);
    assertOneLineError(Cli.run("restore", image, "--target", target, "--delete"),
        "target " + target + " is not empty; use --overwrite to restore into it");
    assertOneLineError(Cli.run("restore", image, "--target", target, "--delete", "--dry-run"),
        "is not empty; use --overwrite");
    assertThat(TreeSnapshot.of(target).diff(before)).isNull();
    // An empty one needs nothing more.
    Path empty = Files.createDirectories(tmp.resolve("empty"));
    Cli.ok("restore", image, "--target", empty, "--delete", "--quiet");
    assertThat(empty.resolve("d/b.txt")).hasContent("b");
  }

  @Test
  void aDryRunNamesTheFirstTwentyAndCountsTheRestAndJsonNamesEveryOne() throws Exception {
    Path target = Files.createDirectories(tmp.resolve("target"));
    for (int i = 0; i < 50; i++) {
      Files.writeString(target.resolve(String.format("stale%02d", i)), "stale");
    }
    Files.createDirectories(target.resolve("d/old/older"));
    Files.writeString(target.resolve("d/old/older/x"), "x");
    Files.writeString(target.resolve("d/old/y"), "y");
    TreeSnapshot before = TreeSnapshot.of(target);

    Cli dry = Cli.ok("restore", image, "--target", target, "--delete", "--overwrite",
        "--dry-run");

    // Named after the count, indented, one per line.
    List<String> named = dry.out().lines().filter(l -> l.startsWith("  ")
        && !l.startsWith("  ... and ")).toList();
    assertThat(named).hasSize(20).allSatisfy(l -> assertThat(l).doesNotContain("cannot"));
    assertThat(dry.out()).contains("would remove 54 entries the image does not hold")
        .contains("  ... and 34 more (--json lists every one)")
        .contains("dry run: nothing was written");
    assertThat(dry.out() + dry.err()).doesNotContain("cannot remove");

    Cli json = Cli.ok("restore", image, "--target", target, "--delete", "--overwrite",
        "--dry-run", "--json");
    List<String> removals = json.out().lines().filter(l -> l.contains("\"type\":\"removal\""))
        .toList();
    assertThat(removals).hasSize(54).allSatisfy(l -> assertThat(l).contains("\"dryRun\":true"));
    assertThat(removals).anySatisfy(l -> assertThat(l).contains("\"d/old/older/x\""))
        .anySatisfy(l -> assertThat(l).contains("\"stale49\""));
    assertThat(json.out()).contains("\"wouldRemove\":54");
    assertThat(TreeSnapshot.of(target).diff(before)).as("a dry run writes nothing").isNull();
  }
}

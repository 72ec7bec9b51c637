package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Root's save into a directory a local user (uid 65534) may write, as root's of mode 1777 or
 * their own: the names the save gives its working files there (the partial image, the staging
 * directory) are the user's to take or replace while it runs. Nothing the save writes, or
 * removes when it ends, may land outside the image's directory.
 */
class SaveBesideAWriterTest {
  @TempDir Path tmp;
  Path library;
  Path victim;
  Path victimFile;
  TreeSnapshot victimBefore;

  @BeforeEach
  void setUp() throws Exception {
    Nobody.assumeRootWithSetpriv();
    Nobody.root("chmod 0755 '" + tmp + "'");
    library = Files.createDirectories(tmp.resolve("lib"));
    Trees.tinyFiles(library, 2000);
    Trees.mixedData(library, 4 << 20);
    victim = Files.createDirectories(tmp.resolve("victim"));
    victimFile = Files.writeString(victim.resolve("passwd"), "root:x:0:0:root:/root:/bin/sh\n");
    Files.createDirectories(victim.resolve("lib/deep"));
    Files.writeString(victim.resolve("lib/listing"), "root's, by the name of a listing");
    Files.writeString(victim.resolve("lib/deep/kept"), "root's");
    Nobody.root("chmod -R go-w '" + victim + "'");
    victimBefore = TreeSnapshot.of(victim);
  }

  List<Path> imageDirs() throws Exception {
    Path sticky = Files.createDirectories(tmp.resolve("images-sticky"));
    Nobody.root("chmod 1777 '" + sticky + "'");
    return List.of(sticky, Nobody.owns(tmp.resolve("images-theirs")));
  }

  @Test
  void aLinkPlantedAtThePartialImagesNameIsNeverWrittenThrough() throws Exception {
    for (Path dir : imageDirs()) {
      Cli save;
      List<String> acted;
      try (Nobody.Act act = Nobody.start(tmp, "plant", dir.resolve("x.bsave.partial"),
          victimFile)) {
        save = Cli.run("save", "--library", library, "--image", dir.resolve("x.bsave"),
            "--quiet");
        acted = act.stop();
      }
      String as = dir + ": the user " + acted + "; save exited " + save.exit() + " saying "
          + save.err() + "; x.bsave is a link: " + Files.isSymbolicLink(dir.resolve("x.bsave"));
      assertThat(victimFile).as("root's file, %s", as)
          .hasContent("root:x:0:0:root:/root:/bin/sh\n");
      assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as(as).isNull();
      if (save.exit() == 0) {
        assertThat(Files.isSymbolicLink(dir.resolve("x.bsave"))).as(as).isFalse();
        Cli.ok("verify", "--image", dir.resolve("x.bsave"), "--quiet");
      }
    }
  }

  @Test
  void aStagingSwappedForALinkWhileTheSaveRunsIsNeitherWrittenNorEmptiedThrough()
      throws Exception {
    Path dir = Nobody.owns(tmp.resolve("images-theirs"));
    List<String> said = new java.util.ArrayList<>();
    // The user must catch the staging while it exists: rounds until they have, a few at most.
    for (int round = 0; round < 10 && said.stream().noneMatch(l -> l.contains("swapped"));
        round++) {
      Cli save;
      List<String> acted;
      try (Nobody.Act act = Nobody.start(tmp, "swapnew", dir, ".beamsave-staging-", victim)) {
        save = Cli.run("save", "--library", library, "--image",
            dir.resolve("x" + round + ".bsave"), "--quiet");
        acted = act.stop();
      }
      String as = "the user " + acted + "; save exited " + save.exit() + " saying " + save.err();
      said.add(as);
      assertThat(victim.resolve("lib/deep/kept")).as(as).exists();
      assertThat(victimFile).as(as).exists();
      assertThat(TreeSnapshot.of(victim).diff(victimBefore)).as(as).isNull();
    }
    assertThat(said).as("the staging was swapped").anyMatch(l -> l.contains("swapped"));
  }
}

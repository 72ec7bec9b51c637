package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code restore --delete --overwrite} leaves, and says it left: what is in a directory
 * the save could not wholly list (what the image lacks there may be what the save could not
 * read), and what is on another file system in the target (a tmpfs mounted where the image
 * records an empty directory, as {@code save -x} does; a bind mount at a name the image lacks;
 * a mount at a directory the save could not list). Root only: it mounts.
 */
class RestoreDeleteStaysTest {
  @TempDir Path tmp;
  Path library;
  final List<Path> mounts = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    Nobody.assumeRootWithSetpriv();
    library = Files.createDirectories(tmp.resolve("lib")).toRealPath();
    Files.writeString(library.resolve("a.txt"), "a");
    Files.createDirectories(library.resolve("mnt"));
    Files.createDirectories(library.resolve("closed"));
    Files.writeString(library.resolve("closed/inside.txt"), "hidden");
  }

  @AfterEach
  void unmount() throws Exception {
    for (int i = mounts.size() - 1; i >= 0; i--) {
      Nobody.root("umount '" + mounts.get(i) + "'");
    }
    if (library != null && Files.exists(library.resolve("closed"))) {
      Nobody.root("chmod 0755 '" + library.resolve("closed") + "'");
    }
  }

  void mount(String how, Path at) throws Exception {
    Files.createDirectories(at);
    Nobody.root("mount " + how + " '" + at + "'");
    mounts.add(at);
  }

  /** What {@code root} holds, its top's own metadata aside (a restore sets it). */
  static Map<String, String> inside(Path root) throws Exception {
    Map<String, String> m = new TreeMap<>(TreeSnapshot.of(root).entries());
    m.remove(".");
    return m;
  }

  /** The library saved by a root that cannot read {@code closed} (mode 000): exit 3. */
  Path savedWithoutClosed(String... more) throws Exception {
    Nobody.root("chmod 000 '" + library.resolve("closed") + "'");
    Path image = tmp.resolve("lib.bsave");
    List<Object> args = new ArrayList<>(List.of("save", "--library", library, "--image", image,
        "--skip-unreadable", "--quiet"));
    args.addAll(List.of(more));
    SkipUnreadableTest.Run save = SkipUnreadableTest.beamsave(args.toArray());
    assertThat(save.exit()).as(save.err()).isEqualTo(3);
    assertThat(Cli.ok("list", "--image", image).out()).containsPattern("(?m)^d\\?.* closed$");
    return image;
  }

  @Test
  void whatTheTargetHoldsInADirectoryTheSaveCouldNotListIsKeptAndNamed() throws Exception {
    Path image = savedWithoutClosed();
    Path target = Files.createDirectories(tmp.resolve("target"));
    Files.createDirectories(target.resolve("closed/more"));
    Files.writeString(target.resolve("closed/inside.txt"), "the real secret");
    Files.writeString(target.resolve("closed/more/x"), "x");
    Files.writeString(target.resolve("stale.txt"), "not in the image");

    Cli restore = Cli.run("restore", image, "--target", target, "--delete", "--overwrite");

    assertThat(restore.exit()).as(restore.err()).isZero();
    assertThat(target.resolve("closed/inside.txt")).hasContent("the real secret");
    assertThat(target.resolve("closed/more/x")).hasContent("x");
    assertThat(target.resolve("stale.txt")).doesNotExist();
    assertThat(target.resolve("a.txt")).hasContent("a");
    assertThat(restore.out()).contains("removed 1 entry the image does not hold, e.g."
        + " stale.txt");
    assertThat(restore.err()).contains("beamsave: warning: --delete kept 2 entries in"
        + " directories the save could not wholly list (marked d? in 'list'), which the image"
        + " may lack only because the save could not read them, e.g. closed/inside.txt");
  }

  @Test
  void aMountPointTheImageRecordsAsAnEmptyDirectoryKeepsWhatIsMountedAndIsNamed()
      throws Exception {
    mount("-t tmpfs beamsave-lib", library.resolve("mnt"));
    Files.writeString(library.resolve("mnt/on-the-mount"), "not saved with -x");
    Path image = tmp.resolve("x.bsave");
    Cli.ok("save", "--library", library, "--image", image, "-x", "--quiet");
    assertThat(Cli.ok("list", "--image", image).out()).contains("mnt")
        .doesNotContain("on-the-mount");
    Path target = Files.createDirectories(tmp.resolve("target"));
    Path mnt = target.resolve("mnt");
    mount("-t tmpfs beamsave-target", mnt);
    Files.createDirectories(mnt.resolve("y"));
    Files.writeString(mnt.resolve("x"), "the mounted file system's");
    Files.writeString(mnt.resolve("y/z"), "the mounted file system's");
    Map<String, String> mounted = inside(mnt);
    Files.writeString(target.resolve("stale.txt"), "not in the image");

    Cli restore = Cli.run("restore", image, "--target", target, "--delete", "--overwrite");

    assertThat(restore.exit()).as(restore.err()).isZero();
    assertThat(inside(mnt)).isEqualTo(mounted);
    assertThat(target.resolve("stale.txt")).doesNotExist();
    assertThat(restore.err()).contains("beamsave: warning: --delete left 1 mount point as it is"
        + " (it stays on the target's file system): " + mnt);
  }

  @Test
  void aBindMountAtANameTheImageLacksIsLeftWithWhatItShowsAndNamed() throws Exception {
    Path image = tmp.resolve("plain.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
    Files.createDirectories(elsewhere.resolve("sub"));
    Files.writeString(elsewhere.resolve("precious"), "root's");
    Files.writeString(elsewhere.resolve("sub/deep"), "root's");
    TreeSnapshot before = TreeSnapshot.of(elsewhere);
    Path target = Files.createDirectories(tmp.resolve("target"));
    Path bound = target.resolve("holder/bound");
    mount("--bind '" + elsewhere + "'", bound);
    Files.writeString(target.resolve("holder/stale"), "not in the image");

    Cli restore = Cli.run("restore", image, "--target", target, "--delete", "--overwrite");

    assertThat(restore.exit()).as(restore.err()).isZero();
    assertThat(TreeSnapshot.of(elsewhere).diff(before)).isNull();
    assertThat(target.resolve("holder/stale")).as("beside the mount point").doesNotExist();
    assertThat(target.resolve("holder")).as("what holds a mount point stays").isDirectory();
    assertThat(restore.err()).contains("beamsave: warning: --delete left 1 mount point as it is"
        + " (it stays on the target's file system): " + bound);
  }

  @Test
  void aMountAtADirectoryTheSaveCouldNotListIsLeftWhole() throws Exception {
    Path image = savedWithoutClosed();
    Path target = Files.createDirectories(tmp.resolve("target"));
    Path closed = target.resolve("closed");
    mount("-t tmpfs beamsave-closed", closed);
    Files.createDirectories(closed.resolve("d"));
    Files.writeString(closed.resolve("d/f"), "the mounted file system's");
    Map<String, String> mounted = inside(closed);

    Cli restore = Cli.run("restore", image, "--target", target, "--delete", "--overwrite");

    assertThat(restore.exit()).as(restore.err()).isZero();
    assertThat(inside(closed)).isEqualTo(mounted);
    assertThat(restore.err()).contains("--delete left 1 mount point as it is (it stays on the"
        + " target's file system): " + closed);
  }
}

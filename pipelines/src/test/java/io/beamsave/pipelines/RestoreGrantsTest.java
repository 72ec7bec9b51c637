package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Meta;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restore as root grants an image nothing it was not asked for: whoever may write where
 * images are kept can put one there that holds a set-user-ID binary of another user's with
 * {@code cap_setuid}, {@code security.}/{@code trusted.} attributes, {@code /dev/mem} made
 * 0666, an owner name that calls uid 1000 {@code root}, or an ACL that says more than its
 * mode. Each kind is left out with one warning naming its flag, and comes back with that flag
 * alone or with {@code --trust-image}; a restore by another user never sets a set-id bit; and a
 * file an image puts beneath a link of its own (or beneath one planted in the target) is never
 * written through it. Root only, with setcap, setfattr and getfacl.
 */
class RestoreGrantsTest {
  @TempDir Path tmp;
  Path library;
  Path image;

  @BeforeEach
  void setUp() throws Exception {
    Nobody.assumeRootWithSetpriv();
    assumeThat(Nobody.root("for t in setcap getcap setfattr getfattr getfacl; do command -v $t"
        + " || true; done").out().lines().count())
        .as("setcap, getcap, setfattr, getfattr and getfacl").isEqualTo(5);
    Nobody.root("chmod 0755 '" + tmp + "'");
    library = Files.createDirectories(tmp.resolve("lib"));
    Nobody.root("cd '" + library + "' && mkdir bin dev && cp /bin/true bin/suid"
        + " && echo plain > plain.txt && chown 1000:1000 bin/suid && chmod 04755 bin/suid"
        + " && setcap cap_setuid+ep bin/suid && setfattr -n security.beamsave -v s bin/suid"
        + " && setfattr -n trusted.beamsave -v t bin/suid && mknod -m 0666 dev/mem c 1 1");
    image = tmp.resolve("lib.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
  }

  /** What a restore into {@code target} made of what grants something. */
  static String granted(Path target) throws Exception {
    return Nobody.root("cd '" + target + "' && stat -c '%a %u:%g' bin/suid"
        + " && getcap bin/suid | sed 's/^bin.suid[ =]*/cap: /'"
        + " && getfattr -h -d -m '^(security|trusted)\\.beamsave' --absolute-names bin/suid"
        + " 2>/dev/null | grep = || true; if [ -e dev/mem ]; then stat -c 'dev %F %t,%T %a'"
        + " dev/mem; fi").out();
  }

  Cli restore(String name, String... flags) {
    List<Object> args = new java.util.ArrayList<>(List.of("restore", image, "--target",
        tmp.resolve(name), "--quiet"));
    args.addAll(List.of(flags));
    return Cli.ok(args.toArray());
  }

  @Test
  void aDefaultRestoreGrantsNothingAndSaysSoOnceAKind() throws Exception {
    Cli restore = restore("default");
    Path target = tmp.resolve("default");
    assertThat(granted(target)).isEqualTo("755 1000:1000\n");
    assertThat(restore.err().lines().filter(l -> l.startsWith("beamsave: warning: ")).toList())
        .containsExactlyInAnyOrder(
            "beamsave: warning: devices of 1 entry not made unless asked: --restore-devices"
                + " (first: dev/mem)",
            "beamsave: warning: set-id bits of 1 entry cleared unless asked: --restore-setid"
                + " (first: bin/suid)",
            "beamsave: warning: file capabilities of 1 entry left out unless asked:"
                + " --restore-capabilities (first: bin/suid)",
            "beamsave: warning: trusted. and security. attributes of 1 entry left out unless"
                + " asked: --restore-system-xattrs (first: bin/suid)");
    assertThat(target.resolve("plain.txt")).hasContent("plain");
    // Nothing the restore made runs with another user's power, as another user sees it.
    Nobody.Ran setuid = Nobody.sh("cd '" + target + "' && for f in $(find . ! -type l); do"
        + " if test -u $f || test -g $f; then echo set-id: $f; fi; done; echo looked");
    assertThat(setuid.out()).isEqualTo("looked\n");
  }

  @Test
  void eachFlagGrantsItsKindAloneAndTrustImageGrantsAllSayingSo() throws Exception {
    restore("setid", "--restore-setid");
    assertThat(granted(tmp.resolve("setid"))).isEqualTo("4755 1000:1000\n");
    restore("caps", "--restore-capabilities");
    assertThat(granted(tmp.resolve("caps"))).isEqualTo("755 1000:1000\ncap: cap_setuid+ep\n"
        .replace("cap_setuid+ep", capOf(library.resolve("bin/suid"))));
    restore("xattrs", "--restore-system-xattrs");
    assertThat(granted(tmp.resolve("xattrs"))).isEqualTo("755 1000:1000\n"
        + "security.beamsave=\"s\"\ntrusted.beamsave=\"t\"\n");
    restore("devices", "--restore-devices");
    assertThat(granted(tmp.resolve("devices"))).isEqualTo("755 1000:1000\n"
        + "dev character special file 1,1 666\n");
    Cli trusting = restore("all", "--trust-image");
    assertThat(trusting.err()).contains("beamsave: note: trusting the image: set-id bits, file"
        + " capabilities, devices and trusted. and security. attributes are restored as saved")
        .doesNotContain("warning");
    assertThat(granted(tmp.resolve("all"))).isEqualTo(granted(library));
  }

  private static String capOf(Path file) throws Exception {
    return Nobody.root("getcap '" + file + "' | sed 's/^[^ =]*[ =]*//'").out().strip();
  }

  /** An image of {@code entries} (files of no bytes), written as whoever writes images may. */
  Path crafted(String name, List<Entry> entries) throws Exception {
    Path crafted = tmp.resolve(name);
    ImageWriter.appendShard(crafted, new byte[0], 0);
    try (ImageWriter w = ImageWriter.open(crafted)) {
      w.finish(new Catalog("crafted", "none", 0, 4096, 1 << 20, Entries.root(), entries,
          List.of()), Codecs.parse("none"));
    }
    return crafted;
  }

  static Meta named(String user, String group) {
    return new Meta(user.getBytes(StandardCharsets.US_ASCII),
        group.getBytes(StandardCharsets.US_ASCII), List.of(), 0);
  }

  @Test
  void aNameNeverMakesAFileRootsAndSetIdFollowsOnlyAnOwnerRestoredAsSaved() throws Exception {
    Path forged = crafted("forged.bsave", List.of(
        Entries.file("calls-1000-root", 0).withOwner(1000, 1000).withMode(04755)
            .withMeta(named("root", "root")),
        Entries.file("calls-1000-nobody", 0).withOwner(1000, 1000).withMode(04755)
            .withMeta(named("nobody", "nogroup"))));
    Path target = tmp.resolve("by-name");
    Cli restore = Cli.ok("restore", forged, "--target", target, "--owner-by-name",
        "--restore-setid", "--quiet");
    String made = Nobody.root("cd '" + target + "' && stat -c '%n %a %u:%g' calls-1000-root"
        + " calls-1000-nobody").out();
    assertThat(made).isEqualTo("calls-1000-root 4755 1000:1000\n"
        + "calls-1000-nobody 755 65534:65534\n");
    assertThat(restore.err()).contains("beamsave: warning: owner names of 1 entry kept as the"
        + " numbers saved: a name never gives an entry user or group 0 (first: calls-1000-root)")
        .contains("beamsave: warning: set-id bits of 1 entry cleared where the owner is not"
            + " restored as saved (first: calls-1000-nobody)");
  }

  @Test
  void anotherUsersRestoreNeverSetsASetIdBitAndSaysSo() throws Exception {
    Path scratch = Nobody.owns(tmp.resolve("scratch"));
    // Asked for or not: a user other than root cannot give the file its owner.
    for (String setid : List.of("", "--restore-setid")) {
      Path target = Nobody.owns(tmp.resolve("theirs" + setid));
      List<Object> args = new java.util.ArrayList<>(List.of("restore", image, "--target",
          target, "--quiet"));
      if (!setid.isEmpty()) {
        args.add(setid);
      }
      Nobody.Ran restore = Nobody.beamsave(scratch, args.toArray());
      assertThat(restore.exit()).as(restore.err()).isZero();
      assertThat(Nobody.root("stat -c '%a %u' '" + target.resolve("bin/suid") + "'").out())
          .as(setid).isEqualTo("755 65534\n");
      assertThat(restore.err()).as(setid).contains("beamsave: warning: set-id bits of 1 entry"
          + " cleared: restored by a user other than root, who cannot give the files their"
          + " owners (first: bin/suid)");
    }
  }

  /** Mode 0600, and an access ACL that lets everyone read and write. */
  static final byte[] LYING_ACL = HexFormat.of().parseHex("02000000" + "01000600ffffffff"
      + "04000000ffffffff" + "20000600ffffffff");

  @Test
  void anAclThatSaysMoreThanTheModeIsNarrowedToIt() throws Exception {
    Path lying = crafted("lying.bsave", List.of(Entries.file("secret", 0).withMode(0600)
        .withMeta(Meta.NONE.withXattrs(List.of(new Meta.Xattr(
            Meta.ACL_ACCESS.getBytes(StandardCharsets.US_ASCII), LYING_ACL))))));
    Nobody.root("chmod 0644 '" + lying + "'");
    assertThat(Cli.ok("list", "--image", lying).out()).containsPattern("(?m)^f +0600 .* secret$");
    Path target = tmp.resolve("narrowed");
    Cli.ok("restore", lying, "--target", target, "--quiet");
    assertThat(Nobody.root("stat -c %a '" + target.resolve("secret") + "' && getfacl -c '"
        + target.resolve("secret") + "'").out()).isEqualTo("600\nuser::rw-\ngroup::---\n"
        + "other::---\n\n");
    assertThat(Nobody.sh("cat '" + target.resolve("secret") + "'").exit()).isNotZero();
    boolean fuse = Files.exists(Path.of("/dev/fuse"))
        && Nobody.root("command -v fusermount || true").out().contains("fusermount");
    if (fuse) {
      Path at = Files.createDirectories(tmp.resolve("mnt"));
      try (MountTest.Mounted m = new MountTest.Mounted(at, new Object[] {lying,
          "--allow-other"})) {
        assertThat(Nobody.root("ls -l '" + at.resolve("secret") + "'").out())
            .startsWith("-rw-------");
        Nobody.Ran read = Nobody.sh("cat '" + at.resolve("secret") + "'");
        assertThat(read.exit()).isNotZero();
        assertThat(read.err()).contains("Permission denied");
      }
    }
  }

  @Test
  void aFileBeneathALinkOfTheImagesOwnIsNeverWrittenThroughIt() throws Exception {
    Path victim = Files.createDirectories(tmp.resolve("victim"));
    Files.writeString(victim.resolve("f"), "root's");
    io.beamsave.pipelines.restore.TreeSnapshot before =
        io.beamsave.pipelines.restore.TreeSnapshot.of(victim);
    Path linked = crafted("linked.bsave", List.of(Entries.link("a", victim.toString()),
        Entries.file("a/f", 0), Entries.file("a/new", 0)));
    Path fresh = tmp.resolve("fresh");
    Cli intoNothing = Cli.run("restore", linked, "--target", fresh, "--quiet");
    Path planted = Files.createDirectories(tmp.resolve("planted"));
    Files.createSymbolicLink(planted.resolve("a"), victim);
    Cli intoALink = Cli.run("restore", linked, "--target", planted, "--overwrite", "--delete",
        "--quiet");
    assertThat(io.beamsave.pipelines.restore.TreeSnapshot.of(victim).diff(before)).as(
        "root's directory; restores said %s and %s", intoNothing.err(), intoALink.err())
        .isNull();
    BadInputTest.assertOneLineError(intoNothing, "a");
    BadInputTest.assertOneLineError(intoALink, "a");
  }
}

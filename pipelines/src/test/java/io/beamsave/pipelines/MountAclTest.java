package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.beamsave.pipelines.MountTest.Mounted;
import io.beamsave.pipelines.MountTest.Ran;
import io.beamsave.testing.Entries;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Meta;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code beamsave mount --allow-other} refuses other users what the saved access ACLs refused
 * them, as the kernel did on the library: callers made with {@code setpriv} read through a real
 * FUSE mount and, for comparison, the library itself. Needs root, /dev/fuse, libfuse 2,
 * fusermount, setfacl, setfattr and setpriv.
 */
class MountAclTest {
  @TempDir static Path dir;
  static Path lib;
  static Path image;

  /** Owner of the library's files; 1234 is refused the secret; 2345's members the directory. */
  static final String OWNER = "--reuid=1500 --regid=1500 --clear-groups";

  static final String REFUSED = "--reuid=1234 --regid=1234 --clear-groups";
  static final String ANOTHER = "--reuid=1235 --regid=1235 --clear-groups";
  static final String IN_GROUP = "--reuid=1237 --regid=1237 --groups=2345";
  static final String ROOT = "--reuid=0 --regid=0 --clear-groups";

  @BeforeAll
  static void save() throws Exception {
    assumeThat(Dir.effectiveUid()).as("run as root").isZero();
    assumeThat(Files.exists(Path.of("/dev/fuse"))).as("/dev/fuse").isTrue();
    assumeThat(sh("command -v fusermount && command -v setfacl && command -v setpriv"
        + " && command -v setfattr").exit())
        .as("fusermount, setfacl, setpriv and setfattr installed").isZero();
    lib = dir.resolve("lib");
    // Other users reach the mount points beside the library, and the library.
    assertThat(sh("chmod 0755 '" + dir + "' && mkdir -m 0755 '" + lib + "' && cd '" + lib + "'"
        + " && echo 'not for 1234' > secret.txt && echo 'for everyone' > open.txt"
        + " && mkdir private && echo 'behind the directory' > private/inside.txt"
        + " && ln -s ../open.txt private/link && setfattr -n user.note -v kept secret.txt"
        + " && cp /bin/true true && chmod 0644 secret.txt open.txt private/inside.txt"
        + " && chmod 0755 private && chmod 0711 true && chown -hR 1500:1500 ."
        + " && setfacl -m u:1234:--- secret.txt && setfacl -m g:2345:--- private"
        + " && getfacl -c secret.txt private").out())
        .contains("user:1234:---").contains("group:2345:---");
    image = dir.resolve("acl.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--quiet");
  }

  static Ran sh(String script) throws Exception {
    return MountTest.run("sh", "-c", script);
  }

  /** {@code script} run in {@code at} by the caller setpriv's {@code options} make. */
  static Ran as(String options, Path at, String script) throws Exception {
    return sh("cd '" + at + "' && setpriv " + options + " sh -c '" + script + "' 2>&1");
  }

  /** The options the kernel shows for the mount at {@code at}. */
  static List<String> options(Path at) throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/mounts"))) {
      String[] f = line.split(" ");
      if (f[1].equals(at.toString())) {
        return List.of(f[3].split(","));
      }
    }
    throw new AssertionError("not mounted: " + at);
  }

  static Mounted mount(Object... args) throws Exception {
    Path at = Files.createDirectories(dir.resolve("mnt-" + System.nanoTime()));
    return new Mounted(at, args);
  }

  @Test
  void whomASavedAclRefusedIsRefusedThroughAMountOthersShare() throws Exception {
    try (Mounted m = mount(image, "--allow-other")) {
      assertThat(options(m.at)).contains("allow_other").doesNotContain("default_permissions");
      Ran refused = as(REFUSED, m.at, "cat secret.txt");
      assertThat(refused.exit()).isNotZero();
      assertThat(refused.out()).contains("Permission denied").doesNotContain("not for 1234");
      assertThat(as(ANOTHER, m.at, "cat secret.txt").out()).isEqualTo("not for 1234\n");
      assertThat(as(OWNER, m.at, "cat secret.txt").out()).isEqualTo("not for 1234\n");
      assertThat(as(REFUSED, m.at, "cat open.txt").out()).isEqualTo("for everyone\n");
      // The directory refuses 2345's members its names and everything beneath it.
      assertThat(as(IN_GROUP, m.at, "cat private/inside.txt").out())
          .contains("Permission denied").doesNotContain("behind");
      assertThat(as(IN_GROUP, m.at, "ls private").exit()).isNotZero();
      assertThat(as(IN_GROUP, m.at, "cd private").exit()).isNotZero();
      assertThat(as(ANOTHER, m.at, "cat private/inside.txt").out())
          .isEqualTo("behind the directory\n");
      assertThat(as(ROOT, m.at, "cat secret.txt private/inside.txt").out())
          .isEqualTo("not for 1234\nbehind the directory\n");
    }
  }

  /**
   * What each caller may do, as {@code 0} and {@code 1} per check: the same of either tree. A
   * name's stat is left out: a mount answers it for whoever knows the name (the operator's
   * guide says why).
   */
  static String answers(Path at) throws Exception {
    String checks = "for f in secret.txt open.txt private private/inside.txt true; do"
        + " for t in -r -x; do test $t $f && printf 1 || printf 0; done;"
        + " cat $f >/dev/null 2>&1 && printf 1 || printf 0; done;"
        + " for c in \"ls private\" \"cd private\" \"readlink private/link\" ./true"
        + " \"getfattr -d private/inside.txt\" \"getfattr -d secret.txt\"; do"
        + " ($c) >/dev/null 2>&1 && printf 1 || printf 0; done";
    List<String> out = new ArrayList<>();
    for (String caller : List.of(OWNER, REFUSED, ANOTHER, IN_GROUP, ROOT,
        "--reuid=1236 --regid=1500 --clear-groups", "--reuid=1238 --regid=2345 --groups=7")) {
      out.add(as(caller, at, checks).out());
    }
    return String.join(" ", out);
  }

  @Test
  void everyCallerMayDoThroughTheMountWhatTheLibraryLetItDo() throws Exception {
    String library = answers(lib);
    assertThat(library).contains("0").contains("1");
    try (Mounted m = mount(image, "--allow-other")) {
      assertThat(answers(m.at)).isEqualTo(library);
    }
  }

  @Test
  void aLocationSharedWithOthersChecksTheAclsOfTheImagesItOpens() throws Exception {
    Path store = Files.createDirectories(dir.resolve("store"));
    Files.copy(image, store.resolve("acl-20261201T010000Z.bsave"));
    try (Mounted m = mount(store, "--allow-other")) {
      assertThat(options(m.at)).doesNotContain("default_permissions");
      assertThat(as(REFUSED, m.at, "cat acl/latest/secret.txt").out())
          .contains("Permission denied");
      assertThat(as(REFUSED, m.at, "cat acl/latest/open.txt").out())
          .isEqualTo("for everyone\n");
      assertThat(as(ANOTHER, m.at, "cat acl/latest/secret.txt").out())
          .isEqualTo("not for 1234\n");
    }
  }

  @Test
  void aCraftedAclIsAnErrorForWhatItGuardsAndOneLine() throws Exception {
    Path crafted = dir.resolve("crafted.bsave");
    io.beamsave.transforms.image.ImageWriter.appendShard(crafted, new byte[0], 0);
    // A named user and no mask: no kernel keeps it, so nobody knows whom it lets in.
    byte[] noMask = java.util.HexFormat.of().parseHex("02000000" + "01000600ffffffff"
        + "02000000d2040000" + "04000500ffffffff" + "20000500ffffffff");
    Entry d = Entries.dir("d").withMeta(Meta.NONE.withXattrs(List.of(new Meta.Xattr(
        Meta.ACL_ACCESS.getBytes(java.nio.charset.StandardCharsets.US_ASCII), noMask))));
    try (io.beamsave.transforms.image.ImageWriter w =
        io.beamsave.transforms.image.ImageWriter.open(crafted)) {
      w.finish(new Catalog("crafted", "none", 0, 4096, 1 << 20, Entries.root(),
          List.of(d, Entries.file("d/f", 0), Entries.file("ok", 0)), List.of()),
          io.beamsave.transforms.codec.Codecs.parse("none"));
    }
    try (Mounted m = mount(crafted, "--allow-other")) {
      assertThat(as(ANOTHER, m.at, "cat ok").exit()).isZero();
      assertThat(as(ANOTHER, m.at, "cat d/f").out()).contains("Input/output error");
      assertThat(m.err.toString().lines().filter(l -> l.contains("not a POSIX access ACL")))
          .containsExactly("beamsave: mount: d/f: the saved ACL of 'd' is not a POSIX access"
              + " ACL: it has named entries and no mask");
    }
  }

  @Test
  void anImageWithoutAclsIsLeftToTheKernelsCheckOfTheModes() throws Exception {
    Path plain = dir.resolve("plain");
    assertThat(sh("mkdir -m 0755 '" + plain + "' && cd '" + plain + "' && echo mine > own.txt"
        + " && chmod 0600 own.txt && chown 1500:1500 own.txt").exit()).isZero();
    Path plainImage = dir.resolve("plain.bsave");
    Cli.ok("save", "--library", plain, "--image", plainImage, "--quiet");
    try (Mounted m = mount(plainImage, "--allow-other")) {
      assertThat(options(m.at)).contains("default_permissions", "allow_other");
      assertThat(as(REFUSED, m.at, "cat own.txt").out()).contains("Permission denied");
      assertThat(as(OWNER, m.at, "cat own.txt").out()).isEqualTo("mine\n");
    }
    // Only the mounting user reaches a mount not shared: the kernel's check is enough.
    try (Mounted m = mount(image)) {
      assertThat(options(m.at)).contains("default_permissions").doesNotContain("allow_other");
    }
  }
}

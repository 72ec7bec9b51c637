package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Everything a Linux filesystem holds of a tree comes back, as the system's own tools see it:
 * extended attributes in every namespace ({@code getfattr}), POSIX ACLs ({@code getfacl}), file
 * capabilities ({@code getcap}), hard links as links, FIFOs and devices with their numbers, and
 * owners; through a restore in this process and one in a pipeline, an incremental save, and a
 * restore of a link whose file is left out. Run as root (as CI runs): devices, {@code trusted.}
 * attributes and capabilities need it.
 */
class MetadataTest {
  @TempDir Path tmp;
  Path lib;

  static String sh(String script) throws IOException, InterruptedException {
    // setcap, getcap and mknod live in /usr/sbin, which a CI user's PATH may lack.
    Process p = new ProcessBuilder("sh", "-ec", "PATH=$PATH:/usr/sbin:/sbin\n" + script)
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(script + "\n" + out).isZero();
    return out;
  }

  /**
   * Whether this machine can build and read the tree: as root, with setfattr, setfacl and setcap
   * (Debian's attr, acl and libcap2-bin). CI installs them, and there a missing one fails.
   */
  static void assumeRootAndTools() throws Exception {
    assumeThat(Dir.effectiveUid()).as("run as root").isZero();
    boolean tools = new ProcessBuilder("sh", "-c", "PATH=$PATH:/usr/sbin:/sbin; command -v"
        + " setfattr && command -v setfacl && command -v setcap").start().waitFor() == 0;
    if (System.getenv("CI") == null) {
      assumeThat(tools).as("setfattr, setfacl and setcap installed").isTrue();
    }
  }

  @BeforeEach
  void tree() throws Exception {
    assumeRootAndTools();
    lib = Files.createDirectories(tmp.resolve("lib"));
    sh("cd '" + lib + "'\n"
        + "echo hello > a && ln a b && mkdir d && ln a d/c\n"
        + "echo x > f && setfattr -n user.color -v blue f && setfattr -n trusted.t -v tv f\n"
        + "setfattr -n user.empty f && setfattr -n user.bin -v 0x00ff00 f\n"
        + "touch acl && setfacl -m u:nobody:rwx,g:nogroup:r acl\n"
        + "mkdir acld && setfacl -d -m g:nogroup:rx acld && setfacl -m u:nobody:rx acld\n"
        + "cp /bin/true capbin && setcap cap_net_raw+ep capbin\n"
        + "mkfifo pipe && chmod 0620 pipe && mknod cdev c 1 3 && mknod bdev b 7 200\n"
        + "chown nobody:nogroup f pipe && ln -s f sl && setfattr -h -n trusted.sl -v s sl\n"
        + "setfattr -n user.top -v root .\n"
        + "touch -h -d '2001-02-03 04:05:06.123456789' sl pipe cdev bdev f a d acld .\n");
  }

  /** What the system's tools say of the tree at {@code root}, inode numbers aside. */
  static String metadata(Path root) throws Exception {
    String dump = sh("cd '" + root + "'\n"
        + "getfattr -R -h -d -m - . | sed '/^$/d'\n"
        + "getfacl -R -P . \n"
        + "getcap -r .\n"
        + "find . -printf '%p %y %m %u:%g %s %T@ %n\\n' | sort\n"
        + "stat -c '%n %F %t:%T' cdev bdev pipe\n");
    // The order of getfattr's and getfacl's walk is the directory's: sort within each record.
    return dump.lines().sorted().collect(Collectors.joining("\n"));
  }

  /** The names of the restored tree, grouped by inode: which are links of one another. */
  static TreeSet<String> linkGroups(Path root) throws Exception {
    Map<String, TreeSet<String>> byInode = new TreeMap<>();
    for (String line : sh("cd '" + root + "' && find . -type f -printf '%i %p\\n'").lines()
        .toList()) {
      String[] f = line.split(" ", 2);
      byInode.computeIfAbsent(f[0], k -> new TreeSet<>()).add(f[1]);
    }
    return byInode.values().stream().map(String::valueOf)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /** What {@code run} printed on standard error: the walk's warnings go there, as workers'. */
  static String stderrOf(Runnable run) {
    java.io.PrintStream before = System.err;
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    System.setErr(new java.io.PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      run.run();
    } finally {
      System.setErr(before);
    }
    return err.toString(StandardCharsets.UTF_8);
  }

  // The restores below are of images of a library this test made: trusted (--trust-image), so
  // that everything comes back; what an untrusted image is granted is RestoreGrantsTest's.

  @Test
  void everythingTheFilesystemHoldsComesBackInThisProcessAndInAPipeline() throws Exception {
    Path image = tmp.resolve("m.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--quiet");
    Catalog c = ImageReader.readCatalog(image);
    Map<String, Entry> byPath = c.entries().stream()
        .collect(Collectors.toMap(e -> e.path().toString(), e -> e));
    assertThat(byPath.get("b").type()).isEqualTo(EntryType.HARDLINK);
    assertThat(byPath.get("d/c").linkTarget().toString()).isEqualTo("a");
    assertThat(byPath.get("f").meta().user()).isEqualTo("nobody".getBytes());
    assertThat(c.fileCount()).as("a hard link's bytes are stored once").isEqualTo(4);
    String before = metadata(lib);
    assertThat(before).contains("security.capability", "system.posix_acl_access",
        "system.posix_acl_default", "trusted.t=\"tv\"", "user.bin=0sAP8A", "./pipe p 620");

    for (String pipeline : List.of("never", "always")) {
      Path out = tmp.resolve("out-" + pipeline);
      Cli r = Cli.ok("restore", "--trust-image", image, "--target", out, "--pipeline", pipeline, "--quiet");
      assertThat(r.err()).as("nothing was lost").doesNotContain("warning");
      assertThat(metadata(out)).as("restored " + pipeline).isEqualTo(before);
      assertThat(linkGroups(out)).isEqualTo(linkGroups(lib))
          .contains("[./a, ./b, ./d/c]");
    }
    Cli.ok("verify", "--image", image, "--quiet");
  }

  @Test
  void aTargetThatKeepsNoAttributesIsWarnedAboutOncePerKind() throws Exception {
    Path image = tmp.resolve("m.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--quiet");
    Path ramfs = Files.createDirectories(tmp.resolve("ramfs"));
    sh("mount -t ramfs beamsave-test '" + ramfs + "'");
    try {
      Path out = ramfs.resolve("out");
      Cli r = Cli.ok("restore", "--trust-image", image, "--target", out, "--quiet");
      assertThat(r.err().lines()).contains(
          "beamsave: warning: could not restore ACLs of 2 entries (the target's filesystem does"
              + " not keep them; first: " + out.resolve("acl") + ")",
          "beamsave: warning: could not restore user. extended attributes of 2 entries (the"
              + " target's filesystem does not keep them; first: " + out.resolve("f") + ")");
      // All else came back: the bytes, the links, the nodes.
      assertThat(linkGroups(out)).contains("[./a, ./b, ./d/c]");
      assertThat(sh("stat -c '%F %t:%T' '" + out + "/cdev' '" + out + "/pipe'"))
          .contains("character special file 1:3", "fifo");
    } finally {
      sh("umount '" + ramfs + "'");
    }
  }

  @Test
  void anIncrementalSaveKeepsWhatChangedOfTheMetadataAlone() throws Exception {
    Path full = tmp.resolve("full.bsave");
    Cli.ok("save", "--library", lib, "--image", full, "--quiet");
    // Only metadata changes: the files' bytes stay in the base, their attributes are new.
    sh("cd '" + lib + "' && setfattr -n user.color -v red f && setfacl -m u:nobody:r acl"
        + " && rm b && ln f b2");
    Path incremental = tmp.resolve("incr.bsave");
    Cli.ok("save", "--library", lib, "--image", incremental, "--base", full, "--quiet");
    Catalog c = ImageReader.readCatalog(incremental);
    assertThat(c.depth()).isEqualTo(1);
    Path out = tmp.resolve("out");
    Cli.ok("restore", "--trust-image", incremental, "--target", out, "--quiet");
    assertThat(metadata(out)).isEqualTo(metadata(lib));
    assertThat(linkGroups(out)).contains("[./a, ./d/c]", "[./b2, ./f]");
    Path consolidated = tmp.resolve("cons.bsave");
    Cli.ok("consolidate", incremental, "--to", consolidated, "--quiet");
    Path again = tmp.resolve("again");
    Cli.ok("restore", "--trust-image", consolidated, "--target", again, "--quiet");
    assertThat(metadata(again)).isEqualTo(metadata(lib));
  }

  @Test
  void aLinkWhoseFileIsLeftOutComesBackAsAFileWithItsBytes() throws Exception {
    sh("cd '" + lib + "' && ln a d/e");
    Path image = tmp.resolve("m.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--quiet");
    Path out = tmp.resolve("out");
    Cli.ok("restore", "--trust-image", image, "--target", out, "--include", "d/", "--quiet");
    assertThat(Files.readString(out.resolve("d/c"))).isEqualTo("hello\n");
    assertThat(Files.exists(out.resolve("a"))).isFalse();
    // The second link to the file left out is a link to the first, not a second copy.
    assertThat(linkGroups(out)).contains("[./d/c, ./d/e]");
    Path both = tmp.resolve("both");
    Cli.ok("restore", "--trust-image", image, "--target", both, "--include", "/a", "--include", "d/", "--quiet");
    assertThat(linkGroups(both)).contains("[./a, ./d/c, ./d/e]");
  }

  @Test
  void aFileOfManyAttributesSavesIntoAnImageThatReads() throws Exception {
    // Linux lists up to 64 KiB of names for one file: over a thousand short ones, on a
    // filesystem that holds them (tmpfs; ext4 keeps one block of them).
    Path many = Files.createDirectories(tmp.resolve("many"));
    sh("mount -t tmpfs beamsave-test '" + many + "'");
    try {
      sh("cd '" + many + "' && touch many && python3 -c \"import os\n"
          + "for i in range(1500): os.setxattr('many', 'user.a%d' % i, b'v')\"");
      Path image = tmp.resolve("many.bsave");
      Cli.ok("save", "--library", many, "--image", image, "--quiet");
      Path out = many.resolve("out");
      Cli.ok("restore", "--trust-image", image, "--target", out, "--quiet");
      assertThat(sh("getfattr -d '" + out + "/many' | grep -c user.a")).contains("1500");
    } finally {
      sh("umount '" + many + "'");
    }
  }

  @Test
  void aRestoreIntoADirectoryWithADefaultAclGivesBackTheModesSavedNotTheInheritedAcl()
      throws Exception {
    Path image = tmp.resolve("m.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--quiet");
    Path out = Files.createDirectories(tmp.resolve("acl-target"));
    sh("setfacl -d -m u:nobody:rwx '" + out + "'");
    Cli.ok("restore", "--trust-image", image, "--target", out.resolve("sub"), "--quiet");
    assertThat(metadata(out.resolve("sub"))).isEqualTo(metadata(lib));
    Cli.ok("restore", "--trust-image", image, "--target", out.resolve("sub"), "--overwrite", "--quiet");
    assertThat(metadata(out.resolve("sub"))).isEqualTo(metadata(lib));
  }

  @Test
  void aCraftedLinkToAFileTheImageDoesNotHoldIsRefusedAndLinksNothing() throws Exception {
    Path image = tmp.resolve("crafted.bsave");
    io.beamsave.transforms.image.ImageWriter.appendShard(image, new byte[0], 0);
    Entry link = new Entry(PathBytes.of("zz"), EntryType.HARDLINK,
        0, 0644, 0, 0, 1, 0, 1, 0, 1, 0, PathBytes.of("secret"),
        List.of());
    try (io.beamsave.transforms.image.ImageWriter w =
        io.beamsave.transforms.image.ImageWriter.open(image)) {
      w.finish(new Catalog("crafted", "none", 0, 4096, 1 << 20,
          io.beamsave.testing.Entries.root(), List.of(link), List.of()),
          io.beamsave.transforms.codec.Codecs.parse("none"));
    }
    Path out = Files.createDirectories(tmp.resolve("planted"));
    Files.writeString(out.resolve("secret"), "the operator's own");
    Cli r = Cli.run("restore", image, "--target", out, "--overwrite", "--quiet");
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err().strip()).isEqualTo("beamsave: error: cannot restore zz: it is a hard link"
        + " to secret, which is not a regular file of the image");
    assertThat(out.resolve("zz")).doesNotExist();
    for (String pipeline : List.of("never", "always")) {
      Cli v = Cli.run("verify", image, "--pipeline", pipeline, "--quiet");
      assertThat(v.exit()).isEqualTo(1);
      assertThat(v.err().strip()).isEqualTo("beamsave: error: " + image + ": entry zz: it is a"
          + " hard link to secret, which is not a regular file of the image");
    }
  }

  @Test
  void aNodeWhoseAttributeTheTargetRefusesFailsNamingItAndLeavesNothing() throws Exception {
    // A FIFO with an attribute larger than ext4 keeps in an inode's block, saved from tmpfs.
    Path small = Files.createDirectories(tmp.resolve("small"));
    sh("mount -t tmpfs beamsave-test '" + small + "'");
    Path image = tmp.resolve("big.bsave");
    try {
      sh("mkfifo '" + small + "/p' && setfattr -n trusted.big -v 0x" + "ab".repeat(8192)
          + " '" + small + "/p'");
      Cli.ok("save", "--library", small, "--image", image, "--quiet");
    } finally {
      sh("umount '" + small + "'");
    }
    Path out = tmp.resolve("out");
    Cli r = Cli.run("restore", "--restore-system-xattrs", image, "--target", out, "--quiet");
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err().strip()).startsWith("beamsave: error: cannot restore " + out + "/p")
        .doesNotContain("Directory not empty").doesNotContain("\n");
    assertThat(sh("find '" + out + "' -type d -name '.beamsave-*' | wc -l").strip())
        .isEqualTo("0");
  }

  @Test
  void aSocketIsSkippedWithAWarningAndTheRestIsSaved() throws Exception {
    Path socket = lib.resolve("sock");
    try (java.nio.channels.ServerSocketChannel s =
        java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
      s.bind(java.net.UnixDomainSocketAddress.of(socket));
      String err = stderrOf(() -> Cli.ok("save", "--library", lib, "--image",
          tmp.resolve("s.bsave"), "--quiet"));
      assertThat(err).contains("beamsave: warning: skipping socket " + socket
          + ": a socket is made by the program that listens on it, not restored");
    }
  }

  @Test
  void oneFileSystemKeepsAMountPointEmptyAndSaysSo() throws Exception {
    Path mnt = Files.createDirectories(lib.resolve("mnt"));
    sh("mount -t tmpfs beamsave-test '" + mnt + "' && echo inside > '" + mnt + "/x'");
    try {
      Path image = tmp.resolve("x.bsave");
      String err = stderrOf(() -> Cli.ok("save", "--library", lib, "--image", image, "-x",
          "--quiet"));
      assertThat(err).contains("not descending into " + mnt
          + ": another filesystem is mounted there (--one-file-system)");
      List<String> paths = ImageReader.readCatalog(image).entries().stream()
          .map(e -> e.path().toString()).toList();
      assertThat(paths).contains("mnt", "a").doesNotContain("mnt/x");
      Path all = tmp.resolve("all.bsave");
      Cli.ok("save", "--library", lib, "--image", all, "--quiet");
      assertThat(ImageReader.readCatalog(all).entries().stream()
          .map(e -> e.path().toString())).contains("mnt/x");
    } finally {
      sh("umount '" + mnt + "'");
    }
  }
}

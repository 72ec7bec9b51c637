package io.beamsave.transforms.image.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.fs.Dir;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PosixAcl} against the kernel: ACLs made with {@code setfacl} on files of a temporary
 * directory and read back through {@link Dir#xattr}, a {@code chmod}'s effect on them, and the
 * kernel's own answer to {@code access(2)} for callers {@code setpriv} makes. Needs setfacl and
 * an ACL-capable temporary directory; the access checks need root and setpriv.
 */
class PosixAclTest {
  @TempDir Path dir;

  static final byte[] ACCESS = Meta.ACL_ACCESS.getBytes(StandardCharsets.US_ASCII);

  @BeforeEach
  void tools() throws Exception {
    assumeThat(sh("command -v setfacl && command -v getfacl").exit).as("setfacl installed")
        .isZero();
    Files.writeString(dir.resolve("probe"), "");
    assumeThat(sh("setfacl -m u:1234:r '" + dir.resolve("probe") + "'").exit)
        .as("ACLs on the temporary directory's filesystem").isZero();
  }

  record Ran(int exit, String out) {}

  static Ran sh(String script) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("sh", "-c", script).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(1, TimeUnit.MINUTES)).isTrue();
    return new Ran(p.exitValue(), out);
  }

  /** ACLs for setfacl --set, each a turn of the access check. */
  static final List<String> ACLS = List.of(
      "u::rw-,g::r--,o::r--",
      "u::rw-,u:1234:---,g::r--,m::r--,o::r--",
      // A mask of nothing: the kernel consults the mode bits alone.
      "u::rw-,u:1234:rwx,g::r--,g:2345:r--,m::---,o::r--",
      "u::rw-,g::---,g:2345:r--,m::r--,o::r--",
      "u::r--,g::r-x,g:2345:---,g:2346:-w-,m::rwx,o::rwx",
      "u::---,u:1235:r-x,g::rw-,m::r-x,o::--x",
      "u::rwx,g::r--,g:2345:-wx,m::-w-,o::---",
      "u::---,g::---,o::---",
      "u::r-x,g::-w-,m::--x,o::r--",
      "u::rw-,u:1234:r--,u:1236:---,g::rwx,g:2345:r--,g:2346:-w-,m::rwx,o::---",
      "u::--x,u:1234:rwx,g::r--,m::rwx,o::-w-");

  /** The value the kernel keeps for file {@code name} of {@link #dir}, or null. */
  byte[] saved(String name) throws IOException {
    try (Dir d = Dir.open(dir)) {
      return d.xattr(name.getBytes(StandardCharsets.UTF_8), ACCESS);
    }
  }

  /** getfacl's entries, in order, on one line: what {@link PosixAcl#toString} shows. */
  String getfacl(String name) throws Exception {
    return String.join(",", sh("cd '" + dir + "' && getfacl -c -n -E '" + name + "'").out.strip()
        .lines().toList());
  }

  @Test
  void whatTheKernelKeepsParsesAndFormatsBackBitForBit() throws Exception {
    int i = 0;
    for (String acl : ACLS) {
      String name = "f" + i++;
      Files.writeString(dir.resolve(name), "");
      assertThat(sh("setfacl --set " + acl + " '" + dir.resolve(name) + "'").exit).isZero();
      byte[] value = saved(name);
      int mode = (Integer) Files.getAttribute(dir.resolve(name), "unix:mode");
      if (value == null) {
        // The kernel keeps no attribute for an ACL the mode bits say all of.
        assertThat(acl).doesNotContain("m::");
        assertThat(PosixAcl.ofMode(mode).toString()).isEqualTo(getfacl(name));
        continue;
      }
      PosixAcl parsed = PosixAcl.parse(value);
      assertThat(parsed.format()).as(acl).isEqualTo(value);
      assertThat(parsed.toString()).isEqualTo(getfacl(name));
      assertThat(parsed.mode()).as(acl).isEqualTo(mode & 0777);
      assertThat(parsed.isMinimal()).isFalse();
    }
    assertThat(i).isEqualTo(ACLS.size());
  }

  @Test
  void aMinimalAclIsTheModeBits() throws Exception {
    PosixAcl minimal = PosixAcl.parse(value(0x01, 6, -1, 0x04, 4, -1, 0x20, 0, -1));
    assertThat(minimal.isMinimal()).isTrue();
    assertThat(minimal.mode()).isEqualTo(0640);
    assertThat(minimal).isEqualTo(PosixAcl.ofMode(0100640));
    assertThat(minimal.withMode(0751).mode()).isEqualTo(0751);
    assertThat(minimal.withMode(0751).isMinimal()).isTrue();
  }

  @Test
  void chmodChangesTheAclAsWithModeSays() throws Exception {
    int[] modes = {0, 0640, 0755, 0701, 0070, 0777, 04750};
    int i = 0;
    for (String acl : ACLS) {
      String name = "c" + i;
      Files.writeString(dir.resolve(name), "");
      sh("setfacl --set " + acl + " '" + dir.resolve(name) + "'");
      byte[] before = saved(name);
      if (before == null) {
        continue;
      }
      int mode = modes[i++ % modes.length];
      assertThat(sh("chmod " + Integer.toOctalString(mode) + " '" + dir.resolve(name) + "'")
          .exit).isZero();
      PosixAcl chmodded = PosixAcl.parse(before).withMode(mode);
      assertThat(chmodded.format()).as(acl + " chmod " + Integer.toOctalString(mode))
          .isEqualTo(saved(name));
      assertThat(chmodded.mode()).isEqualTo(mode & 0777);
    }
  }

  /** Who asks the kernel: setpriv's options, and the groups the caller is in. */
  record Caller(String setpriv, int uid, int[] gids) {}

  static final List<Caller> CALLERS = List.of(
      new Caller("--reuid=1234 --regid=1234 --clear-groups", 1234, new int[] {1234}),
      new Caller("--reuid=1500 --regid=1500 --clear-groups", 1500, new int[] {1500}),
      new Caller("--reuid=1235 --regid=1235 --clear-groups", 1235, new int[] {1235}),
      new Caller("--reuid=1236 --regid=1501 --clear-groups", 1236, new int[] {1501}),
      new Caller("--reuid=1237 --regid=1237 --groups=2345", 1237, new int[] {1237, 2345}),
      new Caller("--reuid=1238 --regid=1238 --groups=2345,2346", 1238,
          new int[] {1238, 2345, 2346}),
      new Caller("--reuid=1239 --regid=1501 --groups=2346", 1239, new int[] {1501, 2346}),
      new Caller("--reuid=1234 --regid=2346 --groups=2345", 1234, new int[] {2346, 2345}),
      new Caller("--reuid=0 --regid=0 --clear-groups", 0, new int[] {0}));

  /** What is asked, in the order the script below answers: r, w, x, then r and w at once. */
  static final int[] WANTS = {PosixAcl.READ, PosixAcl.WRITE, PosixAcl.EXECUTE,
      PosixAcl.READ | PosixAcl.WRITE};

  @Test
  void theAccessCheckAnswersAsTheKernelDoes() throws Exception {
    assumeThat(Dir.effectiveUid()).as("run as root").isZero();
    assumeThat(sh("command -v setpriv").exit).as("setpriv installed").isZero();
    assertThat(sh("chmod 0755 '" + dir + "'").exit).isZero();
    List<PosixAcl> acls = new ArrayList<>();
    StringBuilder files = new StringBuilder();
    int i = 0;
    for (String acl : ACLS) {
      for (String mode : new String[] {"true", "chmod 0 F", "chmod 0751 F"}) {
        String name = "a" + i++;
        Path f = dir.resolve(name);
        Files.writeString(f, "");
        // Owned by 1500:1501, the second caller and the fourth's group.
        assertThat(sh("chown 1500:1501 '" + f + "' && setfacl --set " + acl + " '" + f + "' && "
            + mode.replace("F", "'" + f + "'")).exit).isZero();
        byte[] value = saved(name);
        int bits = (Integer) Files.getAttribute(f, "unix:mode");
        acls.add(value == null ? PosixAcl.ofMode(bits) : PosixAcl.parse(value));
        files.append(' ').append(name);
      }
    }
    String script = "cd '" + dir + "'; for f in" + files + "; do"
        + " for t in -r -w -x; do test $t $f && printf 1 || printf 0; done;"
        + " (: 3<>$f) 2>/dev/null && printf 1 || printf 0; done";
    for (Caller c : CALLERS) {
      Ran kernel = sh("setpriv " + c.setpriv + " sh -c '" + script.replace("'", "'\\''") + "'");
      assertThat(kernel.out).hasSize(acls.size() * WANTS.length);
      for (int f = 0; f < acls.size(); f++) {
        for (int w = 0; w < WANTS.length; w++) {
          boolean allowed = kernel.out.charAt(f * WANTS.length + w) == '1';
          assertThat(acls.get(f).permits(c.uid, c.gids, 1500, 1501, WANTS[w]))
              .as("%s asking %s of %s", c.setpriv, WANTS[w], acls.get(f)).isEqualTo(allowed);
        }
      }
    }
  }

  @Test
  void nothingIsAskedIsAlwaysGranted() throws Exception {
    PosixAcl none = PosixAcl.ofMode(0);
    assertThat(none.permits(1234, new int[] {1234}, 1, 1, 0)).isTrue();
  }

  /** An attribute value of version 2 with the entries given as tag, permissions, id. */
  static byte[] value(int... entries) {
    return withVersion(2, entries);
  }

  static byte[] withVersion(int version, int... entries) {
    ByteBuffer b = ByteBuffer.allocate(4 + entries.length / 3 * 8).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(version);
    for (int i = 0; i + 2 < entries.length; i += 3) {
      b.putShort((short) entries[i]).putShort((short) entries[i + 1]).putInt(entries[i + 2]);
    }
    return b.array();
  }

  @Test
  void whatTheKernelWouldRefuseIsANamedError() {
    // owner, owning group, other: the smallest valid ACL, broken one way each.
    assertRefused(withVersion(1, 0x01, 6, -1, 0x04, 4, -1, 0x20, 4, -1), "version 1, not 2");
    assertRefused(new byte[] {2, 0, 0}, "3 bytes");
    assertRefused(java.util.Arrays.copyOf(value(0x01, 6, -1, 0x04, 4, -1, 0x20, 4, -1), 27),
        "27 bytes");
    assertRefused(value(), "no entries");
    assertRefused(value(0x01, 6, -1, 0x04, 4, -1, 0x40, 4, -1), "unknown tag 0x40");
    assertRefused(value(0x04, 4, -1, 0x20, 4, -1), "entry 0 (owning group) is out of the order");
    assertRefused(value(0x01, 6, -1, 0x20, 4, -1), "entry 1 (other) is out of the order");
    assertRefused(value(0x01, 6, -1, 0x04, 4, -1), "ends before its other entry");
    assertRefused(value(0x01, 6, -1, 0x02, 0, 1234, 0x04, 4, -1, 0x20, 4, -1),
        "named entries and no mask");
    assertRefused(value(0x01, 6, -1, 0x04, 4, -1, 0x08, 4, 7, 0x20, 4, -1),
        "named entries and no mask");
    assertRefused(value(0x01, 6, -1, 0x02, 0, 1234, 0x02, 4, 1234, 0x04, 4, -1, 0x10, 4, -1,
        0x20, 4, -1), "entry 2 repeats user 1234");
    assertRefused(value(0x01, 6, -1, 0x04, 4, -1, 0x08, 4, 9, 0x08, 0, 9, 0x10, 4, -1, 0x20, 4,
        -1), "entry 3 repeats group 9");
    assertRefused(value(0x01, 6, -1, 0x02, 0, -1, 0x04, 4, -1, 0x10, 4, -1, 0x20, 4, -1),
        "invalid id 4294967295");
    assertRefused(value(0x01, 8, -1, 0x04, 4, -1, 0x20, 4, -1), "permission bits 0x8");
    assertRefused(value(0x01, 6, -1, 0x04, 4, -1, 0x02, 4, 5, 0x10, 4, -1, 0x20, 4, -1),
        "entry 2 (user) is out of the order");
    assertRefused(value(0x01, 6, -1, 0x04, 4, -1, 0x20, 4, -1, 0x20, 4, -1),
        "entry 3 (other) is out of the order");
    assertRefused(value(0x01, 6, -1, 0x01, 6, -1, 0x04, 4, -1, 0x20, 4, -1),
        "entry 1 (owner) is out of the order");
    assertRefused(value(0x01, 6, -1, 0x04, 4, -1, 0x10, 4, -1, 0x10, 4, -1, 0x20, 4, -1),
        "entry 3 (mask) is out of the order");
  }

  static void assertRefused(byte[] value, String why) {
    assertThatThrownBy(() -> PosixAcl.parse(value)).as(HexFormat.of().formatHex(value))
        .isInstanceOf(ImageException.class).hasMessageStartingWith("not a POSIX access ACL: ")
        .hasMessageContaining(why).message().doesNotContain("\n");
  }

  @Test
  void namedIdsInAnyOrderAndIgnoredObjectIdsAreTheKernelsToo() throws Exception {
    PosixAcl acl = PosixAcl.parse(value(0x01, 6, 77, 0x02, 4, 9, 0x02, 0, 3, 0x04, 4, 5,
        0x10, 4, 0, 0x20, 0, 1));
    assertThat(acl.toString())
        .isEqualTo("user::rw-,user:9:r--,user:3:---,group::r--,mask::r--,other::---");
    assertThat(PosixAcl.parse(acl.format())).isEqualTo(acl);
    assertThat(acl.format()).isEqualTo(value(0x01, 6, -1, 0x02, 4, 9, 0x02, 0, 3, 0x04, 4, -1,
        0x10, 4, -1, 0x20, 0, -1));
  }

  /**
   * Random and mutated values: each parses or is an ImageException, and what parses formats to
   * a value that parses to the same ACL and answers every question without failing.
   */
  @Test
  void noValueBreaksTheParser() throws Exception {
    Random random = new Random(42);
    byte[] seed = value(0x01, 6, -1, 0x02, 4, 9, 0x04, 4, -1, 0x08, 1, 7, 0x10, 5, -1,
        0x20, 4, -1);
    int parsed = 0;
    for (int i = 0; i < 200_000; i++) {
      byte[] v = i % 2 == 0 ? seed.clone() : new byte[random.nextInt(64)];
      if (i % 2 == 0) {
        for (int n = random.nextInt(3) + 1; n > 0; n--) {
          v[random.nextInt(v.length)] ^= (byte) (1 << random.nextInt(8));
        }
      } else {
        random.nextBytes(v);
      }
      PosixAcl acl;
      try {
        acl = PosixAcl.parse(v);
      } catch (ImageException refused) {
        continue;
      }
      parsed++;
      assertThat(PosixAcl.parse(acl.format())).isEqualTo(acl);
      assertThat(acl.withMode(acl.mode())).isEqualTo(acl);
      acl.permits(random.nextInt(3), new int[] {random.nextInt(3)}, 1, 1, random.nextInt(8));
    }
    assertThat(parsed).as("mutations that still parse").isPositive();
  }
}

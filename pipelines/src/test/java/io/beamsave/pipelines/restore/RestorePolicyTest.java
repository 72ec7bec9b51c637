package io.beamsave.pipelines.restore;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.fs.DeviceNumber;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Meta;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PosixAcl;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/** What an image is granted: nothing it was not asked for, each kind withheld told once. */
class RestorePolicyTest {
  static Entry ownedBy(int uid, int gid, String user, String group) {
    Entry e = Entries.file("f", 0).withOwner(uid, gid);
    return e.withMeta(new Meta(user == null ? null : user.getBytes(StandardCharsets.US_ASCII),
        group == null ? null : group.getBytes(StandardCharsets.US_ASCII), List.of(), 0));
  }

  static Meta.Xattr xattr(String name, byte[] value) {
    return new Meta.Xattr(name.getBytes(StandardCharsets.US_ASCII), value);
  }

  @Test
  void ownersAreTheNumbersSavedUnlessByNameIsAskedAndANameNeverMakesAFileRoots() {
    assumeThat(Dir.effectiveUid()).as("run as root").isZero();
    // Saved on a host where nobody was 12345 and nogroup 23456.
    Entry saved = ownedBy(12345, 23456, "nobody", "nogroup");
    assertThat(RestorePolicy.SAFE.start().apply(saved)).isSameAs(saved);
    Entry here = RestorePolicy.SAFE.withOwnersByName(true).start().apply(saved);
    assertThat(here.uid()).isEqualTo(65534);
    assertThat(here.gid()).isEqualTo(65534);
    // A name this host lacks keeps the number.
    Entry unknown = ownedBy(4242, 4343, "no-such-user-here", null);
    assertThat(RestorePolicy.SAFE.withOwnersByName(true).start().apply(unknown))
        .isSameAs(unknown);
    // An image that calls uid 1000 "root" does not get a file of root's.
    Withheld w = RestorePolicy.SAFE.withOwnersByName(true).start();
    Entry forged = w.apply(ownedBy(1000, 1000, "root", "root"));
    assertThat(forged.uid()).isEqualTo(1000);
    assertThat(forged.gid()).isEqualTo(1000);
    assertThat(warnings(w)).singleElement().asString().startsWith("owner names of 1 entry kept");
  }

  @Test
  void setIdBitsAreClearedUnlessGrantedAndThenOnlyWhereTheOwnerIsRestoredAsSaved() {
    assumeThat(Dir.effectiveUid()).as("run as root").isZero();
    Entry suid = Entries.file("bin/su", 10).withMode(06755);
    Withheld safe = RestorePolicy.SAFE.start();
    assertThat(safe.apply(suid).mode()).isEqualTo(0755);
    assertThat(warnings(safe)).singleElement().asString()
        .contains("set-id bits of 1 entry cleared unless asked: --restore-setid")
        .contains("first: bin/su");
    RestorePolicy granted = RestorePolicy.SAFE.with(RestorePolicy.Grant.SETID);
    assertThat(granted.start().apply(suid).mode()).isEqualTo(06755);
    // By name, to another number: the set-uid bit would give the file's new owner's power.
    Entry named = ownedBy(12345, 0, "nobody", null).withMode(04755);
    Withheld byName = granted.withOwnersByName(true).start();
    assertThat(byName.apply(named).mode()).isEqualTo(0755);
    // A directory's set-gid bit says whose group what is made in it gets: it stays.
    Entry dir = Entries.dir("shared").withMode(02775);
    assertThat(RestorePolicy.SAFE.start().apply(dir).mode()).isEqualTo(02775);
  }

  @Test
  void devicesCapabilitiesAndSystemAttributesComeOnlyWithTheirFlags() {
    Entry mem = new Entry(PathBytes.of("dev/mem"), EntryType.CHAR_DEVICE, 0, 0666, 0, 0, 1, 2,
        3, 4, 5, 0, null, List.of(), new Meta(null, null, List.of(), DeviceNumber.of(1, 1)));
    Entry capable = Entries.file("bin/ping", 1).withMeta(Meta.NONE.withXattrs(List.of(
        xattr(Meta.CAPABILITY, new byte[20]), xattr("security.selinux", new byte[] {'x'}),
        xattr("trusted.overlay", new byte[] {'y'}), xattr("user.note", new byte[] {'z'}))));
    Withheld safe = RestorePolicy.SAFE.start();
    assertThat(safe.apply(mem)).isNull();
    assertThat(safe.apply(capable).meta().xattrs()).extracting(Meta.Xattr::nameText)
        .containsExactly("user.note");
    assertThat(warnings(safe)).hasSize(3).anySatisfy(w -> assertThat(w)
        .startsWith("devices of 1 entry not made unless asked: --restore-devices"));
    Withheld trusted = RestorePolicy.trustImage().start();
    assertThat(trusted.apply(mem)).isSameAs(mem);
    assertThat(trusted.apply(capable)).isSameAs(capable);
    assertThat(warnings(trusted)).isEmpty();
  }

  @Test
  void anAccessAclIsMadeToAgreeWithTheModeTheImageLists() throws Exception {
    // Mode 0600, but an ACL whose other entry grants rw: list shows -rw-------.
    byte[] acl = ByteBuffer.allocate(4 + 3 * 8).order(ByteOrder.LITTLE_ENDIAN).putInt(2)
        .putShort((short) 1).putShort((short) 6).putInt(-1)
        .putShort((short) 4).putShort((short) 0).putInt(-1)
        .putShort((short) 0x20).putShort((short) 6).putInt(-1).array();
    Entry crafted = Entries.file("f", 1).withMode(0600)
        .withMeta(Meta.NONE.withXattrs(List.of(xattr(Meta.ACL_ACCESS, acl))));
    Entry restored = RestorePolicy.SAFE.start().apply(crafted);
    PosixAcl made = PosixAcl.parse(restored.meta().xattrs().get(0).value());
    assertThat(made.mode()).isEqualTo(0600);
    // One that agrees is kept as it is.
    Entry honest = crafted.withMode(0606);
    assertThat(RestorePolicy.SAFE.start().apply(honest)).isSameAs(honest);
  }

  private static List<String> warnings(Withheld w) {
    List<String> out = new ArrayList<>();
    w.warnings(out);
    return out;
  }
}

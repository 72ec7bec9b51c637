package io.beamsave.transforms.image.catalog;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.DeviceNumber;
import io.beamsave.transforms.image.FileImageSource;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What format version 9 adds to an entry (owner names, extended attributes, hard links, FIFOs
 * and devices) comes back from a page exactly, and a page that claims what cannot be is refused
 * in one line naming the entry.
 */
class EntryMetadataTest {
  @TempDir Path dir;

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  static Meta.Xattr x(String name, String value) {
    return new Meta.Xattr(b(name), b(value));
  }

  static Entry node(String path, EntryType type, long rdev) {
    return new Entry(PathBytes.of(path), type, 0, 0640, 0, 6, 1, 2, 3, 4, 5, 0, null, List.of(),
        new Meta(b("root"), b("disk"), List.of(), rdev));
  }

  static Entry hardLink(String path, String to) {
    return new Entry(PathBytes.of(path), EntryType.HARDLINK, 0, 0644, 0, 0, 1, 2, 3, 4, 5, 0,
        PathBytes.of(to), List.of(), Meta.NONE);
  }

  /** The raw bytes of a page of {@code entries} as the writer packs them. */
  static byte[] page(List<Entry> entries) throws Exception {
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    PackedEntries.Writer w = new PackedEntries.Writer(new DataOutputStream(raw));
    for (Entry e : entries) {
      w.write(e);
    }
    return raw.toByteArray();
  }

  /** Decodes {@code raw} as the one page of an image of {@code version}. */
  List<Entry> decode(byte[] raw, PathBytes first, int count, int version) throws Exception {
    Path golden = dir.resolve("v9.bsave");
    Files.write(golden, PagedCatalogTest.golden("v9.bsave"));
    CatalogHead h;
    try (ImageSource src = FileImageSource.open(golden)) {
      h = ImageReader.readHead(src, io.beamsave.transforms.crypt.Keys.NONE, false);
    }
    CatalogHead crafted = new CatalogHead(h.catalog(), null, h.totals(),
        List.of(new CatalogHead.Page(first, count, 1, raw.length, 0, 0,
            CatalogHead.sha256(raw))), version, null);
    return crafted.decodePage("crafted", 0, raw);
  }

  List<Entry> roundTrip(List<Entry> entries, int version) throws Exception {
    return decode(page(entries), entries.get(0).path(), entries.size(), version);
  }

  @Test
  void everythingVersion9AddsComesBackExactly() throws Exception {
    Meta named = new Meta(b("alice"), b("staff"), List.of(x("security.capability", "\1\0\0\2"),
        x("system.posix_acl_access", "\2\0\0\0"), x("user.a", ""), x("user.b", "\0\377")), 0);
    List<Entry> entries = List.of(
        Entries.dir("d").withMeta(named),
        Entries.file("d/a", 0).withMeta(named),
        hardLink("d/b", "d/a"),
        node("d/fifo", EntryType.FIFO, 0),
        node("d/sda", EntryType.BLOCK_DEVICE, DeviceNumber.of(8, 0)),
        node("d/tty", EntryType.CHAR_DEVICE, DeviceNumber.of(0xfffff, 0xfffff)),
        Entries.file("e", 0).withMeta(new Meta(null, b("staff"), List.of(), 0)));
    assertThat(roundTrip(entries, ImageFormat.VERSION)).containsExactlyElementsOf(entries);
    assertThat(DeviceNumber.major(DeviceNumber.of(0xfffff, 0xabcde))).isEqualTo(0xfffff);
    assertThat(DeviceNumber.minor(DeviceNumber.of(0xfffff, 0xabcde))).isEqualTo(0xabcde);
  }

  @Test
  void aVersion7PageHoldingAVersion9TypeIsRefused() throws Exception {
    List<Entry> entries = List.of(node("fifo", EntryType.FIFO, 0));
    assertThatThrownBy(() -> roundTrip(entries, ImageFormat.PACKED_VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("entry 0 (fifo): unknown type");
  }

  @Test
  void aHardLinkToALaterOrUnsafePathIsRefused() throws Exception {
    assertThatThrownBy(() -> roundTrip(List.of(hardLink("a", "b")), ImageFormat.VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("entry 0 (a): hard link to 'b', not an entry before it");
    assertThatThrownBy(() -> roundTrip(List.of(hardLink("z", "../etc/shadow")),
        ImageFormat.VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("entry 0 (z): hard link to '../etc/shadow'")
        .hasMessageNotContaining("\n");
  }

  @Test
  void extendedAttributesOutsideLinuxsNamespacesOrOutOfOrderAreRefused() throws Exception {
    Entry bad = Entries.file("f", 0).withMeta(Meta.NONE.withXattrs(List.of(x("evil.x", "1"))));
    assertThatThrownBy(() -> roundTrip(List.of(bad), ImageFormat.VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("entry 0 (f) metadata: extended attribute name evil.x: it is in"
            + " no namespace Linux knows");
    Entry twice = Entries.file("f", 0)
        .withMeta(Meta.NONE.withXattrs(List.of(x("user.b", "1"), x("user.a", "2"))));
    assertThatThrownBy(() -> roundTrip(List.of(twice), ImageFormat.VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("user.a: it is not after the one before");
  }

  @Test
  void unknownMetadataBitsAndBadNamesAreRefused() throws Exception {
    byte[] raw = page(List.of(Entries.file("f", 0)));
    // The metadata byte, last in an entry but for a file's count of ranges (version 13 on).
    raw[raw.length - 2] = (byte) 0x80;
    byte[] crafted = raw;
    assertThatThrownBy(() -> decode(crafted, PathBytes.of("f"), 1, ImageFormat.VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("entry 0 (f) metadata: unknown bits 80");
    Entry colon = Entries.file("f", 0).withMeta(new Meta(b("a:b"), null, List.of(), 0));
    assertThatThrownBy(() -> roundTrip(List.of(colon), ImageFormat.VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("user name a:b: it holds a NUL, a newline or a colon");
  }

  @Test
  void tooManyExtendedAttributesAreRefusedBeforeTheyAreRead() throws Exception {
    List<Meta.Xattr> many = new ArrayList<>();
    for (int i = 0; i < Meta.MAX_XATTRS + 1; i++) {
      many.add(x(String.format("user.%05d", i), ""));
    }
    Entry e = Entries.file("f", 0).withMeta(Meta.NONE.withXattrs(many));
    assertThatThrownBy(() -> roundTrip(List.of(e), ImageFormat.VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("xattr count");
  }

  /** A file of {@code size} bytes in base 1 (which golden/v9.bsave has) with {@code ranges}. */
  static Entry ranged(long size, Ranges ranges) {
    return Entries.file("f", size, new Extent(1, 0, 0, size, new byte[8])).withRanges(ranges);
  }

  @Test
  void rangeDigestsComeBackAndAnotherCountOrSizeIsRefusedInOneLine() throws Exception {
    Entry ok = ranged(10_000, new Ranges(12, new byte[3 * Ranges.DIGEST_SIZE]));
    assertThat(roundTrip(List.of(ok), ImageFormat.VERSION)).containsExactly(ok);
    // An older version's reader knows nothing of them: its page ends before them.
    assertThat(ok.ranges().count()).isEqualTo(3);

    for (Entry bad : List.of(ranged(10_000, new Ranges(12, new byte[2 * Ranges.DIGEST_SIZE])),
        ranged(4096, new Ranges(12, new byte[Ranges.DIGEST_SIZE])),
        ranged(10_000, new Ranges(13, new byte[3 * Ranges.DIGEST_SIZE])))) {
      assertThatThrownBy(() -> roundTrip(List.of(bad), ImageFormat.VERSION))
          .isInstanceOf(ImageException.class)
          .hasMessageContaining("entry 0 (f) ranges: ")
          .hasMessageContaining("ranges of 2^")
          .hasMessageNotContaining("\n");
    }
    byte[] raw = page(List.of(ok));
    int shift = raw.length - 3 * Ranges.DIGEST_SIZE - 1;
    for (int s : new int[] {11, 27, 255}) {
      byte[] crafted = raw.clone();
      crafted[shift] = (byte) s;
      assertThatThrownBy(() -> decode(crafted, PathBytes.of("f"), 1, ImageFormat.VERSION))
          .isInstanceOf(ImageException.class)
          .hasMessageContaining("entry 0 (f) ranges: ranges of 2^" + s + " bytes");
    }
    // A file records at most 2^18 ranges (8 MiB of digests, room in any page): 256 GiB at the
    // 1 MiB a save uses; a larger one records none.
    assertThat(Ranges.recordedFor(256L << 30, 20)).isTrue();
    assertThat(Ranges.recordedFor((256L << 30) + 1, 20)).isFalse();
    assertThat(Ranges.recordedFor(1 << 20, 20)).isFalse();
    // A count past what the page holds is refused before anything is allocated.
    byte[] many = raw.clone();
    many[shift - 1] = (byte) 0x7f;
    assertThatThrownBy(() -> decode(many, PathBytes.of("f"), 1, ImageFormat.VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("entry 0 (f) ranges");
  }
}

package io.beamsave.transforms.image.catalog;

import static io.beamsave.testing.Entries.dir;
import static io.beamsave.testing.Entries.file;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.format.ImageId;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The catalog's codec: what {@link CatalogWriter} writes, {@link CatalogReader} reads back. */
class CatalogCodecTest {
  /** The library root's record: mode, uid, gid, mtime, ctime, inode. */
  static final int ROOT_BYTES = 4 + 4 + 4 + 12 + 12 + 8;
  static final byte[] DIGEST = Entries.DIGEST;

  static Catalog catalog(List<Entry> entries) {
    ShardInfo shard = new ShardInfo(16, 116, 100, new int[] {116});
    return Entries.catalog("zstd:3", 4096, entries, List.of(shard));
  }

  static Catalog decode(Catalog c) throws ImageException {
    return CatalogReader.decode("img", CatalogWriter.encode(c), 16 + 116, ImageFormat.WHOLE_CATALOG_VERSION);
  }

  @Test
  void roundTripsEntriesAndShards() throws Exception {
    Entry f = file("d/ünïcødé 文件", 100, new Extent(0, 0, 100, DIGEST));
    Entry link = Entries.link("d/link", "/etc/passwd");
    Catalog back = decode(catalog(List.of(dir("d"), f, link)));
    assertThat(Entries.paths(back.entries())).containsExactly("d", "d/ünïcødé 文件", "d/link");
    assertThat(back.entries().get(1).extents().get(0).length()).isEqualTo(100);
    assertThat(back.entries().get(2).linkTarget()).isEqualTo(PathBytes.of("/etc/passwd"));
    assertThat(back.entries()).isEqualTo(catalog(List.of(dir("d"), f, link)).entries());
    assertThat(back.root()).isEqualTo(Entries.root());
    assertThat(back.shards().get(0).blockLengths()).containsExactly(116);
    assertThat(back.rawBytes()).isEqualTo(100);
  }

  @ParameterizedTest
  @ValueSource(strings = {"../evil", "/etc/passwd", "a/../../b", "a//b", "./a", "a/.", ""})
  void rejectsPathsThatLeaveTheTarget(String path) {
    Catalog c = catalog(List.of(file(path, 100, new Extent(0, 0, 100, DIGEST))));
    assertThatThrownBy(() -> decode(c))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("unsafe path");
  }

  @Test
  void rejectsFilesInsideASymlink() {
    Entry link = Entries.link("out", "/tmp");
    Catalog c = catalog(List.of(link, file("out/x", 100, new Extent(0, 0, 100, DIGEST))));
    assertThatThrownBy(() -> decode(c)).hasMessageContaining("not inside a directory entry");
  }

  @Test
  void rejectsExtentsOutsideTheirShardOrNotCoveringTheFile() {
    assertThatThrownBy(() -> decode(catalog(List.of(file("a", 100, new Extent(0, 50, 100, DIGEST))))))
        .hasMessageContaining("outside shard");
    assertThatThrownBy(() -> decode(catalog(List.of(file("a", 100, new Extent(3, 0, 100, DIGEST))))))
        .hasMessageContaining("missing shard 3");
    assertThatThrownBy(() -> decode(catalog(List.of(file("a", 100, new Extent(0, 0, 60, DIGEST))))))
        .hasMessageContaining("cover 60 of 100");
  }

  @Test
  void keepsTheUnreadableFlagAndRejectsFlagsNoReaderKnows() throws Exception {
    Entry skipped = file("secret", 0).withFlags(Entry.FLAG_UNREADABLE);
    Entry closed = dir("closed").withFlags(Entry.FLAG_UNREADABLE);
    Entry partly = file("a", 100, new Extent(0, 0, 100, DIGEST))
        .withFlags(Entry.FLAG_UNREADABLE | Entry.FLAG_CHANGED);
    Catalog back = decode(catalog(List.of(partly, closed, skipped)));
    assertThat(back.entries()).allMatch(Entry::unreadable);
    assertThat(back.entries().get(0).changed()).isTrue();

    Entry unknown = file("a", 100, new Extent(0, 0, 100, DIGEST)).withFlags(4);
    assertThatThrownBy(() -> decode(catalog(List.of(unknown))))
        .hasMessageContaining("invalid flags");
  }

  @Test
  void absurdCountsFailFastInsteadOfAllocating() {
    byte[] raw = CatalogWriter.encode(catalog(List.of(dir("d"))));
    int countAt = 8 + 2 + 3 + 2 + 6 + 8 + 4 + 8 + ROOT_BYTES + 16 + 16 + 4 + 2;
    ByteBuffer.wrap(raw).putInt(countAt, 0x7fffffff);
    assertThatThrownBy(() -> CatalogReader.decode("img", raw, 132, ImageFormat.WHOLE_CATALOG_VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("entry count 2147483647 exceeds");
  }

  @Test
  void shardsMustLieBetweenHeaderAndCatalogWithoutOverlapping() throws Exception {
    ShardInfo a = new ShardInfo(16, 116, 100, new int[] {116});
    ShardInfo b = new ShardInfo(132, 116, 100, new int[] {116});
    ShardInfo overlapping = new ShardInfo(100, 116, 100, new int[] {116});
    // Any order is fine: shards are appended as they finish.
    assertThat(CatalogReader.decode("img", encode(List.of(b, a)), 248, ImageFormat.WHOLE_CATALOG_VERSION).shards()).hasSize(2);
    assertThatThrownBy(() -> CatalogReader.decode("img", encode(List.of(a, overlapping)), 248, ImageFormat.WHOLE_CATALOG_VERSION))
        .hasMessageContaining("overlaps");
    assertThatThrownBy(() -> CatalogReader.decode("img", encode(List.of(a, b)), 200, ImageFormat.WHOLE_CATALOG_VERSION))
        .hasMessageContaining("shard 1 at 132 overlaps");
    ShardInfo inHeader = new ShardInfo(8, 116, 100, new int[] {116});
    assertThatThrownBy(() -> CatalogReader.decode("img", encode(List.of(inHeader)), 248, ImageFormat.WHOLE_CATALOG_VERSION))
        .hasMessageContaining("overlaps");
  }

  private static byte[] encode(List<ShardInfo> shards) {
    return CatalogWriter.encode(Entries.catalog("none", 4096, List.of(), shards));
  }

  @Test
  void everyTruncationFails() {
    byte[] raw =
        CatalogWriter.encode(catalog(List.of(dir("d"), file("d/f", 100, new Extent(0, 0, 100, DIGEST)))));
    for (int len = 0; len < raw.length; len++) {
      byte[] cut = java.util.Arrays.copyOf(raw, len);
      assertThatThrownBy(() -> CatalogReader.decode("img", cut, 132, ImageFormat.WHOLE_CATALOG_VERSION))
          .as("truncated to %d", len)
          .isInstanceOf(ImageException.class);
    }
  }

  static Catalog.Base base(int n) {
    byte[] id = new byte[ImageId.SIZE];
    id[0] = (byte) n;
    return new Catalog.Base(new ImageId(id), new byte[32], 1_000L * n, "/backup/base" + n
        + ".bsave");
  }

  @Test
  void roundTripsIdentityBasesAndReferences() throws Exception {
    Entry own = file("own", 100, new Extent(0, 0, 100, DIGEST));
    Entry old = file("old", 5000, new Extent(2, 7, 1 << 20, 5000, DIGEST));
    ImageId origin = ImageId.random();
    Catalog c = catalog(List.of(old, own)).withIdentity(ImageId.random(), origin, 3,
        List.of(base(1), base(2)));
    Catalog back = decode(c);
    assertThat(back.id()).isEqualTo(c.id());
    assertThat(back.origin()).isEqualTo(origin);
    assertThat(back.depth()).isEqualTo(3);
    assertThat(back.bases()).usingRecursiveFieldByFieldElementComparator()
        .isEqualTo(c.bases());
    assertThat(back.entries()).isEqualTo(c.entries());
    assertThat(back.ownRawBytes()).isEqualTo(100);
    assertThat(back.digest()).isEqualTo(ImageId.catalogDigest(CatalogWriter.encode(c)));
  }

  @Test
  void referencesToBasesItDoesNotListOrBrokenBaseListsAreRefused() {
    Entry ghost = file("ghost", 10, new Extent(2, 0, 0, 10, DIGEST));
    assertThatThrownBy(() -> decode(catalog(List.of(ghost))
        .withIdentity(ImageId.random(), null, 1, List.of(base(1)))))
        .isInstanceOf(ImageException.class).hasMessageContaining("names base 2 of 1");
    Catalog twice = catalog(List.of()).withIdentity(ImageId.random(), null, 2,
        List.of(base(1), base(1)));
    assertThatThrownBy(() -> decode(twice)).hasMessageContaining("another base's");
    Catalog self = catalog(List.of()).withIdentity(base(1).id(), null, 1, List.of(base(1)));
    assertThatThrownBy(() -> decode(self)).hasMessageContaining("the image's own");
    Catalog noDepth = catalog(List.of()).withIdentity(ImageId.random(), null, 0,
        List.of(base(1)));
    assertThatThrownBy(() -> decode(noDepth)).hasMessageContaining("depth 0 with 1 bases");
    Entry overflow = file("big", 10, new Extent(1, 0, Long.MAX_VALUE - 5, 10, DIGEST));
    assertThatThrownBy(() -> decode(catalog(List.of(overflow))
        .withIdentity(ImageId.random(), null, 1, List.of(base(1)))))
        .hasMessageContaining("invalid extent in base 1");
  }

  @Test
  void aBaseCountBeyondTheBytesLeftFailsFast() {
    byte[] raw = CatalogWriter.encode(catalog(List.of(dir("d"))));
    int baseCountAt = 8 + 2 + 3 + 2 + 6 + 8 + 4 + 8 + ROOT_BYTES + 16 + 16 + 4;
    ByteBuffer.wrap(raw).putShort(baseCountAt, (short) 0xffff);
    assertThatThrownBy(() -> CatalogReader.decode("img", raw, 132, ImageFormat.WHOLE_CATALOG_VERSION))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("base count 65535 exceeds");
  }
}

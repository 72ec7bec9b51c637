package io.beamsave.transforms.image;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.fs.DeviceNumber;
import io.beamsave.transforms.image.block.BlockEncoder;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.ExtentDigest;
import io.beamsave.transforms.image.catalog.Meta;
import io.beamsave.transforms.image.catalog.Notes;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.Ranges;
import io.beamsave.transforms.image.catalog.ShardInfo;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The images checked in under {@code golden/}, whose bytes docs/image-format.md dumps: the reader
 * must read them as specified, and the writer must still write {@code v3.bsave} (an incremental image whose base is {@code v2.bsave})
 * byte for byte,
 * so that writer and reader cannot drift together. {@code v1.bsave} was written by beamsave
 * before names became bytes (format version 1), and must stay readable. {@code v4.bsave} is an
 * encrypted image (format version 4) for the raw key in {@code v4.key}; its data key, shard and
 * catalog keys and nonces were random, so it is read, not written again.
 */
class GoldenImageTest {
  @TempDir Path dir;

  static final int BLOCK = 4096;
  static final byte[] CAFE = {'c', 'a', 'f', (byte) 0xe9};

  static byte[] resource(String name) throws IOException {
    try (InputStream in = GoldenImageTest.class.getResourceAsStream("/golden/" + name)) {
      return in.readAllBytes();
    }
  }

  static byte[] digest(byte[] b) {
    try (ExtentDigest d = new ExtentDigest()) {
      d.update(b, 0, b.length);
      return d.digest();
    }
  }

  static final byte[] HELLO = "hello, world\n".getBytes(StandardCharsets.US_ASCII);
  static final byte[] X = {'x'};

  /** The catalog of golden/v2.bsave, given where its one shard lies. */
  static Catalog v2Catalog(ShardInfo shard) {
    long t = 981_173_106L; // 2001-02-03T04:05:06Z
    Entry root = new Entry(PathBytes.of(""), EntryType.DIRECTORY, 0, 0755, 0, 0, t, 123_456_789,
        t + 1, 1, 2, 0, null, List.of());
    Entry d = new Entry(PathBytes.of("d"), EntryType.DIRECTORY, 0, 0750, 1000, 100, -1,
        500_000_000, t + 1, 2, 3, 0, null, List.of());
    Entry cafe = new Entry(PathBytes.of("d").child(CAFE), EntryType.FILE, 0, 0600, 1000,
        100, 10_413_792_000L, 999_999_999, t + 1, 3, 4, 1, null,
        List.of(new Extent(0, 13, 1, digest(X))));
    Entry link = new Entry(PathBytes.of("d/link"), EntryType.SYMLINK, 0, 0777, 1000, 100, t, 0,
        t + 1, 4, 5, 0, PathBytes.of("../hello.txt"), List.of());
    Entry hello = new Entry(PathBytes.of("hello.txt"), EntryType.FILE, 0, 0644, 0, 0, t, 0,
        t + 1, 5, 6, 13, null, List.of(new Extent(0, 0, 13, digest(HELLO))));
    return new Catalog("golden", "none", 1_764_547_200_000L, BLOCK, 1 << 20, root,
        List.of(d, cafe, link, hello), List.of(shard));
  }

  static final ImageId V3_ID = ImageId.parse("000102030405060708090a0b0c0d0e0f");

  /**
   * The catalog of golden/v3.bsave, given where its one shard lies: the tree of v2.bsave saved
   * incrementally against it, with {@code d/caf\xe9} changed (its byte is in v3's own shard)
   * and {@code hello.txt} unchanged (referenced in v2.bsave, base 1).
   */
  static Catalog v3Catalog(ShardInfo shard, Catalog v2) {
    Catalog base = v2Catalog(shard);
    List<Entry> entries = new ArrayList<>();
    for (Entry e : base.entries()) {
      if (e.path().toString().equals("hello.txt")) {
        entries.add(e.withExtents(List.of(e.extents().get(0).inImage(1))));
      } else if (e.isFile()) {
        entries.add(e.withExtents(List.of(new Extent(0, 0, 1, digest(X)))));
      } else {
        entries.add(e);
      }
    }
    return new Catalog(base.library(), base.codecSpec(), base.createdMillis() + 86_400_000L,
        BLOCK, 1 << 20, base.root(), entries, List.of(shard))
        .withIdentity(V3_ID, null, 1, List.of(v2.asBase("v2.bsave")));
  }

  /** Writes an image of one shard of {@code raw} with {@code catalog} (given that shard). */
  Path write(String name, byte[] raw, java.util.function.Function<ShardInfo, Catalog> catalog)
      throws IOException {
    Path image = dir.resolve(name);
    ByteArrayOutputStream blocks = new ByteArrayOutputStream();
    int[] lengths = new int[(raw.length + BLOCK - 1) / BLOCK];
    try (BlockEncoder enc = new BlockEncoder(Codecs.parse("none"), BLOCK)) {
      for (int k = 0; k < lengths.length; k++) {
        byte[] slice = java.util.Arrays.copyOfRange(raw, k * BLOCK,
            Math.min(raw.length, (k + 1) * BLOCK));
        lengths[k] = enc.write(slice, slice.length, blocks);
      }
    }
    long at = ImageWriter.appendShard(image, blocks.toByteArray(), blocks.size());
    try (ImageWriter w = ImageWriter.open(image)) {
      w.finish(catalog.apply(new ShardInfo(at, blocks.size(), raw.length, lengths)),
          Codecs.parse("none"));
    }
    return image;
  }

  static final ImageId V5_ID = ImageId.parse("101112131415161718191a1b1c1d1e1f");

  static final byte[] ROOT_NAME = "root".getBytes(StandardCharsets.US_ASCII);
  static final byte[] USER = "user".getBytes(StandardCharsets.US_ASCII);
  static final byte[] USERS = "users".getBytes(StandardCharsets.US_ASCII);

  static Meta.Xattr xattr(String name, byte[] value) {
    return new Meta.Xattr(name.getBytes(StandardCharsets.US_ASCII), value);
  }

  /** An ACL as the kernel stores it: {@code user::rwx group::r-x other::---} and a default. */
  static final byte[] ACL = HexFormat.of().parseHex(
      "02000000" + "01000700ffffffff" + "04000500ffffffff" + "20000000ffffffff");

  /** What golden/v11.bsave notes: a btrfs snapshot taken at 2026-12-03T21:00:00.123456789Z. */
  static final java.util.Map<String, String> V11_NOTES = notes(Notes.SNAPSHOT, "btrfs",
      Notes.SNAPSHOT_TAKEN, "2026-12-03T21:00:00.123456789Z");

  static java.util.Map<String, String> notes(String... kv) {
    java.util.Map<String, String> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  /**
   * golden/v11.bsave: golden/v9.bsave's tree (golden/v7.bsave's with what version 9 adds:
   * owner names, an extended attribute and a default ACL, a FIFO, a character device, and
   * {@code hello2.txt}, a hard link to {@code hello.txt}) with what version 11 adds: notes.
   */
  Path writeV11() throws IOException {
    Path v2 = dir.resolve("v2.bsave");
    Files.write(v2, resource("v2.bsave"));
    Catalog base = ImageReader.readCatalog(v2);
    return write("v11.bsave", X, shard -> {
      Catalog c = v3Catalog(shard, base);
      long t = 981_173_106L;
      Meta userMeta = new Meta(USER, USERS, List.of(), 0);
      List<Entry> entries = new ArrayList<>();
      for (Entry e : c.entries()) {
        String p = e.path().toString();
        if (p.equals("d")) {
          entries.add(e.withMeta(userMeta.withXattrs(List.of(xattr(Meta.ACL_DEFAULT, ACL)))));
        } else if (p.equals("hello.txt")) {
          entries.add(e.withMeta(new Meta(ROOT_NAME, ROOT_NAME,
              List.of(xattr("user.comment", X)), 0)));
          entries.add(new Entry(PathBytes.of("hello2.txt"), EntryType.HARDLINK, 0, 0644, 0, 0,
              t, 0, t + 1, 5, 6, 0, PathBytes.of("hello.txt"), List.of(),
              new Meta(ROOT_NAME, ROOT_NAME, List.of(xattr("user.comment", X)), 0)));
        } else if (p.equals("d/link")) {
          entries.add(new Entry(PathBytes.of("d/fifo"), EntryType.FIFO, 0, 0600, 1000, 100, t,
              0, t + 1, 7, 7, 0, null, List.of(), userMeta));
          entries.add(e.withMeta(userMeta));
          entries.add(new Entry(PathBytes.of("d/null"), EntryType.CHAR_DEVICE, 0, 0666, 0, 0,
              t, 0, t + 1, 8, 8, 0, null, List.of(),
              new Meta(ROOT_NAME, ROOT_NAME, List.of(), DeviceNumber.of(1, 3))));
        } else {
          entries.add(e.withMeta(userMeta));
        }
      }
      Entry root = c.root().withMeta(new Meta(ROOT_NAME, ROOT_NAME, List.of(), 0));
      Catalog v9 = new Catalog(c.library(), c.codecSpec(), c.createdMillis(), c.blockSize(),
          c.shardSize(), root, entries, c.shards());
      return v9.withIdentity(V5_ID, null, c.depth(), c.bases()).withNotes(V11_NOTES);
    });
  }

  /** The bytes of golden/v13.bsave's {@code zeros}: three ranges of 4 KiB, the last 1 byte. */
  static final int ZEROS = 2 * BLOCK + 1;

  /**
   * golden/v13.bsave: golden/v11.bsave's tree with what version 13 adds: {@code zeros}, a file
   * of {@link #ZEROS} zero bytes in the image's own shard after {@code d/caf\xe9}'s byte, with
   * the SHA-256 of each of its ranges of 4 KiB; every other file records none.
   */
  Path writeV13() throws IOException {
    Path v11 = writeV11();
    Catalog c = ImageReader.readCatalog(v11);
    byte[] raw = new byte[1 + ZEROS];
    raw[0] = 'x';
    return write("v13.bsave", raw, shard -> {
      List<Entry> entries = new ArrayList<>();
      for (Entry e : c.entries()) {
        entries.add(e.isFile() && !e.extents().get(0).isReference()
            ? e.withExtents(List.of(new Extent(0, 0, 1, digest(X)))) : e);
      }
      Entry hello = c.entries().stream().filter(e -> e.path().toString().equals("hello.txt"))
          .findFirst().orElseThrow();
      byte[] zeros = new byte[ZEROS];
      entries.add(new Entry(PathBytes.of("zeros"), EntryType.FILE, 0, 0600, 0, 0,
          hello.mtimeSeconds(), 0, hello.ctimeSeconds(), 9, 9, ZEROS, null,
          List.of(new Extent(0, 1, ZEROS, digest(zeros))), hello.meta(), zeroRanges()));
      Catalog v13 = new Catalog(c.library(), c.codecSpec(), c.createdMillis(), c.blockSize(),
          c.shardSize(), c.root(), entries, List.of(shard));
      return v13.withIdentity(V5_ID, null, c.depth(), c.bases()).withNotes(V11_NOTES);
    });
  }

  /** The range digests of golden/v13.bsave's {@code zeros}. */
  static Ranges zeroRanges() {
    byte[] d = new byte[3 * Ranges.DIGEST_SIZE];
    int at = 0;
    for (int n : new int[] {BLOCK, BLOCK, 1}) {
      byte[] one = CatalogHead.sha256(new byte[n]);
      System.arraycopy(one, 0, d, at, one.length);
      at += one.length;
    }
    return new Ranges(12, d);
  }

  /**
   * With {@code -Dbeamsave.golden.write=DIR}, writes the image to DIR instead: how a new format
   * version's golden image is made (the old one stays, for the reader).
   */
  @Test
  void theWriterStillWritesTheGoldenImageByteForByte() throws Exception {
    byte[] written = Files.readAllBytes(writeV13());
    String out = System.getProperty("beamsave.golden.write");
    if (out != null) {
      Files.write(Path.of(out, "v13.bsave"), written);
      return;
    }
    byte[] golden = resource("v13.bsave");
    assertThat(HexFormat.of().formatHex(written))
        .as("the writer drifted from golden/v13.bsave (docs/image-format.md describes it); a"
            + " format change needs a new version")
        .isEqualTo(HexFormat.of().formatHex(golden));
  }

  @Test
  void theVersion13GoldenImageReadsWithItsRangesAndVersion11sHasNone() throws Exception {
    Path v2 = dir.resolve("v2.bsave");
    Files.write(v2, resource("v2.bsave"));
    Path v13 = dir.resolve("v13.bsave");
    Files.write(v13, resource("v13.bsave"));
    Path v11 = dir.resolve("v11.bsave");
    Files.write(v11, resource("v11.bsave"));
    Catalog c = ImageReader.readCatalog(v13);
    Entry zeros = c.entries().get(c.entries().size() - 1);
    assertThat(zeros.path().toString()).isEqualTo("zeros");
    assertThat(zeros.ranges()).isEqualTo(zeroRanges());
    assertThat(zeros.ranges().count()).isEqualTo(3);
    assertThat(c.notes()).containsExactlyEntriesOf(V11_NOTES);
    assertThat(c.entries().stream().filter(e -> e != zeros).map(Entry::ranges))
        .containsOnly(Ranges.NONE);
    assertThat(ImageReader.readCatalog(v11).entries().stream().map(Entry::ranges))
        .containsOnly(Ranges.NONE);
  }

  @Test
  void theVersion11GoldenImageReadsWithItsNotesAndVersion9sHasNone() throws Exception {
    Path v2 = dir.resolve("v2.bsave");
    Files.write(v2, resource("v2.bsave"));
    Path v11 = dir.resolve("v11.bsave");
    Files.write(v11, resource("v11.bsave"));
    Path v9 = dir.resolve("v9.bsave");
    Files.write(v9, resource("v9.bsave"));
    Catalog c = ImageReader.readCatalog(v11);
    assertThat(c.notes()).containsExactlyEntriesOf(V11_NOTES);
    Catalog old = ImageReader.readCatalog(v9);
    assertThat(old.notes()).isEmpty();
    assertThat(Entries.paths(c.entries())).isEqualTo(Entries.paths(old.entries()));
  }

  @Test
  void notesOutsideTheirBoundsAreNotWritten() {
    for (java.util.Map<String, String> bad : List.of(notes("Snapshot", "x"), notes("", "x"),
        notes("a", "line\nbreak"), notes("a", "x".repeat(Notes.MAX_VALUE_BYTES + 1)))) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> Notes.check(bad))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("note");
    }
  }

  @Test
  void theVersion9GoldenImageReadsWithItsMetadata() throws Exception {
    Path v2 = dir.resolve("v2.bsave");
    Files.write(v2, resource("v2.bsave"));
    Path v9 = dir.resolve("v9.bsave");
    Files.write(v9, resource("v9.bsave"));
    Catalog c = ImageReader.readCatalog(v9);
    assertThat(c.root().meta().user()).isEqualTo(ROOT_NAME);
    java.util.Map<String, Entry> byPath = new java.util.HashMap<>();
    c.entries().forEach(e -> byPath.put(e.path().toString(), e));
    assertThat(Entries.paths(c.entries())).containsExactly("d", "d/caf\\xe9", "d/fifo",
        "d/link", "d/null", "hello.txt", "hello2.txt");
    assertThat(byPath.get("d").meta().xattrs()).containsExactly(xattr(Meta.ACL_DEFAULT, ACL));
    assertThat(byPath.get("d").meta().user()).isEqualTo(USER);
    assertThat(byPath.get("d/link").meta().group()).isEqualTo(USERS);
    assertThat(byPath.get("d/fifo").type()).isEqualTo(EntryType.FIFO);
    Entry dev = byPath.get("d/null");
    assertThat(dev.type()).isEqualTo(EntryType.CHAR_DEVICE);
    assertThat(DeviceNumber.major(dev.meta().rdev())).isEqualTo(1);
    assertThat(DeviceNumber.minor(dev.meta().rdev())).isEqualTo(3);
    Entry link = byPath.get("hello2.txt");
    assertThat(link.isHardLink()).isTrue();
    assertThat(link.linkTarget()).isEqualTo(PathBytes.of("hello.txt"));
    assertThat(byPath.get("hello.txt").meta().xattrs())
        .containsExactly(xattr("user.comment", X));
    assertThat(byPath.get("hello.txt").meta().user()).isEqualTo(ROOT_NAME);
  }

  @Test
  void aReferenceOutsideItsBaseIsRefusedWhenTheBaseIsOpened() throws Exception {
    Path v2 = dir.resolve("v2.bsave");
    Files.write(v2, resource("v2.bsave"));
    Catalog base = ImageReader.readCatalog(v2);
    Path crafted = write("crafted.bsave", X, shard -> {
      Catalog c = v3Catalog(shard, base);
      List<Entry> entries = new ArrayList<>();
      for (Entry e : c.entries()) {
        // hello.txt's 13 bytes claimed at offset 10 of base shard 0, which holds 14.
        entries.add(e.path().toString().equals("hello.txt")
            ? e.withExtents(List.of(new Extent(1, 0, 10, 13, e.extents().get(0).digest())))
            : e);
      }
      return new Catalog(c.library(), c.codecSpec(), c.createdMillis(), c.blockSize(),
          c.shardSize(), c.root(), entries, c.shards())
          .withIdentity(c.id(), null, 1, c.bases());
    });
    Catalog c = ImageReader.readCatalog(crafted);
    org.assertj.core.api.Assertions.assertThatThrownBy(() ->
            io.beamsave.transforms.read.ImageChain.resolve(crafted.toString(), c, c.entries(),
                null))
        .hasMessageContaining("file hello.txt references bytes base image " + v2
            + " does not hold");
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"v5.bsave", "v7.bsave"})
  void thePagedGoldenImagesReadAsTheirWholeTwinAndPageByPage(String name) throws Exception {
    Path v2 = dir.resolve("v2.bsave");
    Files.write(v2, resource("v2.bsave"));
    Path v3 = dir.resolve("v3.bsave");
    Files.write(v3, resource("v3.bsave"));
    Path v5 = dir.resolve(name);
    Files.write(v5, resource(name));
    Catalog whole = ImageReader.readCatalog(v3);
    Catalog paged = ImageReader.readCatalog(v5);
    assertThat(paged.id()).isEqualTo(V5_ID);
    assertThat(paged.bases()).usingRecursiveFieldByFieldElementComparator()
        .isEqualTo(whole.bases());
    assertThat(paged.entries()).isEqualTo(whole.entries());
    try (ImageSource src = FileImageSource.open(v5)) {
      CatalogHead head = ImageReader.readHead(src, io.beamsave.transforms.crypt.Keys.NONE,
          false);
      assertThat(head.catalog().entries()).isEmpty();
      assertThat(head.totals()).isEqualTo(new CatalogHead.Totals(4, 2, 14, 1, 0, 0));
      assertThat(head.pages()).hasSize(1);
      assertThat(head.pages().get(0).firstPath()).isEqualTo(PathBytes.of("d"));
      assertThat(ImageReader.readPage(src, head, 0)).isEqualTo(whole.entries());
      assertThat(head.catalog().digest()).isEqualTo(paged.digest());
    }
    io.beamsave.transforms.read.ImageChain chain =
        io.beamsave.transforms.read.ImageChain.resolve(v5.toString(), paged, paged.entries(),
            null);
    assertThat(chain.member(1).location()).isEqualTo(v2.toString());
  }

  @Test
  void theIncrementalGoldenImageReadsThroughItsBaseBesideIt() throws Exception {
    Path v2 = dir.resolve("v2.bsave");
    Files.write(v2, resource("v2.bsave"));
    Path v3 = dir.resolve("v3.bsave");
    Files.write(v3, resource("v3.bsave"));
    Catalog base = ImageReader.readCatalog(v2);
    Catalog c = ImageReader.readCatalog(v3);
    assertThat(c.id()).isEqualTo(V3_ID);
    assertThat(c.depth()).isEqualTo(1);
    assertThat(c.bases()).hasSize(1);
    assertThat(c.bases().get(0).id()).as("a v2 image is known by its catalog digest")
        .isEqualTo(ImageId.ofCatalogDigest(base.digest()));
    assertThat(c.bases().get(0).catalogDigest()).isEqualTo(base.digest());
    assertThat(c.bases().get(0).location()).isEqualTo("v2.bsave");
    // Recorded as a relative name: found beside the image, not in the working directory.
    io.beamsave.transforms.read.ImageChain chain =
        io.beamsave.transforms.read.ImageChain.resolve(v3.toString(), c, c.entries(), null);
    assertThat(chain.member(1).location()).isEqualTo(v2.toString());
    List<String> back = new ArrayList<>();
    for (io.beamsave.transforms.read.ReadTask t :
        io.beamsave.transforms.read.ReadTask.forEntries(chain, c.entries())) {
      try (ImageSource src = FileImageSource.open(Path.of(t.image()));
          ShardReader r = new ShardReader(t.blockSize())) {
        r.read(src, t.image(), t.shard(), t.info(), t.pieces(),
            (p, pos, buf, off, len, zero) -> back.add(p.path() + "="
                + new String(buf, off, len, StandardCharsets.ISO_8859_1)));
      }
    }
    assertThat(back).containsExactlyInAnyOrder("d/caf\\xe9=x", "hello.txt=hello, world\n");
  }

  @Test
  void theReaderReadsTheGoldenImageAsSpecified() throws Exception {
    Path image = dir.resolve("golden.bsave");
    Files.write(image, resource("v2.bsave"));
    Catalog c = ImageReader.readCatalog(image);
    assertThat(c).usingRecursiveComparison()
        .withEqualsForType(PathBytes::equals, PathBytes.class)
        .ignoringFields("id", "digest")
        .isEqualTo(v2Catalog(new ShardInfo(16, 30, 14, new int[] {30})));
    assertThat(c.bases()).isEmpty();
    assertThat(c.id()).isEqualTo(ImageId.ofCatalogDigest(c.digest()));
    assertThat(c.entries().get(1).path().bytes()).isEqualTo(
        new byte[] {'d', '/', 'c', 'a', 'f', (byte) 0xe9});
    assertThat(contents(image, c)).containsExactly(
        HexFormat.of().formatHex(X), HexFormat.of().formatHex(HELLO));
  }

  @Test
  void aVersion1ImageStillReads() throws Exception {
    Path image = dir.resolve("v1.bsave");
    Files.write(image, resource("v1.bsave"));
    Catalog c = ImageReader.readCatalog(image);
    assertThat(c.root()).as("version 1 recorded no root").isNull();
    assertThat(c.codecSpec()).isEqualTo("zstd:3");
    List<String> listing = new ArrayList<>();
    for (Entry e : c.entries()) {
      listing.add(e.type() + " " + Integer.toOctalString(e.mode()) + " " + e.size() + " "
          + e.mtimeSeconds() + "." + e.mtimeNanos() + " " + e.path()
          + (e.linkTarget() == null ? "" : " -> " + e.linkTarget()));
    }
    assertThat(listing).containsExactly(
        "DIRECTORY 755 0 1015218367.500000000 d",
        "SYMLINK 777 0 981173106.123456789 d/link -> ../hello.txt",
        "FILE 600 6000 981173106.123456789 d/random.bin",
        "FILE 644 8192 981173106.123456789 d/zeros.bin",
        "FILE 644 0 981173106.123456789 empty",
        "FILE 640 13 981173106.123456789 hello.txt",
        "FILE 644 3 981173106.123456789 unicode-ü.txt");
    assertThat(contents(image, c)).containsExactly(
        "e6aab2a8bf2ff7326dd7e839f58a4f63e091d076400bcfdb9c2bab1805b7e686",
        sha256(new byte[8192]),
        HexFormat.of().formatHex(HELLO),
        HexFormat.of().formatHex("ü\n".getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * Each non-empty file's bytes as read through the shard reader: as hex when small, else as
   * its SHA-256.
   */
  static List<String> contents(Path image, Catalog c) throws Exception {
    List<String> out = new ArrayList<>();
    try (ImageSource src = FileImageSource.open(image);
        ShardReader r = new ShardReader(c.blockSize())) {
      for (Entry e : c.entries()) {
        if (!e.isFile() || e.size() == 0) {
          continue;
        }
        byte[] back = new byte[(int) e.size()];
        long fileOffset = 0;
        for (Extent x : e.extents()) {
          long base = fileOffset;
          r.read(src, "golden", x.shard(), c.shards().get(x.shard()),
              List.of(new ShardReader.FileExtent(e.path(), base, x, 0)),
              (p, pos, buf, off, len, zero) -> System.arraycopy(buf, off, back, (int) pos, len));
          fileOffset += x.length();
        }
        out.add(back.length < 32 ? HexFormat.of().formatHex(back) : sha256(back));
      }
    }
    return out;
  }

  @Test
  void readsTheEncryptedGoldenImageWithItsKeyAndItsHeaderWithout() throws Exception {
    Path image = dir.resolve("v4.bsave");
    Files.write(image, resource("v4.bsave"));
    io.beamsave.transforms.crypt.Keys key = io.beamsave.transforms.crypt.Keys.NONE.withKeyFile(
        new io.beamsave.transforms.crypt.Recipient.KeyFile(resource("v4.key")));
    ImageEnds.Trailer ends;
    try (ImageSource src = FileImageSource.open(image)) {
      ends = ImageEnds.read(src);
    }
    assertThat(ends.version()).isEqualTo(4);
    assertThat(ends.dataStart()).isEqualTo(4096);
    assertThat(ends.size()).isEqualTo(ImageFormat.ENCRYPTED_TRAILER_SIZE);
    var header = ends.envelope();
    assertThat(header.id().toString()).isEqualTo("b441d465369ebe208815fef1133a5481");
    assertThat(header.createdMillis()).isEqualTo(0x01a234d2dc62L);
    assertThat(header.depth()).isZero();
    assertThat(header.bases()).isEmpty();
    assertThat(header.recipients()).isEqualTo("key file 74238bfa0b485654");
    try (ImageSource src = FileImageSource.open(image)) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> ImageReader.readCatalog(src))
          .isInstanceOf(io.beamsave.transforms.crypt.KeyException.class)
          .hasMessageContaining("is encrypted (for key file 74238bfa0b485654)");
    }
    Catalog c;
    try (ImageSource src = FileImageSource.open(image)) {
      c = ImageReader.readCatalog(src, key);
    }
    assertThat(c.library()).isEqualTo("golden");
    assertThat(c.codecSpec()).isEqualTo("none");
    assertThat(c.blockSize()).isEqualTo(BLOCK);
    assertThat(c.id()).isEqualTo(header.id());
    assertThat(c.createdMillis()).isEqualTo(header.createdMillis());
    assertThat(c.entries().stream().map(e -> e.path().toString()))
        .containsExactly("d", "d/link", "hello.txt");
    assertThat(c.entries().get(1).linkTarget()).isEqualTo(PathBytes.of("../hello.txt"));
    assertThat(c.entries().get(2).mtimeSeconds()).isEqualTo(981_173_106L);
    assertThat(c.shards()).hasSize(1);
    assertThat(c.shards().get(0).sealedKey()).hasSize(60);
    byte[] back = new byte[HELLO.length];
    Entry hello = c.entries().get(2);
    try (ImageSource src = FileImageSource.open(image);
        ShardReader r = new ShardReader(c.blockSize())) {
      r.read(src, "golden", c.key(), 0, c.shards().get(0),
          List.of(new ShardReader.FileExtent(hello.path(), 0, hello.extents().get(0), 0)),
          (p, pos, buf, off, len, zero) -> System.arraycopy(buf, off, back, (int) pos, len));
    }
    assertThat(back).isEqualTo(HELLO);
  }

  static String sha256(byte[] b) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
  }
}

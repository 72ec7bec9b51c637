package io.beamsave.transforms.image.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.CatalogWalk;
import io.beamsave.transforms.image.FileImageSource;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.block.BlockEncoder;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The paged catalog (format versions 5 and 7): pages cut in path order, a directory's entries across
 * page breaks, reads of one subtree that touch only its pages, and crafted page indexes, each
 * refused in one line.
 */
class PagedCatalogTest {
  @TempDir Path dir;

  static final int BLOCK = 4096;

  /** A golden image (image.GoldenImageTest makes and checks them), as its bytes. */
  static byte[] golden(String name) throws java.io.IOException {
    try (java.io.InputStream in = PagedCatalogTest.class.getResourceAsStream("/golden/" + name)) {
      return in.readAllBytes();
    }
  }

  /** {@code dirs} directories of {@code files} empty files each, with long names. */
  static List<Entry> tree(int dirs, int files) {
    List<Entry> entries = new ArrayList<>();
    for (int d = 0; d < dirs; d++) {
      String name = String.format("dir%04d", d);
      entries.add(Entries.dir(name));
      for (int f = 0; f < files; f++) {
        entries.add(Entries.file(name + "/" + "file-with-a-longish-name-" + f, 0));
      }
    }
    // Byte order would put these between "dir0000" and "dir0000/...": path order does not.
    entries.add(Entries.dir("dir0000-x"));
    entries.add(Entries.file("dir0000-x/f", 0));
    entries.add(Entries.dir("dir0000.x"));
    return entries;
  }

  Path write(List<Entry> entries) throws Exception {
    Path image = dir.resolve("t.bsave");
    Files.deleteIfExists(image);
    try (ImageWriter w = ImageWriter.open(image)) {
      w.finish(Entries.catalog("zstd:3", BLOCK, entries, List.of()), Codecs.parse("zstd:3"));
    }
    return image;
  }

  CatalogHead head(Path image) throws Exception {
    try (ImageSource src = FileImageSource.open(image)) {
      return ImageReader.readHead(src, Keys.NONE, false);
    }
  }

  @Test
  void pagesHoldTheTreeInPathOrderAndReadBackWhole() throws Exception {
    List<Entry> entries = tree(40, 1000);
    Path image = write(entries);
    CatalogHead head = head(image);
    assertThat(head.pages().size()).isGreaterThan(5);
    assertThat(head.totals().entries()).isEqualTo(entries.size());
    List<Entry> sorted = new ArrayList<>(entries);
    sorted.sort(PathOrder.ENTRIES);
    assertThat(Entries.paths(ImageReader.readCatalog(image).entries()))
        .containsExactlyElementsOf(Entries.paths(sorted));
    assertThat(Entries.paths(sorted).subList(0, 3))
        .containsExactly("dir0000", "dir0000/file-with-a-longish-name-0",
            "dir0000/file-with-a-longish-name-1");
    // Pages break inside directories: some page starts with a file, not its directory.
    assertThat(head.pages()).anySatisfy(p -> assertThat(p.firstPath().toString()).contains("/"));
  }

  @Test
  void aSubtreeReadsOnlyItsPagesAndFindsEntriesOnEitherSideOfABreak() throws Exception {
    Path image = write(tree(40, 1000));
    CatalogHead head = head(image);
    // A page that starts inside a directory: its first entry and the one before the break.
    CatalogHead.Page split = head.pages().stream()
        .filter(p -> p.firstPath().toString().contains("/")).skip(1).findFirst().orElseThrow();
    PathBytes parent = split.firstPath().parent();
    List<String> seen = new ArrayList<>();
    int pages;
    try (ImageSource src = FileImageSource.open(image)) {
      CatalogWalk walk = new CatalogWalk(src, head);
      walk.walk(parent, e -> seen.add(e.path().toString()));
      pages = walk.pagesRead();
    }
    assertThat(seen).hasSize(1001).startsWith(parent.toString())
        .contains(split.firstPath().toString());
    assertThat(pages).isBetween(2, 3);
    // One entry: one page.
    List<String> one = new ArrayList<>();
    try (ImageSource src = FileImageSource.open(image)) {
      CatalogWalk walk = new CatalogWalk(src, head);
      walk.walk(split.firstPath(), e -> one.add(e.path().toString()));
      assertThat(walk.pagesRead()).isEqualTo(1);
      // The entry just before the break is the last of the page before.
      Entry before = null;
      for (Entry e : ImageReader.readCatalog(image).entries()) {
        if (e.path().equals(split.firstPath())) {
          break;
        }
        before = e;
      }
      assertThat(walk.find(before.path())).isEqualTo(before);
      assertThat(walk.find(split.firstPath()).path()).isEqualTo(split.firstPath());
      assertThat(walk.find(PathBytes.of(split.firstPath() + "-not-there"))).isNull();
      // Each lookup read the one page that can hold its path; the last page stays at hand.
      assertThat(walk.pagesRead()).isEqualTo(3);
    }
    assertThat(one).containsExactly(split.firstPath().toString());
    // The directory beside it in byte order but not beneath it is not part of the subtree.
    List<String> first = new ArrayList<>();
    try (ImageSource src = FileImageSource.open(image)) {
      CatalogWalk walk = new CatalogWalk(src, head);
      walk.walk(PathBytes.of("dir0000"), e -> first.add(e.path().toString()));
      assertThat(first).hasSize(1001).doesNotContain("dir0000-x", "dir0000-x/f");
      List<String> none = new ArrayList<>();
      walk.walk(PathBytes.of("dir9"), e -> none.add(e.path().toString()));
      assertThat(none).isEmpty();
    }
  }

  @Test
  void anEntryLargerThanAPageHasAPageOfItsOwn() throws Exception {
    List<Entry> entries = new ArrayList<>();
    entries.add(Entries.dir("a"));
    entries.add(Entries.link("a/big", "t".repeat(65_530)));
    entries.add(Entries.link("a/big2", "u".repeat(65_530)));
    entries.add(Entries.file("b", 0));
    Path image = write(entries);
    CatalogHead head = head(image);
    assertThat(head.pages()).extracting(p -> p.firstPath().toString())
        .containsExactly("a", "a/big2", "b");
    assertThat(head.pages().get(1).entries()).isEqualTo(1);
    assertThat(ImageReader.readCatalog(image).entries()).hasSize(4);
  }

  /** Directories 250 deep of 240-byte names, and {@code files} empty files at the bottom. */
  static List<Entry> deepTree(int files) {
    List<Entry> entries = new ArrayList<>();
    StringBuilder path = new StringBuilder();
    for (int d = 0; d < 250; d++) {
      path.append(d == 0 ? "" : "/").append(String.format("%03d", d)).append("x".repeat(237));
      entries.add(Entries.dir(path.toString()));
    }
    for (int f = 0; f < files; f++) {
      entries.add(Entries.file(path + "/" + String.format("f%04d", f), 0));
    }
    return entries;
  }

  @Test
  void longPathsSharedByNeighboursCloseAPageByWhatTheyHoldWhole() throws Exception {
    // 60 KB paths that share all but a few bytes pack into a few bytes each: the page closes
    // by its paths' whole size, which a reader bounds.
    List<Entry> entries = deepTree(400);
    Path image = write(entries);
    CatalogHead head = head(image);
    assertThat(head.pages().size()).isGreaterThanOrEqualTo(3);
    assertThat(head.pages().get(0).rawLength()).isLessThan(ImageFormat.PAGE_TARGET);
    assertThat(Entries.paths(ImageReader.readCatalog(image).entries()))
        .containsExactlyElementsOf(Entries.paths(entries));
  }

  @Test
  void aPageWhosePathsTakeMoreWholeThanAReaderAllowsIsRefused() throws Exception {
    // Written past the writer's bound: 400 paths of 60 KB in a page of about 70 KB.
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    PackedEntries.Writer w = new PackedEntries.Writer(new java.io.DataOutputStream(raw));
    List<Entry> entries = deepTree(400);
    for (Entry e : entries) {
      w.write(e);
    }
    byte[] page = raw.toByteArray();
    assertThat(page.length).isLessThan(128 * 1024);
    Path golden = dir.resolve("v7.bsave");
    Files.write(golden, golden("v7.bsave"));
    CatalogHead h = head(golden);
    CatalogHead crafted = new CatalogHead(h.catalog(), null, h.totals(),
        List.of(new CatalogHead.Page(entries.get(0).path(), entries.size(), 1, page.length, 0, 0,
            CatalogHead.sha256(page))), ImageFormat.VERSION, null);
    assertThatThrownBy(() -> crafted.decodePage("crafted", 0, page))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("takes the page's paths past " + ImageFormat.MAX_PAGE_PATHS)
        .hasMessageNotContaining("\n");
  }

  @Test
  void anEmptyLibraryHasNoPages() throws Exception {
    Path image = write(List.of());
    assertThat(head(image).pages()).isEmpty();
    assertThat(ImageReader.readCatalog(image).entries()).isEmpty();
  }

  /** The image at {@code image} with its head's page index changed by {@code change}. */
  Path withIndex(Path image, UnaryOperator<List<CatalogHead.Page>> change) throws Exception {
    byte[] bytes = Files.readAllBytes(image);
    CatalogHead head = head(image);
    long headOffset = ByteBuffer.wrap(bytes).getLong(bytes.length - ImageFormat.TRAILER_SIZE);
    byte[] raw = CatalogWriter.head(head.catalog(), head.totals(),
        change.apply(new ArrayList<>(head.pages())), null);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(bytes, 0, (int) headOffset);
    int stored = 0;
    try (BlockEncoder enc = new BlockEncoder(Codecs.parse("none"), ImageFormat.MAX_BLOCK_SIZE)) {
      stored = enc.write(raw, raw.length, out);
    }
    ByteBuffer t = ByteBuffer.allocate(ImageFormat.TRAILER_SIZE);
    t.putLong(headOffset).putLong(stored).putLong(raw.length);
    t.putShort((short) ImageFormat.VERSION).putShort((short) 0);
    CRC32C crc = new CRC32C();
    crc.update(t.array(), 0, 28);
    t.putInt((int) crc.getValue()).put(ImageFormat.TRAILER_MAGIC);
    out.write(t.array());
    Path crafted = dir.resolve("crafted.bsave");
    Files.write(crafted, out.toByteArray());
    return crafted;
  }

  static CatalogHead.Page page(CatalogHead.Page p, int entries, int rawLength, long offset,
      long stored) {
    return new CatalogHead.Page(p.firstPath(), entries, p.blocks(), rawLength, offset, stored,
        p.digest());
  }

  @Test
  void craftedIndexesAreRefusedInOneLine() throws Exception {
    Path image = write(tree(10, 2000));
    assertThat(head(image).pages().size()).isGreaterThan(2);
    // A page that points outside the catalog, before the image's data.
    assertRefused(withIndex(image, pages -> {
      pages.set(0, page(pages.get(0), pages.get(0).entries(), pages.get(0).rawLength(), 0,
          pages.get(0).storedLength()));
      return pages;
    }), "does not follow", "outside", "overlaps");
    // Pages that overlap: the second starts inside the first.
    assertRefused(withIndex(image, pages -> {
      CatalogHead.Page p = pages.get(1);
      pages.set(1, page(p, p.entries(), p.rawLength(), p.offset() - 8, p.storedLength()));
      return pages;
    }), "does not follow the page before");
    // A page that claims more entries than its bytes hold.
    assertRefused(withIndex(image, pages -> {
      CatalogHead.Page p = pages.get(0);
      pages.set(0, page(p, 1_000_000, p.rawLength(), p.offset(), p.storedLength()));
      return pages;
    }), "claims 1000000 entries");
    // A page that claims more raw bytes than its stored bytes can expand to.
    assertRefused(withIndex(image, pages -> {
      CatalogHead.Page p = pages.get(0);
      pages.set(0, new CatalogHead.Page(p.firstPath(), p.entries(), 16384, 64 << 20, p.offset(),
          p.storedLength(), p.digest()));
      return pages;
    }), "cannot hold");
    // Pages out of path order.
    assertRefused(withIndex(image, pages -> {
      CatalogHead.Page a = pages.get(0);
      CatalogHead.Page b = pages.get(1);
      pages.set(0, new CatalogHead.Page(b.firstPath(), a.entries(), a.blocks(), a.rawLength(),
          a.offset(), a.storedLength(), a.digest()));
      return pages;
    }), "is not after the page before");
    // A page whose bytes are another's: its digest gives it away when it is read.
    Path swapped = withIndex(image, pages -> {
      CatalogHead.Page p = pages.get(1);
      pages.set(1, new CatalogHead.Page(p.firstPath(), p.entries(), p.blocks(), p.rawLength(),
          p.offset(), p.storedLength(), pages.get(0).digest()));
      return pages;
    });
    assertRefused(swapped, "catalog page 1: its bytes differ");
    // A page the index leaves out: its entries' totals no longer match.
    assertRefused(withIndex(image, pages -> {
      pages.remove(pages.size() - 1);
      return pages;
    }), "the pages end at", "the index holds");
  }

  static void assertRefused(Path image, String... anyOf) {
    assertThatThrownBy(() -> ImageReader.readCatalog(image))
        .isInstanceOf(ImageException.class)
        .satisfies(e -> {
          assertThat(e.getMessage()).doesNotContain("\n").startsWith(image.toString());
          assertThat(Arrays.stream(anyOf).anyMatch(e.getMessage()::contains))
              .as(e.getMessage()).isTrue();
        });
  }
}

package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.format.ImageId;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * The head of a paged catalog (format versions 5 and 6; docs/image-format.md, "Paged
 * catalog"): everything a catalog holds but its entries, the totals, and the index of the pages
 * that hold the entries. A reader loads it first, then only the pages it needs ({@link
 * #decodePage}, which checks a page as strictly as {@link CatalogReader} checks a whole
 * catalog's entries). Decoding bounds every page by what its stored bytes can hold, so a
 * crafted index cannot make a reader do more work than the image's size allows.
 *
 * @param catalog the catalog without entries; its digest is the head's SHA-256, which covers
 *     every page's digest
 * @param pageKey the key the pages are sealed under (encrypted images), else null
 * @param whole an older image's whole catalog, as one page in path order; null when paged
 */
public record CatalogHead(Catalog catalog, byte[] pageKey, Totals totals, List<Page> pages,
    int version, Catalog whole) {

  /**
   * Counts over all entries: what {@code list} and {@code images} show without the pages.
   * {@code changed} and {@code unreadable} count the entries with those flags.
   */
  public record Totals(long entries, long files, long rawBytes, long ownBytes, long changed,
      long unreadable) {}

  /**
   * One page: the path of its first entry, its entry count, and where its blocks lie ({@code
   * blocks} of them, numbered on from the pages before it when sealed), with the SHA-256 of its
   * raw bytes.
   */
  public record Page(PathBytes firstPath, int entries, int blocks, int rawLength, long offset,
      long storedLength, byte[] digest) {}

  /** Bytes of a page's index row, with the shortest first path. */
  private static final int MIN_PAGE_BYTES = 2 + 1 + 4 + 4 + 4 + 8 + 8 + 32;

  /**
   * Decodes and checks the head ({@code raw}) of an image whose shards start at {@code
   * dataStart} and whose head starts at {@code headOffset}.
   */
  public static CatalogHead decode(String image, byte[] raw, long dataStart, long headOffset,
      int version) throws ImageException {
    CatalogInput in = new CatalogInput(image, ByteBuffer.wrap(raw));
    Catalog p = CatalogReader.readPreamble(in, version);
    boolean sealed = ImageFormat.encrypted(version);
    List<ShardInfo> shards = CatalogReader.readShards(in, p.blockSize(), sealed);
    byte[] pageKey = sealed ? in.bytes(32, "page key") : null;
    Totals totals = new Totals(in.int64("entry total"), in.int64("file total"),
        in.int64("raw byte total"), in.int64("own byte total"), in.int64("changed total"),
        in.int64("unreadable total"));
    long count = in.count(MIN_PAGE_BYTES, "page count");
    List<Page> pages = new ArrayList<>((int) count);
    int overhead = ImageFormat.BLOCK_HEADER_SIZE + (sealed ? BlockSealer.OVERHEAD : 0);
    int minEntry = CatalogReader.minEntryBytes(version);
    long entries = 0;
    long pos = -1;
    PathBytes previous = null;
    long firstBlock = 0;
    for (int i = 0; i < count; i++) {
      String where = "page " + i;
      PathBytes first = in.name(where + " first path");
      int n = in.int32(where + " entry count");
      int blocks = in.int32(where + " block count");
      int rawLength = in.int32(where + " raw length");
      long offset = in.int64(where + " offset");
      long stored = in.int64(where + " stored length");
      byte[] digest = in.bytes(32, where + " digest");
      String problem = CatalogPaths.problem(first);
      if (problem != null) {
        throw in.fail(where + ": unsafe first path '" + first + "': " + problem);
      }
      if (previous != null && PathOrder.compare(previous, first) >= 0) {
        throw in.fail(where + ": first path '" + first + "' is not after the page before's");
      }
      if (rawLength <= 0 || rawLength > ImageFormat.MAX_PAGE_RAW || n <= 0
          || n > rawLength / minEntry) {
        throw in.fail(where + ": claims " + Integer.toUnsignedString(n) + " entries in "
            + Integer.toUnsignedString(rawLength) + " bytes");
      }
      long expectBlocks = (rawLength + (long) p.blockSize() - 1) / p.blockSize();
      if (blocks != expectBlocks || stored < (long) blocks * overhead
          || stored > (long) blocks * overhead + rawLength
          || rawLength > stored * ImageFormat.MAX_PAGE_EXPANSION) {
        throw in.fail(where + ": " + Integer.toUnsignedString(blocks) + " blocks of " + stored
            + " bytes cannot hold its " + rawLength + " raw bytes");
      }
      if (pos >= 0 && offset != pos) {
        throw in.fail(where + " at " + offset + " does not follow the page before (at " + pos
            + ")");
      }
      pos = offset + stored;
      if (pos > headOffset || firstBlock + blocks > Integer.MAX_VALUE) {
        throw in.fail(where + " at " + offset + " runs past the catalog head");
      }
      entries += n;
      firstBlock += blocks;
      previous = first;
      pages.add(new Page(first, n, blocks, rawLength, offset, stored, digest));
    }
    if (in.b.hasRemaining()) {
      throw new ImageException(image + ": catalog: " + in.b.remaining() + " trailing bytes");
    }
    if (pos >= 0 && pos != headOffset) {
      throw in.fail("the pages end at " + pos + ", not where the head starts (" + headOffset
          + ")");
    }
    if (totals.entries() != entries || totals.files() > entries || totals.changed() > entries
        || totals.unreadable() > entries) {
      throw in.fail("the index holds " + entries + " entries, the totals say "
          + totals.entries() + " with " + totals.files() + " files");
    }
    long pagesStart = pages.isEmpty() ? headOffset : pages.get(0).offset();
    CatalogValidator.checkLayout(image, shards, dataStart, pagesStart);
    Catalog c = new Catalog(p.library(), p.codecSpec(), p.createdMillis(), p.blockSize(),
        p.shardSize(), p.root(), List.of(), shards, p.id(), p.origin(), p.depth(), p.bases(),
        p.notes(), ImageId.catalogDigest(raw), null);
    return new CatalogHead(c, pageKey, totals, List.copyOf(pages), version, null);
  }

  /**
   * The head of an image whose catalog is one piece (format versions 1 to 4): one page of all
   * its entries, sorted into {@link PathOrder} (they were saved in byte order) so that readers
   * of either kind meet entries in the same order.
   */
  public static CatalogHead ofWhole(Catalog c) {
    List<Entry> sorted = new ArrayList<>(c.entries());
    sorted.sort(PathOrder.ENTRIES);
    Catalog ordered = new Catalog(c.library(), c.codecSpec(), c.createdMillis(), c.blockSize(),
        c.shardSize(), c.root(), List.copyOf(sorted), c.shards(), c.id(), c.origin(), c.depth(),
        c.bases(), c.notes(), c.digest(), c.key());
    List<Page> pages = sorted.isEmpty() ? List.of()
        : List.of(new Page(sorted.get(0).path(), sorted.size(), 0, 0, 0, 0, null));
    return new CatalogHead(ordered, null, new Totals(c.entries().size(), c.fileCount(),
        c.rawBytes(), c.ownRawBytes(), c.entries().stream().filter(Entry::changed).count(),
        c.entries().stream().filter(Entry::unreadable).count()), pages, 3, ordered);
  }

  /** The frame number page {@code index}'s first block is sealed with. */
  public int firstBlock(int index) {
    int n = 0;
    for (int i = 0; i < index; i++) {
      n += pages.get(i).blocks();
    }
    return n;
  }

  /**
   * The index of the page that holds {@code path} if any entry does, or the one before where it
   * would be: the last page whose first path is not after it; 0 when it is before them all.
   */
  public int pageOf(PathBytes path) {
    int lo = 0;
    int hi = pages.size() - 1;
    int found = 0;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (PathOrder.compare(pages.get(mid).firstPath(), path) <= 0) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /**
   * Decodes page {@code index} from its raw bytes and checks it: its digest, its entries (each
   * as {@link CatalogReader} checks one), in path order from the index's first path to before
   * the next page's, extents inside this image's shards and covering their files.
   */
  public List<Entry> decodePage(String image, int index, byte[] raw) throws ImageException {
    Page page = pages.get(index);
    String where = image + ": catalog page " + index;
    if (raw.length != page.rawLength() || !MessageDigest.isEqual(page.digest(), sha256(raw))) {
      throw new ImageException(where + ": its bytes differ from what the index recorded"
          + " (damaged or put together from two images)");
    }
    CatalogInput in = new CatalogInput(image, ByteBuffer.wrap(raw));
    List<Entry> out = new ArrayList<>(page.entries());
    PathBytes next = index + 1 < pages.size() ? pages.get(index + 1).firstPath() : null;
    PathBytes last = null;
    long firstEntry = 0;
    for (int i = 0; i < index; i++) {
      firstEntry += pages.get(i).entries();
    }
    int bases = catalog.bases().size();
    PackedEntries.Reader packed =
        ImageFormat.packed(version)
            ? new PackedEntries.Reader(in, bases, ImageFormat.metadata(version),
                ImageFormat.ranges(version)) : null;
    for (int i = 0; i < page.entries(); i++) {
      Entry e = packed != null ? packed.read(firstEntry + i)
          : CatalogReader.readEntry(in, firstEntry + i, version, bases);
      String problem = CatalogPaths.problem(e.path());
      if (problem != null) {
        throw new ImageException(where + ": unsafe path '" + e.path() + "': " + problem);
      }
      if (CatalogPaths.depth(e.path()) > ImageFormat.MAX_DEPTH) {
        throw new ImageException(where + ": '" + e.path() + "' nests deeper than "
            + ImageFormat.MAX_DEPTH + " directories");
      }
      if (i == 0 ? !e.path().equals(page.firstPath())
          : PathOrder.compare(last, e.path()) >= 0) {
        throw new ImageException(where + ": '" + e.path() + "' is out of path order");
      }
      if (next != null && PathOrder.compare(e.path(), next) >= 0) {
        throw new ImageException(where + ": '" + e.path() + "' belongs to a later page");
      }
      CatalogValidator.checkFile(image, e, catalog.shards());
      last = e.path();
      out.add(e);
    }
    if (in.b.hasRemaining()) {
      throw new ImageException(where + ": " + in.b.remaining() + " trailing bytes");
    }
    return out;
  }

  /**
   * The whole catalog from every page's entries, in order, checked as a whole (parents,
   * extents that share no byte) and against the totals.
   */
  public Catalog whole(String image, List<Entry> entries) throws ImageException {
    long files = 0;
    long raw = 0;
    long own = 0;
    long changed = 0;
    long unreadable = 0;
    for (Entry e : entries) {
      changed += e.changed() ? 1 : 0;
      unreadable += e.unreadable() ? 1 : 0;
      if (e.isFile()) {
        files++;
        raw += e.size();
        for (Extent x : e.extents()) {
          own += x.isReference() ? 0 : x.length();
        }
      }
    }
    if (files != totals.files() || raw != totals.rawBytes() || own != totals.ownBytes()
        || changed != totals.changed() || unreadable != totals.unreadable()) {
      throw new ImageException(image + ": catalog: the pages hold " + files + " files of " + raw
          + " bytes, the head's totals say " + totals.files() + " of " + totals.rawBytes());
    }
    CatalogValidator.checkTree(image, entries);
    CatalogValidator.checkExtents(image, entries, catalog.shards());
    Catalog c = catalog;
    return new Catalog(c.library(), c.codecSpec(), c.createdMillis(), c.blockSize(),
        c.shardSize(), c.root(), entries, c.shards(), c.id(), c.origin(), c.depth(), c.bases(),
        c.notes(), c.digest(), c.key());
  }

  public CatalogHead withKey(io.beamsave.transforms.crypt.ImageKey key) {
    return new CatalogHead(catalog.withKey(key), pageKey, totals, pages, version, whole);
  }

  /** The SHA-256 of a page's raw bytes, as its row of the index records it. */
  public static byte[] sha256(byte[] raw) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(raw);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}

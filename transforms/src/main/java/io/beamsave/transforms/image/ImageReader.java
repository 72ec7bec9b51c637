package io.beamsave.transforms.image;

import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.crypt.Envelope;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.block.BlockDecoder;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.CatalogReader;
import io.beamsave.transforms.image.catalog.Entry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import javax.crypto.spec.SecretKeySpec;

/**
 * Opens an image from its end: checks header and trailer, then reads and validates the catalog;
 * an encrypted image's with the key that one of the operator's {@link Keys} unwraps. Shard data
 * is read separately, by {@link ShardReader}, with its own channel per worker.
 */
public final class ImageReader {
  private ImageReader() {}

  /** Reads and validates the catalog of the image at {@code path}. */
  public static Catalog readCatalog(Path path) throws IOException {
    try (ImageSource src = FileImageSource.open(path)) {
      return readCatalog(src);
    }
  }

  /** Reads and validates the catalog of an image that is not encrypted. */
  public static Catalog readCatalog(ImageSource ch) throws IOException {
    return readCatalog(ch, Keys.NONE);
  }

  /**
   * Reads and validates the catalog of an image: header, trailer and catalog blocks only. An
   * encrypted image is opened with {@code keys}; its catalog carries the image's key. Given any
   * key, an image that is not encrypted is refused: whoever can write where the images are
   * could otherwise put a plain image of their own making in the place of an encrypted one,
   * and a reader expecting what its keys protect would take it.
   */
  public static Catalog readCatalog(ImageSource ch, Keys keys) throws IOException {
    return readCatalog(ch, keys, false);
  }

  /**
   * Like {@link #readCatalog(ImageSource, Keys)}; with {@code plainToo}, an image that is not
   * encrypted is read whatever keys are given (to list what a directory holds, say).
   */
  public static Catalog readCatalog(ImageSource ch, Keys keys, boolean plainToo)
      throws IOException {
    String name = ch.name();
    Opened o = open(ch, keys, plainToo);
    ImageEnds.Trailer t = o.trailer();
    try {
      Catalog c;
      if (ImageFormat.paged(t.version())) {
        CatalogHead h = readHead(ch, o);
        List<Entry> entries =
            new ArrayList<>((int) Math.min(h.totals().entries(), 1 << 20));
        for (int i = 0, block = 0; i < h.pages().size(); block += h.pages().get(i).blocks(), i++) {
          entries.addAll(readPage(ch, h, i, block));
        }
        c = h.whole(name, entries);
      } else {
        ch.willRead(t.catalogOffset(), t.catalogStored());
        byte[] raw = readCatalogBlocks(name, ch, t.catalogOffset(), t.catalogStored(),
            o.rawLength(), false, o.sealKey(), 0);
        c = CatalogReader.decode(name, raw, t.dataStart(), t.catalogOffset(), t.version());
      }
      if (o.key() != null) {
        checkLineage(name, c, t.envelope());
        return c.withKey(o.key());
      }
      return c;
    } catch (OutOfMemoryError e) {
      throw new ImageException(name + ": not enough memory for its catalog of " + o.rawLength()
          + " bytes; give Java more (BEAMSAVE_JAVA_OPTS=-Xmx...)");
    }
  }

  /**
   * The head of an image's catalog: for a paged catalog (version 5 on), its head alone, whose
   * pages {@link #readPage} then reads one at a time; for an older image, whose catalog is one
   * piece, a head of one page that holds every entry, read whole.
   */
  public static CatalogHead readHead(ImageSource ch, Keys keys, boolean plainToo)
      throws IOException {
    Opened o = open(ch, keys, plainToo);
    if (!ImageFormat.paged(o.trailer().version())) {
      return CatalogHead.ofWhole(readCatalog(ch, keys, plainToo));
    }
    CatalogHead h = readHead(ch, o);
    if (o.key() != null) {
      checkLineage(ch.name(), h.catalog(), o.trailer().envelope());
      return h.withKey(o.key());
    }
    return h;
  }

  /** The entries of page {@code index} of {@code head}, read and checked. */
  public static List<Entry> readPage(ImageSource ch, CatalogHead head, int index)
      throws IOException {
    if (head.whole() != null) {
      return head.whole().entries();
    }
    return readPage(ch, head, index, head.firstBlock(index));
  }

  private static List<Entry> readPage(ImageSource ch, CatalogHead head, int index,
      int firstBlock) throws IOException {
    CatalogHead.Page p = head.pages().get(index);
    SecretKeySpec key = head.pageKey() == null ? null : BlockSealer.key(head.pageKey());
    byte[] raw = readCatalogBlocks(ch.name() + ": catalog page " + index, ch, p.offset(),
        p.storedLength(), p.rawLength(), false, key, firstBlock);
    return head.decodePage(ch.name(), index, raw);
  }

  private static CatalogHead readHead(ImageSource ch, Opened o) throws IOException {
    ImageEnds.Trailer t = o.trailer();
    byte[] raw = readCatalogBlocks(ch.name(), ch, t.catalogOffset(), t.catalogStored(),
        o.rawLength(), false, o.sealKey(), 0);
    return CatalogHead.decode(ch.name(), raw, t.dataStart(), t.catalogOffset(), t.version());
  }

  /**
   * An image opened at its ends: the trailer, the image's key and its catalog's (null when not
   * encrypted), and the raw length of the catalog (or of a paged catalog's head).
   */
  private record Opened(ImageEnds.Trailer trailer, ImageKey key, SecretKeySpec sealKey,
      long rawLength) {}

  private static Opened open(ImageSource ch, Keys keys, boolean plainToo) throws IOException {
    String name = ch.name();
    ImageEnds.Trailer t = ImageEnds.read(ch);
    if (!t.encrypted() && !keys.isEmpty() && !plainToo) {
      throw new ImageException(name + " is not encrypted, yet keys were given to open it: it"
          + " is no image saved with them (one may have been put in its place); to read it"
          + " anyway, give no --identity, --key-file or --password-file, and unset"
          + " BEAMSAVE_PASSWORD");
    }
    ImageKey key = t.encrypted() ? ImageKey.open(name, t.envelope(), keys) : null;
    ImageEnds.CatalogSeal seal = key == null ? null : ImageEnds.openCatalogSeal(name, t, key);
    return new Opened(t, key, seal == null ? null : seal.key(),
        seal == null ? t.catalogRaw() : seal.rawLength());
  }

  /**
   * The header of an encrypted image records its id and lineage for readers without a key; the
   * catalog, authenticated, must agree, so what they see is what the image is.
   */
  private static void checkLineage(String name, Catalog c, Envelope e) throws ImageException {
    boolean basesKnown = new HashSet<>(e.bases()).containsAll(
        c.bases().stream().map(Catalog.Base::id).toList());
    if (!c.id().equals(e.id()) || c.createdMillis() != e.createdMillis()
        || c.depth() != e.depth() || !java.util.Objects.equals(c.origin(), e.origin())
        || !basesKnown) {
      throw new ImageException(name + ": the catalog's id or lineage differs from the header's"
          + " (the image was put together from two images)");
    }
  }

  /** The library and codec an image was saved with; see {@link #readLabel(ImageSource, Keys)}. */
  public static CatalogReader.Label readLabel(ImageSource ch) throws IOException {
    return readLabel(ch, Keys.NONE);
  }

  /**
   * The library and codec an image was saved with, from the start of its catalog only: far
   * cheaper than {@link #readCatalog} for a catalog of many entries, and it checks less.
   */
  public static CatalogReader.Label readLabel(ImageSource ch, Keys keys) throws IOException {
    ImageEnds.Trailer t = ImageEnds.read(ch);
    ImageEnds.CatalogSeal seal = t.encrypted() ? ImageEnds.openCatalogSeal(ch.name(), t,
        ImageKey.open(ch.name(), t.envelope(), keys)) : null;
    byte[] first = readCatalogBlocks(ch.name(), ch, t.catalogOffset(), t.catalogStored(),
        seal == null ? t.catalogRaw() : seal.rawLength(), true,
        seal == null ? null : seal.key(), 0);
    return CatalogReader.decodeLabel(ch.name(), first);
  }

  /**
   * Reads and decodes the blocks at {@code offset} that hold {@code rawTotal} raw bytes: a
   * catalog, a head or a page; sealed under {@code key}, their frames are numbered from {@code
   * firstIndex}.
   */
  private static byte[] readCatalogBlocks(String name, ImageSource ch, long offset, long stored,
      long rawTotal, boolean firstOnly, SecretKeySpec key, int firstIndex) throws IOException {
    // rawTotal is bounded by ImageEnds.read; the blocks are decoded straight into their place.
    byte[] raw = firstOnly ? null : new byte[(int) rawTotal];
    int filled = 0;
    long pos = offset;
    long end = offset + stored;
    int index = firstIndex;
    int head = key == null ? ImageFormat.BLOCK_HEADER_SIZE : BlockSealer.FRAME_HEADER;
    try (BlockDecoder decoder = new BlockDecoder()) {
      while (pos < end) {
        String where = name + ": catalog block " + (index - firstIndex);
        if (end - pos < head) {
          throw new ImageException(where + ": truncated");
        }
        ByteBuffer h = ImageEnds.readAt(ch, pos, head, name);
        int len;
        long blockRaw;
        byte[] block;
        int blockLen;
        if (key == null) {
          blockRaw = Integer.toUnsignedLong(h.getInt(4));
          long blockStored = Integer.toUnsignedLong(h.getInt(8));
          if (blockRaw == 0 || blockRaw > ImageFormat.MAX_BLOCK_SIZE || blockStored > blockRaw
              || blockStored > end - pos - head || blockRaw > rawTotal - filled) {
            throw new ImageException(where + ": invalid lengths");
          }
          len = (int) (head + blockStored);
          block = ImageEnds.readAt(ch, pos, len, name).array();
          blockLen = len;
        } else {
          long sealed = Integer.toUnsignedLong(h.getInt(0));
          if (sealed < ImageFormat.BLOCK_HEADER_SIZE + BlockSealer.TAG
              || sealed > ImageFormat.BLOCK_HEADER_SIZE + ImageFormat.MAX_BLOCK_SIZE
                  + BlockSealer.TAG
              || sealed > end - pos - head) {
            throw new ImageException(where + ": invalid lengths");
          }
          len = (int) (head + sealed);
          byte[] frame = ImageEnds.readAt(ch, pos, len, name).array();
          blockLen = decoder.open(key, index, frame, len, where);
          block = decoder.opened();
          blockRaw = Integer.toUnsignedLong(ByteBuffer.wrap(block).getInt(4));
        }
        if (blockRaw == 0 || blockRaw > ImageFormat.MAX_BLOCK_SIZE
            || blockRaw > rawTotal - filled) {
          throw new ImageException(where + ": invalid lengths");
        }
        if (raw == null) {
          raw = new byte[(int) blockRaw];
        }
        decoder.decode(block, blockLen, raw, filled, (int) blockRaw, where);
        filled += (int) blockRaw;
        if (firstOnly) {
          return raw;
        }
        pos += len;
        index++;
      }
    }
    if (filled != rawTotal) {
      throw new ImageException(name + ": catalog holds " + filled + " of " + rawTotal + " bytes");
    }
    return raw;
  }
}

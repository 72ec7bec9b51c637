package io.beamsave.transforms.image;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.CatalogReader;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PosixAcl;
import io.beamsave.transforms.read.ReadTask;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Coverage-guided fuzzing of everything that reads an image: the catalog decoder (the one
 * validator), the image reader and the shard reader with every codec's decompressor behind it.
 * Whatever the bytes, each must either succeed or throw {@link ImageException}; any other
 * exception, a crash of the JVM (native code given a bad offset), a hang or an
 * OutOfMemoryError is a finding. The first input byte picks the target:
 *
 * <ul>
 *   <li>0, 1: the rest is a raw catalog of format version 2 or 1, decoded directly;
 *   <li>2: the rest is an image (any version) whose checksums are made right first (the trailer's, and each
 *       block's in sequence), so mutations get past the CRC32C to the structure and the codecs;
 *       its catalog is read, then every file's pieces through the shard reader.
 *   <li>4: the rest is a u16 entry count and a page of a paged catalog (version 5, or with the
 *       count's top bit set version 7, with its next bit too version 13), decoded against an
 *       index row made to agree with it;
 *   <li>5: the rest is the head of a paged catalog, decoded directly;
 *   <li>6: the rest is a POSIX access ACL's attribute value ({@link PosixAcl}); what parses
 *       must format to a value that parses to the same ACL, answer every question, and narrow
 *       to any mode as a restore narrows it;
 *   <li>2, 7: as 2;
 *   <li>3: the rest is an encrypted image (format version 4) whose header, frame and trailer
 *       checksums are made right first: its frames are walked without a key ({@link
 *       StructureCheck}), then it is opened with the key of {@code golden/v4.key}, which a
 *       mutation leaves unable to open anything but what it does not touch: the header's
 *       decoder, the stanzas, the key checks and the frame walk are what it reaches.
 * </ul>
 *
 * <p>{@code mvn verify} runs the seeds in {@code ImageDecodersFuzzTestInputs/} (golden and crafted
 * images) in every test run, and fuzzes for a bounded time in the {@code fuzz} execution
 * ({@code JAZZER_FUZZ=1}), for one minute.
 */
class ImageDecodersFuzzTest {

  @FuzzTest(maxDuration = "60s")
  void decoders(byte[] input) {
    if (input.length == 0) {
      return;
    }
    byte[] rest = java.util.Arrays.copyOfRange(input, 1, input.length);
    try {
      switch (input[0] & 7) {
        case 0 -> CatalogReader.decode("fuzz", rest, 1L << 40, 2);
        case 1 -> CatalogReader.decode("fuzz", rest, 1L << 40, 1);
        case 3 -> readEncryptedImage(fixEncryptedChecksums(rest));
        case 4 -> decodePage(rest);
        case 5 -> CatalogHead.decode("fuzz", rest, 16, 1L << 40, ImageFormat.VERSION);
        case 6 -> posixAcl(rest);
        default -> readWholeImage(fixChecksums(rest));
      }
    } catch (ImageException expected) {
      // A clean, named refusal is the right answer to a bad image.
    }
  }

  /** Parses an ACL; what parses must round-trip and answer an access check for anyone. */
  static void posixAcl(byte[] value) throws ImageException {
    PosixAcl acl = PosixAcl.parse(value);
    if (!PosixAcl.parse(acl.format()).equals(acl) || !acl.withMode(acl.mode()).equals(acl)
        || acl.isMinimal() != PosixAcl.ofMode(acl.mode()).equals(acl)) {
      throw new AssertionError("parsed as " + acl + ", which does not round-trip");
    }
    int seed = java.util.Arrays.hashCode(value);
    acl.permits(seed & 3, new int[] {(seed >> 2) & 3, (seed >> 4) & 3}, 1, 2, (seed >> 6) & 7);
    // What a restore does with a saved ACL (restore.Withheld): narrows it to the listed mode,
    // which must give that mode and an ACL that parses back as itself.
    int mode = (seed >>> 9) & 07777;
    PosixAcl narrowed = acl.withMode(mode);
    if (narrowed.mode() != (mode & 0777) || !PosixAcl.parse(narrowed.format()).equals(narrowed)) {
      throw new AssertionError(acl + " narrowed to " + Integer.toOctalString(mode) + " is "
          + narrowed);
    }
  }

  /**
   * A page of golden/v5.bsave's catalog, or with the count's top bit set of golden/v7.bsave's
   * (packed entries), and with the next bit set too of golden/v13.bsave's (packed entries with
   * metadata and range digests): a u16 entry count, then the page's raw bytes, checked against an index
   * row that agrees with them (first path, length, digest), so that mutations reach the
   * entries' checks.
   */
  static void decodePage(byte[] input) throws ImageException {
    if (input.length < 4) {
      return;
    }
    int count = ByteBuffer.wrap(input).getShort(0) & 0xffff;
    boolean packed = (count & 0x8000) != 0;
    boolean ranges = packed && (count & 0x4000) != 0;
    int entries = Math.max(1, count & (packed ? 0x3fff : 0x7fff));
    byte[] raw = java.util.Arrays.copyOfRange(input, 2, input.length);
    PathBytes first;
    if (packed) {
      // The first entry shares nothing with the one before it: 0, its path's length, its path.
      ByteBuffer in = ByteBuffer.wrap(raw);
      varint(in);
      long n = varint(in);
      if (n < 0 || n > in.remaining()) {
        return;
      }
      byte[] path = new byte[(int) n];
      in.get(path);
      first = PathBytes.of(path);
    } else {
      int nameLength = ByteBuffer.wrap(raw).getShort(0) & 0xffff;
      if (nameLength > raw.length - 2) {
        return;
      }
      first = PathBytes.of(java.util.Arrays.copyOfRange(raw, 2, 2 + nameLength));
    }
    CatalogHead h = ranges ? V13_HEAD : packed ? V7_HEAD : V5_HEAD;
    CatalogHead one = new CatalogHead(h.catalog(), null, h.totals(), List.of(new CatalogHead.Page(
        first, entries, 1, raw.length, 0, 0, CatalogHead.sha256(raw))), h.version(), null);
    one.decodePage("fuzz", 0, raw);
  }

  /**
   * An unsigned LEB128 varint as the catalog's packed entries hold them, refused as the
   * catalog's reader refuses it: cut short, longer than it needs, or past 64 bits.
   */
  private static long varint(ByteBuffer in) throws ImageException {
    long v = 0;
    for (int shift = 0; ; shift += 7) {
      if (!in.hasRemaining()) {
        throw new ImageException("fuzz: varint cut short");
      }
      int x = Byte.toUnsignedInt(in.get());
      if (shift == 63 && x > 1 || shift > 0 && x == 0) {
        throw new ImageException("fuzz: not a varint of the shortest form");
      }
      v |= (long) (x & 0x7f) << shift;
      if (x < 0x80) {
        return v;
      }
    }
  }

  private static final CatalogHead V5_HEAD = head("v5.bsave");
  private static final CatalogHead V7_HEAD = head("v7.bsave");
  private static final CatalogHead V13_HEAD = head("v13.bsave");

  private static CatalogHead head(String golden) {
    try (ImageSource src = new BytesImageSource(GoldenImageTest.resource(golden))) {
      return ImageReader.readHead(src, io.beamsave.transforms.crypt.Keys.NONE, false);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  static void readWholeImage(byte[] image) throws ImageException {
    readWholeImage(image, io.beamsave.transforms.crypt.Keys.NONE);
  }

  /** Reads the image's catalog with {@code keys}, then every file's pieces in its own shards. */
  static void readWholeImage(byte[] image, io.beamsave.transforms.crypt.Keys keys)
      throws ImageException {
    try (ImageSource src = new BytesImageSource(image)) {
      Catalog c = ImageReader.readCatalog(src, keys);
      // Bases are other images; this one's own shards are what its bytes can reach.
      List<Entry> files = c.entries().stream().filter(Entry::isFile)
          .map(e -> e.withExtents(e.extents().stream().filter(x -> !x.isReference()).toList()))
          .toList();
      try (ShardReader r = new ShardReader(c.blockSize())) {
        for (ReadTask t : ReadTask.forEntries(
            io.beamsave.transforms.read.ImageChain.of("fuzz", c), files)) {
          r.read(src, "fuzz", c.key(), t.shard(), t.info(), t.pieces(),
              (p, pos, buf, off, len, zero) -> java.util.Objects.checkFromIndexSize(off, len,
                  buf.length));
        }
      }
    } catch (ImageException e) {
      throw e;
    } catch (java.io.IOException e) {
      throw new AssertionError("an I/O error that is not an ImageException", e);
    }
  }

  /** The key golden/v4.bsave and the encrypted seed were saved with. */
  static final io.beamsave.transforms.crypt.Keys V4_KEY = io.beamsave.transforms.crypt.Keys.NONE
      .withKeyFile(new io.beamsave.transforms.crypt.Recipient.KeyFile(v4Key()));

  private static byte[] v4Key() {
    byte[] k = new byte[32];
    for (int i = 0; i < k.length; i++) {
      k[i] = (byte) i;
    }
    return k;
  }

  static void readEncryptedImage(byte[] image) throws ImageException {
    try (ImageSource src = new BytesImageSource(image)) {
      StructureCheck.check(src, n -> {});
    } catch (ImageException e) {
      // Damage the walk finds is a finding of its own; the reader must refuse it too.
    } catch (java.io.IOException e) {
      throw new AssertionError("an I/O error that is not an ImageException", e);
    }
    readWholeImage(image, V4_KEY);
  }

  /**
   * Makes an encrypted image's checksums right: the header's CRC (at the end of the length its
   * bytes 12..15 claim), each frame's in sequence from there, and the trailer's.
   */
  static byte[] fixEncryptedChecksums(byte[] image) {
    byte[] b = image.clone();
    int trailer = ImageFormat.ENCRYPTED_TRAILER_SIZE;
    if (b.length < 16 + trailer) {
      return b;
    }
    ByteBuffer w = ByteBuffer.wrap(b);
    CRC32C crc = new CRC32C();
    long h = Integer.toUnsignedLong(w.getInt(12));
    if (h >= 8 && h <= b.length - trailer) {
      crc.update(b, 0, (int) h - 4);
      w.putInt((int) h - 4, (int) crc.getValue());
    }
    int end = b.length - trailer;
    crc.reset();
    crc.update(b, end, trailer - 12);
    w.putInt(end + trailer - 12, (int) crc.getValue());
    long pos = h;
    while (pos >= 16 && pos + 8 <= end) {
      long n = Integer.toUnsignedLong(w.getInt((int) pos)) & 0x7fffffffL;
      if (n > end - pos - 8) {
        break;
      }
      crc.reset();
      crc.update(b, (int) pos, 4);
      crc.update(b, (int) pos + 8, (int) n);
      w.putInt((int) pos + 4, (int) crc.getValue());
      pos += 8 + n;
    }
    return b;
  }

  /** Makes the trailer's CRC and every block's, walked in sequence from the header, right. */
  static byte[] fixChecksums(byte[] image) {
    byte[] b = image.clone();
    int end = b.length - ImageFormat.TRAILER_SIZE;
    if (end < ImageFormat.HEADER_SIZE) {
      return b;
    }
    CRC32C crc = new CRC32C();
    crc.update(b, end, 28);
    ByteBuffer.wrap(b).putInt(end + 28, (int) crc.getValue());
    int pos = ImageFormat.HEADER_SIZE;
    while (pos + ImageFormat.BLOCK_HEADER_SIZE <= end) {
      long stored = Integer.toUnsignedLong(ByteBuffer.wrap(b).getInt(pos + 8));
      if (stored > end - pos - ImageFormat.BLOCK_HEADER_SIZE) {
        break;
      }
      crc.reset();
      crc.update(b, pos, 12);
      crc.update(b, pos + ImageFormat.BLOCK_HEADER_SIZE, (int) stored);
      ByteBuffer.wrap(b).putInt(pos + 12, (int) crc.getValue());
      pos += ImageFormat.BLOCK_HEADER_SIZE + (int) stored;
    }
    return b;
  }

  /** An image held in memory. */
  static final class BytesImageSource implements ImageSource {
    private final byte[] bytes;

    BytesImageSource(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public String name() {
      return "fuzz";
    }

    @Override
    public long size() {
      return bytes.length;
    }

    @Override
    public void read(long pos, byte[] buf, int off, int len) throws ImageException {
      if (pos < 0 || pos > bytes.length - (long) len) {
        throw new ImageException("fuzz: unexpected end of image at offset " + pos);
      }
      System.arraycopy(bytes, (int) pos, buf, off, len);
    }

    @Override
    public void close() {}
  }
}

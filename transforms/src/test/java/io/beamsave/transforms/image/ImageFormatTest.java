package io.beamsave.transforms.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.block.BlockDecoder;
import io.beamsave.transforms.image.block.BlockEncoder;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.ExtentDigest;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.ShardInfo;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImageFormatTest {
  static final int BLOCK = 4096;
  @TempDir Path dir;

  static byte[] sha(byte[] b, int off, int len) {
    try (ExtentDigest d = new ExtentDigest()) {
      d.update(b, off, len);
      return d.digest();
    }
  }

  /** Writes an image of one file "data" (text, then random, then zeros) as a single shard. */
  Path writeImage(String codec, byte[] data) throws Exception {
    java.io.ByteArrayOutputStream shard = new java.io.ByteArrayOutputStream();
    List<Integer> lengths = new ArrayList<>();
    try (BlockEncoder enc = new BlockEncoder(Codecs.parse(codec), BLOCK)) {
      for (int off = 0; off < data.length; off += BLOCK) {
        int n = Math.min(BLOCK, data.length - off);
        byte[] slice = java.util.Arrays.copyOfRange(data, off, off + BLOCK);
        lengths.add(enc.write(slice, n, shard));
      }
    }
    Path image = dir.resolve(codec.replace(':', '-') + ".bsave");
    byte[] blocks = shard.toByteArray();
    long offset = ImageWriter.appendShard(image, blocks, blocks.length);
    assertThat(offset).isEqualTo(ImageFormat.HEADER_SIZE);
    try (ImageWriter w = ImageWriter.open(image)) {
      ShardInfo s =
          new ShardInfo(offset, blocks.length, data.length,
              lengths.stream().mapToInt(Integer::intValue).toArray());
      Entry file =
          new Entry(PathBytes.of("data"), EntryType.FILE, 0, 0640, 1, 2, 1_700_000_000L, 5, 7,
              8, 9, data.length, null,
              List.of(new Extent(0, 0, data.length, sha(data, 0, data.length))));
      Entry d = Entries.dir("d");
      Entry link = Entries.link("d/l", "../data");
      w.finish(new Catalog("lib", codec, 42, BLOCK, 1 << 20, Entries.root(),
          List.of(file, d, link), List.of(s)), Codecs.parse(codec));
    }
    return image;
  }

  static byte[] sample() {
    byte[] data = new byte[5 * BLOCK + 123];
    byte[] text = "backup ".repeat(4000).getBytes();
    System.arraycopy(text, 0, data, 0, 2 * BLOCK);
    byte[] rnd = new byte[BLOCK];
    new Random(1).nextBytes(rnd);
    System.arraycopy(rnd, 0, data, 2 * BLOCK, BLOCK);
    return data; // the rest stays zero
  }

  byte[] readBack(Path image, Catalog c) throws Exception {
    Entry e = c.entries().stream().filter(Entry::isFile).findFirst().orElseThrow();
    byte[] out = new byte[(int) e.size()];
    try (ImageSource ch = FileImageSource.open(image);
        ShardReader r = new ShardReader(c.blockSize())) {
      r.read(ch, "img", 0, c.shards().get(0),
          List.of(new ShardReader.FileExtent(e.path(), 0, e.extents().get(0), 0)),
          (p, pos, buf, off, len, zero) -> System.arraycopy(buf, off, out, (int) pos, len));
    }
    return out;
  }

  @Test
  void writesAndReadsBackEveryCodecWithRawAndZeroBlocks() throws Exception {
    byte[] data = sample();
    for (String codec : List.of("none", "lz4", "zlib:6", "zstd:3", "xz:1", "auto", "auto:10")) {
      Path image = writeImage(codec, data);
      assertThat(ImageWriter.partialPath(image)).doesNotExist();
      Catalog c = ImageReader.readCatalog(image);
      assertThat(c.library()).isEqualTo("lib");
      // Entries come back in path order, whatever order the writer was given them in.
      assertThat(Entries.paths(c.entries())).containsExactly("d", "d/l", "data");
      assertThat(c.entries().get(1).linkTarget()).isEqualTo(PathBytes.of("../data"));
      assertThat(c.entries().get(2).mode()).isEqualTo(0640);
      assertThat(readBack(image, c)).as(codec).isEqualTo(data);
      // Zero blocks take only their header; raw blocks are not inflated.
      int[] lens = c.shards().get(0).blockLengths();
      assertThat(lens[3]).isEqualTo(ImageFormat.BLOCK_HEADER_SIZE);
      assertThat(lens[2]).isEqualTo(ImageFormat.BLOCK_HEADER_SIZE + BLOCK);
    }
  }

  @Test
  void everyFlippedByteIsDetected() throws Exception {
    Path image = writeImage("zstd:3", sample());
    byte[] good = Files.readAllBytes(image);
    Catalog c = ImageReader.readCatalog(image);
    int failures = 0;
    for (int i = 0; i < good.length; i++) {
      byte[] bad = good.clone();
      bad[i] ^= 0x01;
      Path p = dir.resolve("bad.bsave");
      Files.write(p, bad);
      try {
        Catalog read = ImageReader.readCatalog(p);
        readBack(p, read);
      } catch (ImageException expected) {
        failures++;
        continue;
      }
      throw new AssertionError("flipping byte " + i + " of " + good.length + " went unnoticed");
    }
    assertThat(failures).isEqualTo(good.length);
    assertThat(c.shards()).hasSize(1);
  }

  @Test
  void namesTheDamagedBlock() throws Exception {
    Path image = writeImage("zstd:3", sample());
    Catalog c = ImageReader.readCatalog(image);
    long block1 = c.shards().get(0).blockOffset(1);
    byte[] bytes = Files.readAllBytes(image);
    bytes[(int) block1 + 20] ^= 0x40;
    Files.write(image, bytes);
    assertThatThrownBy(() -> readBack(image, ImageReader.readCatalog(image)))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("shard 0 block 1")
        .hasMessageContaining("checksum");
  }

  @Test
  void rejectsTruncatedWrongMagicAndTinyFiles() throws Exception {
    Path image = writeImage("lz4", sample());
    byte[] good = Files.readAllBytes(image);
    Path p = dir.resolve("x.bsave");
    Files.write(p, java.util.Arrays.copyOf(good, good.length - 1));
    assertThatThrownBy(() -> ImageReader.readCatalog(p)).hasMessageContaining("trailer");
    byte[] magic = good.clone();
    magic[0] = 'X';
    Files.write(p, magic);
    assertThatThrownBy(() -> ImageReader.readCatalog(p)).hasMessageContaining("not a beamsave image");
    Files.write(p, new byte[10]);
    assertThatThrownBy(() -> ImageReader.readCatalog(p)).hasMessageContaining("too short");
    assertThatThrownBy(() -> ImageReader.readCatalog(dir.resolve("missing")))
        .hasMessageContaining("no such image");
  }

  @Test
  void aTrailerClaimingAHugeCatalogFailsWithoutAllocatingIt() throws Exception {
    Path image = writeImage("none", sample());
    byte[] b = Files.readAllBytes(image);
    ByteBuffer t = ByteBuffer.wrap(b, b.length - ImageFormat.TRAILER_SIZE, ImageFormat.TRAILER_SIZE).slice();
    t.putLong(16, Long.MAX_VALUE / 2); // catalog raw length
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(b, b.length - ImageFormat.TRAILER_SIZE, 28);
    t.putInt(28, (int) crc.getValue());
    Files.write(image, b);
    assertThatThrownBy(() -> ImageReader.readCatalog(image))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("claims a catalog of");
  }

  @Test
  void blockEncoderStoresIncompressibleBlocksRaw() throws IOException {
    byte[] rnd = new byte[BLOCK];
    new Random(3).nextBytes(rnd);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (BlockEncoder enc = new BlockEncoder(Codecs.parse("xz:6"), BLOCK)) {
      assertThat(enc.write(rnd, BLOCK, out)).isEqualTo(BLOCK + ImageFormat.BLOCK_HEADER_SIZE);
      assertThat(enc.lastCodec()).isEqualTo(io.beamsave.transforms.codec.CodecId.STORED);
    }
    byte[] block = out.toByteArray();
    byte[] raw = new byte[BLOCK];
    try (BlockDecoder dec = new BlockDecoder()) {
      dec.decode(block, block.length, raw, BLOCK, "b");
      assertThat(raw).isEqualTo(rnd);
      assertThatThrownBy(() -> dec.decode(block, block.length, raw, BLOCK - 1, "shard 9 block 2"))
          .hasMessageContaining("shard 9 block 2");
    }
  }
}

package io.beamsave.transforms.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.crypt.Identity;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.crypt.Recipient;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.block.BlockEncoder;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.ShardInfo;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Encrypted images at the level of the format: written as the save's sinks write them (shards
 * sealed under keys of their own, the catalog sealed, the header wrapping the data key for each
 * recipient), read back with each kind of key, refused with a wrong one, and every flipped byte
 * found, with the key and without it.
 */
class EncryptedImageTest {
  static final int BLOCK = 4096;
  @TempDir Path dir;

  static final byte[] PASSWORD = "correct horse battery staple".getBytes(StandardCharsets.UTF_8);
  static final byte[] KEY = new byte[32];

  static {
    new Random(7).nextBytes(KEY);
  }

  /** One file of text, random bytes and zeros, in two shards of an image encrypted for {@code to}. */
  Path write(String name, List<Recipient> to, byte[] data) throws Exception {
    ImageKey key = ImageKey.create(ImageId.random(), 1_764_547_200_000L, 0, null, List.of(), to);
    Path image = dir.resolve(name);
    int half = (data.length / 2) / BLOCK * BLOCK;
    List<ShardInfo> shards = new ArrayList<>();
    List<Extent> extents = new ArrayList<>();
    for (int s = 0; s < 2; s++) {
      int from = s == 0 ? 0 : half;
      int to0 = s == 0 ? half : data.length;
      byte[] shardKey = ImageKey.newBlockKey();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      List<Integer> lengths = new ArrayList<>();
      try (BlockEncoder enc = new BlockEncoder(Codecs.parse("zstd:3"), BLOCK)) {
        enc.sealWith(shardKey);
        for (int off = from; off < to0; off += BLOCK) {
          int n = Math.min(BLOCK, to0 - off);
          lengths.add(enc.write(java.util.Arrays.copyOfRange(data, off, off + BLOCK), n, out));
        }
      }
      byte[] blocks = out.toByteArray();
      long offset = ImageWriter.appendShard(image, key.header(), blocks, blocks.length);
      shards.add(new ShardInfo(offset, blocks.length, to0 - from,
          lengths.stream().mapToInt(Integer::intValue).toArray(),
          key.wrap(shardKey, ImageKey.SHARD)));
      extents.add(new Extent(s, 0, to0 - from, ImageFormatTest.sha(data, from, to0 - from)));
    }
    try (ImageWriter w = ImageWriter.open(image, key.header())) {
      Entry file = new Entry(PathBytes.of("secret-name.txt"), EntryType.FILE, 0, 0600, 1, 2,
          1_700_000_000L, 5, 7, 8, 9, data.length, null, extents);
      w.finish(new Catalog("payroll", "zstd:3", 1_764_547_200_000L, BLOCK, 1 << 20,
          Entries.root(), List.of(file), shards).withKey(key), Codecs.parse("zstd:3"));
    }
    return image;
  }

  static byte[] sample() {
    byte[] data = new byte[6 * BLOCK + 321];
    byte[] text = "the quarterly figures ".repeat(1000).getBytes(StandardCharsets.UTF_8);
    System.arraycopy(text, 0, data, 0, 3 * BLOCK);
    byte[] rnd = new byte[BLOCK];
    new Random(1).nextBytes(rnd);
    System.arraycopy(rnd, 0, data, 3 * BLOCK, BLOCK);
    return data;
  }

  static byte[] readBack(Path image, Keys keys) throws Exception {
    try (ImageSource ch = FileImageSource.open(image)) {
      Catalog c = ImageReader.readCatalog(ch, keys);
      Entry e = c.entries().get(0);
      byte[] out = new byte[(int) e.size()];
      long fileOffset = 0;
      try (ShardReader r = new ShardReader(c.blockSize())) {
        for (Extent x : e.extents()) {
          r.read(ch, "img", c.key(), x.shard(), c.shards().get(x.shard()),
              List.of(new ShardReader.FileExtent(e.path(), fileOffset, x, 0)),
              (p, pos, buf, off, len, zero) -> System.arraycopy(buf, off, out, (int) pos, len));
          fileOffset += x.length();
        }
      }
      return out;
    }
  }

  @Test
  void roundTripsWithEachKindOfKeyAndWithSeveralRecipients() throws Exception {
    byte[] data = sample();
    Identity alice = Identity.generate();
    Identity bob = Identity.generate();
    Path pw = write("pw.bsave", List.of(new Recipient.Password(PASSWORD)), data);
    Path kf = write("kf.bsave", List.of(new Recipient.KeyFile(KEY)), data);
    Path pub = write("pub.bsave", List.of(alice.publicKey()), data);
    Path all = write("all.bsave", List.of(new Recipient.Password(PASSWORD),
        new Recipient.KeyFile(KEY), alice.publicKey(), bob.publicKey()), data);

    assertThat(readBack(pw, Keys.NONE.withPassword(new Recipient.Password(PASSWORD))))
        .isEqualTo(data);
    assertThat(readBack(kf, Keys.NONE.withKeyFile(new Recipient.KeyFile(KEY)))).isEqualTo(data);
    assertThat(readBack(pub, Keys.NONE.withIdentity(alice))).isEqualTo(data);
    for (Keys k : List.of(Keys.NONE.withPassword(new Recipient.Password(PASSWORD)),
        Keys.NONE.withKeyFile(new Recipient.KeyFile(KEY)), Keys.NONE.withIdentity(alice),
        Keys.NONE.withIdentity(bob))) {
      assertThat(readBack(all, k)).isEqualTo(data);
    }
    try (ImageSource ch = FileImageSource.open(all)) {
      Catalog c = ImageReader.readCatalog(ch, Keys.NONE.withIdentity(bob));
      assertThat(c.library()).isEqualTo("payroll");
      assertThat(c.encrypted()).isTrue();
      assertThat(c.id()).isEqualTo(c.key().id());
    }
  }

  @Test
  void namesAndContentsAreNotInTheImage() throws Exception {
    Path image = write("x.bsave", List.of(new Recipient.KeyFile(KEY)), sample());
    String bytes = new String(Files.readAllBytes(image), StandardCharsets.ISO_8859_1);
    assertThat(bytes).doesNotContain("payroll").doesNotContain("secret-name")
        .doesNotContain("quarterly").doesNotContain("zstd");
  }

  @Test
  void aWrongOrMissingKeyIsRefusedInOneLineNamingWhatTheImageIsFor() throws Exception {
    Identity alice = Identity.generate();
    Path image = write("x.bsave", List.of(new Recipient.Password(PASSWORD), alice.publicKey()),
        sample());
    assertThatThrownBy(() -> readBack(image, Keys.NONE))
        .isInstanceOf(ImageException.class)
        .hasMessageContaining("is encrypted (for password, recipient ")
        .hasMessageContaining("--identity");
    assertThatThrownBy(() -> readBack(image,
        Keys.NONE.withPassword(new Recipient.Password("wrong".getBytes()))))
        .hasMessageContaining("wrong password");
    assertThatThrownBy(() -> readBack(image, Keys.NONE.withIdentity(Identity.generate())))
        .hasMessageContaining("wrong identity");
    assertThatThrownBy(() -> readBack(image, Keys.NONE.withKeyFile(new Recipient.KeyFile(KEY))))
        .hasMessageContaining("wrong key");
  }

  @Test
  void everyFlippedByteIsFoundWithTheKeyAndWithout() throws Exception {
    Path image = write("x.bsave", List.of(new Recipient.KeyFile(KEY)), sample());
    Keys keys = Keys.NONE.withKeyFile(new Recipient.KeyFile(KEY));
    byte[] good = Files.readAllBytes(image);
    assertThat(readBack(image, keys)).isEqualTo(sample());
    try (ImageSource ch = FileImageSource.open(image)) {
      assertThat(StructureCheck.check(ch, n -> {}).frames()).isGreaterThan(2);
    }
    Path bad = dir.resolve("bad.bsave");
    for (int i = 0; i < good.length; i++) {
      byte[] b = good.clone();
      b[i] ^= 0x10;
      Files.write(bad, b);
      int at = i;
      assertThatThrownBy(() -> readBack(bad, keys)).as("byte %d with the key", at)
          .isInstanceOf(ImageException.class);
      assertThatThrownBy(() -> {
        try (ImageSource ch = FileImageSource.open(bad)) {
          StructureCheck.check(ch, n -> {});
        }
      }).as("byte %d without the key", at).isInstanceOf(ImageException.class);
    }
  }

  @Test
  void framesSwappedWithTheirChecksumsIntactAreCaughtByTheTagsOnly() throws Exception {
    // Two frames of one shard exchanged: each frame's CRC still holds, so only the key's
    // authentication tags (a frame's index is its nonce) can tell.
    byte[] data = new byte[4 * BLOCK];
    new Random(3).nextBytes(data);
    Path image = write("x.bsave", List.of(new Recipient.KeyFile(KEY)), data);
    Keys keys = Keys.NONE.withKeyFile(new Recipient.KeyFile(KEY));
    Catalog c;
    try (ImageSource ch = FileImageSource.open(image)) {
      c = ImageReader.readCatalog(ch, keys);
    }
    ShardInfo s = c.shards().get(0);
    int len = s.blockLengths()[0];
    assertThat(s.blockLengths()[1]).isEqualTo(len);
    byte[] b = Files.readAllBytes(image);
    int at = (int) s.imageOffset();
    byte[] first = java.util.Arrays.copyOfRange(b, at, at + len);
    System.arraycopy(b, at + len, b, at, len);
    System.arraycopy(first, 0, b, at + len, len);
    Files.write(image, b);
    try (ImageSource ch = FileImageSource.open(image)) {
      StructureCheck.check(ch, n -> {});
    }
    assertThatThrownBy(() -> readBack(image, keys))
        .hasMessageContaining("shard 0 block 0")
        .hasMessageContaining("does not authenticate")
        .hasMessageContaining("secret-name.txt");
  }

  @Test
  void aHeaderChangedWithItsChecksumRecomputedDoesNotAuthenticate() throws Exception {
    Path image = write("x.bsave", List.of(new Recipient.KeyFile(KEY)), sample());
    byte[] b = Files.readAllBytes(image);
    b[32] ^= 1; // the created time, which images and prune show without a key
    CRC32C crc = new CRC32C();
    int h = ByteBuffer.wrap(b).getInt(12);
    crc.update(b, 0, h - 4);
    ByteBuffer.wrap(b).putInt(h - 4, (int) crc.getValue());
    Files.write(image, b);
    try (ImageSource ch = FileImageSource.open(image)) {
      StructureCheck.check(ch, n -> {});
    }
    assertThatThrownBy(() -> readBack(image, Keys.NONE.withKeyFile(new Recipient.KeyFile(KEY))))
        .hasMessageContaining("header does not authenticate");
  }

  @Test
  void aTrailerChangedWithItsChecksumRecomputedDoesNotAuthenticate() throws Exception {
    Path image = write("x.bsave", List.of(new Recipient.KeyFile(KEY)), sample());
    byte[] b = Files.readAllBytes(image);
    int t = b.length - ImageFormat.ENCRYPTED_TRAILER_SIZE;
    b[t + 40] ^= 1; // inside the sealed catalog key
    CRC32C crc = new CRC32C();
    crc.update(b, t, 88);
    ByteBuffer.wrap(b).putInt(t + 88, (int) crc.getValue());
    Files.write(image, b);
    assertThatThrownBy(() -> readBack(image, Keys.NONE.withKeyFile(new Recipient.KeyFile(KEY))))
        .hasMessageContaining("trailer does not authenticate");
  }
}

package io.beamsave.transforms.codec;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.transforms.image.block.BlockDecoder;
import io.beamsave.transforms.image.block.BlockEncoder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Random;
import org.junit.jupiter.api.Test;

class AutoCodecTest {
  static final int BLOCK = 1 << 20;

  /** Log-like text: compressible, but not trivially (so levels differ in ratio and speed). */
  static byte[] logText(long seed) {
    Random r = new Random(seed);
    StringBuilder b = new StringBuilder(BLOCK + 200);
    String[] words = {"GET", "PUT", "/api/v1/items", "/static/app.js", "200", "404", "503",
        "user", "session", "latency_ms", "backup", "library", "shard"};
    while (b.length() < BLOCK) {
      b.append("2026-11-30T").append(r.nextInt(24)).append(':').append(r.nextInt(60))
          .append(' ').append(words[r.nextInt(words.length)]).append(' ')
          .append(words[r.nextInt(words.length)]).append(' ').append(r.nextInt(100_000))
          .append('\n');
    }
    return java.util.Arrays.copyOf(b.toString().getBytes(), BLOCK);
  }

  @Test
  void storesIncompressibleBlocksRawWithoutCompressingThemAndDecodesTheRest() throws IOException {
    byte[] random = new byte[BLOCK];
    new Random(5).nextBytes(random);
    byte[] text = logText(1);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int first;
    try (BlockEncoder enc = new BlockEncoder(Codecs.parse("auto:1000"), BLOCK)) {
      enc.write(random, BLOCK, out);
      assertThat(enc.lastCodec()).isEqualTo(CodecId.STORED);
      first = out.size();
      enc.write(text, BLOCK, out);
      assertThat(enc.lastCodec()).isIn(CodecId.LZ4, CodecId.ZSTD);
      assertThat(out.size() - first).isLessThan(BLOCK / 2);
    }
    byte[] blocks = out.toByteArray();
    byte[] raw = new byte[BLOCK];
    try (BlockDecoder dec = new BlockDecoder()) {
      dec.decode(blocks, first, raw, BLOCK, "block 0");
      assertThat(raw).isEqualTo(random);
      byte[] second = java.util.Arrays.copyOfRange(blocks, first, blocks.length);
      dec.decode(second, second.length, raw, BLOCK, "block 1");
      assertThat(raw).isEqualTo(text);
    }
  }

  @Test
  void aSlowLinkDrivesTheLevelUpAndNoLinkKeepsTheFastestLevel() {
    byte[] packed = new byte[BLOCK];
    // 1 Mbit/s drains 125 kB/s: every level compresses faster than that, so the cores would
    // always wait and the controller climbs to the strongest level.
    AutoCodec.Adaptive slowLink = new AutoCodec.Adaptive(1e6 / 8, 2);
    // No link: nothing waits on the output, so the fastest level stays.
    AutoCodec.Adaptive noLink = new AutoCodec.Adaptive(0, 2);
    // 10^6 Mbit/s: the link always waits for the cores, so the level falls to lz4.
    AutoCodec.Adaptive fastLink = new AutoCodec.Adaptive(1e12 / 8, 2);
    try (slowLink; noLink; fastLink) {
      for (int i = 0; i < 30; i++) {
        byte[] text = logText(i);
        slowLink.compress(text, 0, BLOCK, packed, 0, BLOCK - 1);
        noLink.compress(text, 0, BLOCK, packed, 0, BLOCK - 1);
        fastLink.compress(text, 0, BLOCK, packed, 0, BLOCK - 1);
      }
      assertThat(slowLink.levelSpec()).isEqualTo("zstd:19");
      assertThat(noLink.levelSpec()).isEqualTo("lz4");
      assertThat(fastLink.levelSpec()).isEqualTo("lz4");
    }
  }
}

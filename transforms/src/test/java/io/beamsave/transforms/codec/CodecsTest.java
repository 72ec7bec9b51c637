package io.beamsave.transforms.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class CodecsTest {
  static byte[] text(int n) {
    byte[] line = "the quick brown fox jumps over the lazy dog 0123456789\n".getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[n];
    for (int i = 0; i < n; i++) {
      out[i] = line[i % line.length];
    }
    return out;
  }

  static byte[] random(int n) {
    byte[] out = new byte[n];
    new Random(42).nextBytes(out);
    return out;
  }

  @ParameterizedTest
  @CsvSource({
    "none,none", "lz4,lz4", "zlib,zlib:6", "zlib:1,zlib:1", "ZSTD,zstd:3", "zstd:19,zstd:19",
    "xz,xz:6", "xz:0,xz:0", "*NO,none", "*low,lz4", "*MEDIUM,zstd:3", "*HIGH,xz:6", "*ZLIB,zlib:6", "auto,auto",
    "AUTO:1000,auto:1000"
  })
  void parsesSpecsAndIbmNames(String spec, String canonical) {
    assertThat(Codecs.parse(spec).spec()).isEqualTo(canonical);
  }

  @ParameterizedTest
  @ValueSource(strings = {"gzip", "zlib:0", "zlib:10", "zstd:x", "lz4:3", "", "*FAST", "auto:0"})
  void rejectsBadSpecsNamingThem(String spec) {
    assertThatThrownBy(() -> Codecs.parse(spec))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(spec.isEmpty() ? "empty codec" : spec);
  }

  @Test
  void everyDtacprNameMapsToARegisteredCodec() {
    assertThat(Codecs.dtacprAliases()).containsOnlyKeys("*NO", "*LOW", "*MEDIUM", "*HIGH", "*ZLIB");
    Codecs.dtacprAliases().values().forEach(v -> assertThat(Codecs.parse(v).spec()).isEqualTo(v));
  }

  @ParameterizedTest
  @ValueSource(strings = {"lz4", "zlib:1", "zlib:9", "zstd:1", "zstd:3", "xz:0", "xz:6"})
  void roundTripsCompressibleData(String spec) throws IOException {
    Codec codec = Codecs.parse(spec);
    byte[] raw = text(1 << 20);
    byte[] packed = new byte[raw.length];
    try (Compressor c = codec.newCompressor();
        Decompressor d = Codecs.parse(spec).newDecompressor()) {
      int n = c.compress(raw, 0, raw.length, packed, 0, raw.length - 1);
      assertThat(n).isPositive().isLessThan(raw.length / 4);
      byte[] back = new byte[raw.length];
      d.decompress(packed, 0, n, back, 0, raw.length);
      assertThat(back).isEqualTo(raw);
      // Reused compressors give the same result for the same input.
      byte[] again = new byte[raw.length];
      assertThat(c.compress(raw, 0, raw.length, again, 0, raw.length - 1)).isEqualTo(n);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"none", "lz4", "zlib:6", "zstd:3", "xz:6", "auto", "auto:100"})
  void reportsIncompressibleDataSoItIsStoredRaw(String spec) {
    byte[] raw = random(256 * 1024);
    byte[] packed = new byte[raw.length];
    try (Compressor c = Codecs.parse(spec).newCompressor()) {
      assertThat(c.compress(raw, 0, raw.length, packed, 0, raw.length - 1)).isEqualTo(-1);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"lz4", "zlib:6", "zstd:3", "xz:6"})
  void rejectsCorruptOrWrongLengthInput(String spec) {
    Codec codec = Codecs.parse(spec);
    byte[] raw = text(64 * 1024);
    byte[] packed = new byte[raw.length];
    int n;
    try (Compressor c = codec.newCompressor()) {
      n = c.compress(raw, 0, raw.length, packed, 0, raw.length);
    }
    byte[] out = new byte[raw.length + 10];
    try (Decompressor d = codec.newDecompressor()) {
      assertThatThrownBy(() -> d.decompress(packed, 0, n, out, 0, raw.length + 1))
          .isInstanceOf(IOException.class);
      byte[] garbage = Arrays.copyOf(packed, n);
      for (int i = 0; i < garbage.length; i += 7) {
        garbage[i] ^= 0x5a;
      }
      assertThatThrownBy(() -> d.decompress(garbage, 0, garbage.length, out, 0, raw.length))
          .isInstanceOf(IOException.class);
    }
  }
}

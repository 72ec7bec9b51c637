package io.beamsave.transforms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PrintableTest {
  static String p(byte... b) {
    return Printable.bytes(b);
  }

  @Test
  void utf8NamesPrintAsTheyAre() {
    assertThat(Printable.bytes("ünïcödé/日本語 🎉.txt".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("ünïcödé/日本語 🎉.txt");
  }

  @Test
  void bytesThatAreNotUtf8PrintAsHexEscapes() {
    assertThat(p((byte) 'c', (byte) 'a', (byte) 'f', (byte) 0xe9)).isEqualTo("caf\\xe9");
    assertThat(p((byte) 0xff, (byte) 0xfe)).isEqualTo("\\xff\\xfe");
    // An overlong encoding of '/' is not UTF-8, and must not read as a slash.
    assertThat(p((byte) 0xc0, (byte) 0xaf)).isEqualTo("\\xc0\\xaf");
    // A truncated sequence at the end.
    assertThat(p((byte) 'a', (byte) 0xe6, (byte) 0x97)).isEqualTo("a\\xe6\\x97");
  }

  @Test
  void controlCharactersEscapeSequencesAndBidiOverridesAreEscaped() {
    assertThat(Printable.bytes("evil\nfake line".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("evil\\x0afake line");
    assertThat(Printable.bytes("\u001b[31mred\u001b[0m".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("\\x1b[31mred\\x1b[0m");
    assertThat(Printable.bytes("abc\u202edcba".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("abc\\xe2\\x80\\xaedcba");
    assertThat(Printable.bytes("a\u0085b\u007fc".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("a\\xc2\\x85b\\x7fc");
  }

  @Test
  void aBackslashIsDoubledSoEveryPrintedNameNamesOneByteString() {
    assertThat(Printable.bytes("a\\xe9".getBytes(StandardCharsets.UTF_8))).isEqualTo("a\\\\xe9");
    assertThat(p((byte) 'a', (byte) 0xe9)).isNotEqualTo(
        Printable.bytes("a\\xe9".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void textEscapesControlsButKeepsBackslashesSoEscapingTwiceChangesNothing() {
    String once = Printable.text("cannot read /lib/caf\\xe9\r\n\u001b]0;owned\u0007");
    assertThat(once).isEqualTo("cannot read /lib/caf\\xe9\\x0d\\x0a\\x1b]0;owned\\x07");
    assertThat(Printable.text(once)).isEqualTo(once);
  }
}

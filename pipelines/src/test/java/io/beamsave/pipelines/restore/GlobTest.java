package io.beamsave.pipelines.restore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.image.PathBytes;
import org.junit.jupiter.api.Test;

class GlobTest {
  static boolean m(String glob, String path) {
    return Glob.compile(glob).matches(PathBytes.of(path));
  }

  static boolean m(String glob, byte[] path) {
    return Glob.compile(glob).matches(PathBytes.of(path));
  }

  @Test
  void matchesAsJavasGlobDoes() {
    assertThat(m("*.conf", "a.conf")).isTrue();
    assertThat(m("*.conf", "etc/a.conf")).isFalse();
    assertThat(m("**/*.conf", "etc/x/a.conf")).isTrue();
    assertThat(m("etc/**", "etc/x/a.conf")).isTrue();
    assertThat(m("?.txt", "ü.txt")).as("? is one character, not one byte").isTrue();
    assertThat(m("?.txt", "ab.txt")).isFalse();
    assertThat(m("[ab]*", "beta")).isTrue();
    assertThat(m("[!ab]*", "beta")).isFalse();
    assertThat(m("[!ab]*", "ü")).isTrue();
    assertThat(m("{bin,lib}/*", "lib/x")).isTrue();
    assertThat(m("{bin,lib}/*", "usr/x")).isFalse();
    assertThat(m("a\\*", "a*")).isTrue();
    assertThat(m("a\\*", "ab")).isFalse();
    assertThat(m("日本語/*", "日本語/файл")).isTrue();
  }

  @Test
  void hexEscapesMatchBytesThatAreNotUtf8() {
    byte[] latin1 = {'d', '/', 'c', 'a', 'f', (byte) 0xe9};
    assertThat(m("d/caf\\xe9", latin1)).isTrue();
    assertThat(m("d/caf?", latin1)).isTrue();
    assertThat(m("d/*", latin1)).isTrue();
    assertThat(m("d/cafe", latin1)).isFalse();
    assertThat(m("back\\\\slash", "back\\slash")).isTrue();
  }

  @Test
  void matchesThroughAParentDirectory() {
    assertThat(Glob.compile("etc").matchesSelfOrParent(PathBytes.of("etc/x/y"))).isTrue();
    assertThat(Glob.compile("et").matchesSelfOrParent(PathBytes.of("etc/x/y"))).isFalse();
  }

  @Test
  void badPatternsAreExplained() {
    assertThatThrownBy(() -> Glob.compile("{a,b")).hasMessageContaining("'{' without '}'");
    assertThatThrownBy(() -> Glob.compile("[ab")).hasMessageContaining("'[' without ']'");
    assertThatThrownBy(() -> Glob.compile("a\\")).hasMessageContaining("ends with a backslash");
  }
}

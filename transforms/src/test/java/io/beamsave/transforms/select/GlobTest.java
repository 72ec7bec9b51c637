package io.beamsave.transforms.select;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.image.catalog.PathBytes;
import org.junit.jupiter.api.Test;

class GlobTest {
  static boolean m(String glob, String path) {
    return Glob.compile(glob, "--include").matches(PathBytes.of(path), false);
  }

  static boolean m(String glob, byte[] path) {
    return Glob.compile(glob, "--include").matches(PathBytes.of(path), false);
  }

  static boolean dir(String glob, String path) {
    return Glob.compile(glob, "--exclude").matches(PathBytes.of(path), true);
  }

  @Test
  void matchesAsJavasGlobDoes() {
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
  void anAnchoredPatternNamesTheDirectoryItsMatchesLieBeneath() {
    assertThat(Glob.literalDirectory("etc/*.conf")).isEqualTo(PathBytes.of("etc"));
    assertThat(Glob.literalDirectory("/etc/ssh/**")).isEqualTo(PathBytes.of("etc/ssh"));
    assertThat(Glob.literalDirectory("etc/ssh/")).isEqualTo(PathBytes.of("etc/ssh"));
    assertThat(Glob.literalDirectory("a/b/c*/d")).isEqualTo(PathBytes.of("a/b"));
    assertThat(Glob.literalDirectory("a/{b,c/d}")).isEqualTo(PathBytes.of("a"));
    for (String anywhere : new String[] {"*.conf", "cache/", "cache//", "**/x", "e*/x", "/x*",
        "{a,b}/c", "a//b/*"}) {
      assertThat(Glob.literalDirectory(anywhere)).as(anywhere).isNull();
    }
  }

  @Test
  void whereAPatternAppliesFollowsGitignore() {
    assertThat(m("*.conf", "a.conf")).isTrue();
    assertThat(m("*.conf", "etc/x/a.conf")).as("no '/': any depth").isTrue();
    assertThat(m("a.conf", "etc/a.conf")).isTrue();
    assertThat(m("a.conf", "etc/ba.conf")).as("a whole name, not a suffix").isFalse();
    assertThat(m("etc/*.conf", "etc/a.conf")).isTrue();
    assertThat(m("etc/*.conf", "x/etc/a.conf")).as("a '/' inside: from the top").isFalse();
    assertThat(m("/bin", "bin")).isTrue();
    assertThat(m("/bin", "usr/bin")).as("a leading '/': from the top").isFalse();
    assertThat(m("**/bottom.txt", "bottom.txt")).as("'**/' may be no directory").isTrue();
    assertThat(m("a/**/b", "a/b")).isTrue();
    assertThat(m("a/**/b", "a/x/y/b")).isTrue();
    assertThat(m("cache/", "cache")).as("a trailing '/': directories only").isFalse();
    assertThat(dir("cache/", "cache")).isTrue();
    assertThat(dir("cache/", "x/cache")).isTrue();
  }

  @Test
  void questionMarksMatchWholeCharactersAndSetsNeverASlash() {
    assertThat(m("??", "é")).as("é is one character of two bytes").isFalse();
    assertThat(m("?", "é")).isTrue();
    assertThatThrownBy(() -> m("a[.-0]b", "a/b")).hasMessageContaining("never '/'");
    assertThat(m("foo**", "foo/bar")).as("'**' inside a name is '*'").isFalse();
  }

  @Test
  void aNameBuiltToMakeABacktrackingMatcherCrawlIsMatchedAtOnce() {
    // A regex of the pattern takes minutes on this; the token run is linear in the name.
    String name = "a".repeat(20_000);
    assertThat(m("*a*a*a*a*a*a*a*a*b", name)).isFalse();
    assertThat(m("**/*.*.*.*.*.tmp", ".".repeat(20_000))).isFalse();
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
    assertThat(Glob.compile("etc", "--include").matchesSelfOrParent(PathBytes.of("etc/x/y"),
        false)).isTrue();
    assertThat(Glob.compile("et", "--include").matchesSelfOrParent(PathBytes.of("etc/x/y"),
        false)).isFalse();
    assertThat(Glob.compile("x/", "--include").matchesSelfOrParent(PathBytes.of("etc/x/y"),
        false)).as("a parent is a directory").isTrue();
  }

  @Test
  void badPatternsAreExplained() {
    assertThatThrownBy(() -> Glob.compile("{a,b", "--include"))
        .hasMessage("--include '{a,b': '{' without '}'");
    assertThatThrownBy(() -> Glob.compile("[ab", "--exclude"))
        .hasMessage("--exclude '[ab': '[' without ']'");
    assertThatThrownBy(() -> Glob.compile("a\\", "--include"))
        .hasMessageContaining("ends with a backslash");
    assertThatThrownBy(() -> Glob.compile("/", "--exclude")).hasMessageContaining("names no path");
  }
}

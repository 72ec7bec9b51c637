package io.beamsave.transforms.select;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FilesFromTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Map<String, List<byte[]>> roots(String... nameAndPath) {
    Map<String, List<byte[]>> roots = new LinkedHashMap<>();
    for (int i = 0; i < nameAndPath.length; i += 2) {
      roots.put(nameAndPath[i], List.of(b(nameAndPath[i + 1])));
    }
    return roots;
  }

  @Test
  void linesSkipCommentsAndBlanksAndKeepTheirNumbers() {
    List<FilesFrom.Line> lines = FilesFrom.lines(b("# c\na\n\n ./#b \nc"), false);
    assertThat(lines).extracting(FilesFrom.Line::number).containsExactly(2, 4, 5);
    assertThat(new String(lines.get(1).path(), StandardCharsets.UTF_8))
        .as("blanks are part of a name").isEqualTo(" ./#b ");
  }

  @Test
  void aNulListKeepsEveryByteButNul() {
    byte[] odd = {'x', '\n', (byte) 0xff};
    byte[] list = {'#', 'a', 0, 'x', '\n', (byte) 0xff, 0, 0};
    List<FilesFrom.Line> lines = FilesFrom.lines(list, true);
    assertThat(lines).hasSize(2);
    assertThat(lines.get(1).path()).isEqualTo(odd);
  }

  @Test
  void relativePathsApplyToEveryLibraryAbsoluteOnesToTheirOwn() {
    List<FilesFrom.Line> lines = FilesFrom.lines(b("a//b/./c/\n/srv/two/d\n"), false);
    Map<String, FilesFrom> sel =
        FilesFrom.select("list", lines, roots("one", "/srv/one", "two", "/srv/two/"));
    assertThat(sel.get("one").paths()).containsExactly(PathBytes.of("a/b/c"));
    assertThat(sel.get("two").paths())
        .containsExactlyInAnyOrder(PathBytes.of("a/b/c"), PathBytes.of("d"));
    assertThat(sel.get("two").line(PathBytes.of("d"))).isEqualTo(2);
    assertThat(sel.get("one").onTheWay(PathBytes.of("a/b"))).isTrue();
    assertThat(sel.get("one").onTheWay(PathBytes.of("a/b/c"))).isFalse();
    assertThat(sel.get("one").listed(PathBytes.of("a/b/c"))).isTrue();
  }

  @Test
  void theLibraryItselfMeansAllOfIt() {
    Map<String, FilesFrom> sel = FilesFrom.select("list", FilesFrom.lines(b("/srv/one\n"), false),
        roots("one", "/srv/one"));
    assertThat(sel.get("one").all()).isTrue();
  }

  @Test
  void refusesPathsOutsideTheLibraryAndDotDotNamingTheLine() {
    assertThatThrownBy(() -> FilesFrom.select("--files-from l",
        FilesFrom.lines(b("ok\n/srv/oneandmore/x\n"), false), roots("one", "/srv/one")))
        .isInstanceOf(BeamsaveException.class)
        .hasMessage("--files-from l line 2: '/srv/oneandmore/x' is not in the library /srv/one");
    assertThatThrownBy(() -> FilesFrom.select("--files-from l",
        FilesFrom.lines(b("a/../b\n"), false), roots("one", "/srv/one")))
        .hasMessage("--files-from l line 1: 'a/../b' has a '..' component; list the path"
            + " without it");
  }
}

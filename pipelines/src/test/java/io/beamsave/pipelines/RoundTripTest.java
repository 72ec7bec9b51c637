package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.pipelines.restore.TreeSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Save, verify and restore generated trees with every codec; the restore must be identical. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RoundTripTest {
  @TempDir static Path tmp;
  Path library;
  TreeSnapshot original;

  @BeforeAll
  void generate() throws IOException {
    library = Files.createDirectories(tmp.resolve("library"));
    Trees.tinyFiles(library, 10_000);
    Trees.deepNesting(library);
    Trees.unicodeNames(library);
    Trees.linksAndEmpties(library);
    Trees.mixedData(library, 6 << 20);
    Trees.sparseOver4GiB(library);
    original = TreeSnapshot.of(library);
  }

  @ParameterizedTest
  @ValueSource(strings = {"none", "lz4", "zlib:6", "zstd:3", "xz:6"})
  void restoresTheTreeIdenticallyWithEveryCodec(String codec) throws IOException {
    String name = codec.replace(':', '-');
    Path image = tmp.resolve(name + ".bsave");
    Path report = tmp.resolve(name + ".json");
    Cli save =
        Cli.ok("save", "--library", library, "--image", image, "--codec", codec,
            "--shard-size", "16MiB", "--report-json", report, "--quiet");
    assertThat(save.out()).contains(codec).contains("stages:");

    JsonNode json = new ObjectMapper().readTree(report.toFile());
    assertThat(json.get("codec").asText()).isEqualTo(codec);
    assertThat(json.get("files").asLong()).isEqualTo(10_000 + 1 + 2 + 4 + 2 + 1);
    assertThat(json.get("rawBytes").asLong()).isGreaterThan(4L << 30);
    assertThat(json.get("imageBytes").asLong()).isEqualTo(Files.size(image));
    assertThat(json.get("shards").asInt()).isEqualTo(257);
    assertThat(json.get("stages").get("compress").asDouble()).isGreaterThan(0);
    assertThat(json.has("saveSeconds")).isTrue();
    assertThat(json.get("ratio").asDouble()).isGreaterThan(1);

    Cli verify = Cli.ok("verify", "--image", image, "--quiet");
    assertThat(verify.out()).startsWith("OK ");

    Path target = tmp.resolve("restored-" + name);
    Cli.ok("restore", "--image", image, "--target", target, "--quiet");
    assertThat(TreeSnapshot.of(target).diff(original)).isNull();
    assertThat(allocatedBytes(target.resolve("sparse.img"))).isLessThan(64L << 20);
  }

  @Test
  void restoresOnlyWhatIncludeSelects() throws IOException {
    Path image = tmp.resolve("include.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--quiet");
    Path target = tmp.resolve("some");
    Cli.ok("restore", "--image", image, "--target", target, "--include", "links/*",
        "--include", "**/bottom.txt", "--quiet");
    TreeSnapshot got = TreeSnapshot.of(target);
    assertThat(got.entries().keySet())
        .contains("links/relative", "links/target.txt", "deep/level0")
        .anyMatch(p -> p.endsWith("level59/bottom.txt"))
        .noneMatch(p -> p.startsWith("tiny") || p.equals("sparse.img"));
    assertThat(Files.readString(target.resolve("links/target.txt"))).isEqualTo("target");
  }

  @Test
  void listShowsTheCatalog() {
    Path image = tmp.resolve("list.bsave");
    Cli.ok("save", "--library", library, "--image", image, "--codec", "*LOW", "--quiet");
    Cli list = Cli.ok("list", "--image", image);
    assertThat(list.out())
        .contains("codec lz4")
        .contains("links/relative -> target.txt")
        .contains("ünïcödé/日本語/файл κείμενο 🎉.txt")
        .contains(String.valueOf((4L << 30) + 5_000_123));
  }

  @ParameterizedTest
  @ValueSource(strings = {"none", "lz4", "zlib:6", "zstd:3", "xz:6"})
  void anEmptyLibraryRoundTrips(String codec) throws IOException {
    Path empty = Files.createDirectories(tmp.resolve("empty-" + codec.replace(':', '-')));
    Path image = tmp.resolve("empty-" + codec.replace(':', '-') + ".bsave");
    Cli.ok("save", "--library", empty, "--image", image, "--codec", codec, "--quiet");
    assertThat(Cli.ok("list", "--image", image).out()).contains("0 entries, 0 shards");
    Cli.ok("verify", "--image", image, "--quiet");
    Path target = tmp.resolve("empty-restored-" + codec.replace(':', '-'));
    Cli.ok("restore", "--image", image, "--target", target, "--quiet");
    assertThat(target).isEmptyDirectory();
  }

  static long allocatedBytes(Path file) throws IOException {
    try {
      Process p = new ProcessBuilder("du", "-k", file.toString()).start();
      String out = new String(p.getInputStream().readAllBytes()).trim();
      p.waitFor();
      return Long.parseLong(out.split("\\s+")[0]) * 1024;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }
}

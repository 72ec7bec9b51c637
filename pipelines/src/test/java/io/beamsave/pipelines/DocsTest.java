package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/ is part of the code: every class, path and option a page names in backticks is one the
 * code still has ({@link DocNames} says how each kind is checked). A stale name fails with one
 * line: the page, the line, the name and what is wrong with it.
 */
class DocsTest {
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  /**
   * Being rewritten as this is written: its stale names are printed, not failed. Remove it from
   * here when the rewrite lands.
   */
  static final Set<String> REPORTED_ONLY = Set.of();

  static DocNames names;

  @BeforeAll
  static void readTheCode() throws IOException {
    names = DocNames.of(ROOT);
  }

  static List<String> pages() throws IOException {
    List<String> pages = new ArrayList<>();
    try (Stream<Path> s = Files.list(ROOT.resolve("docs"))) {
      s.filter(p -> p.getFileName().toString().endsWith(".md")).sorted()
          .forEach(p -> pages.add(ROOT.relativize(p).toString()));
    }
    pages.add("README.md");
    return pages;
  }

  @Test
  void everyClassPathAndOptionTheDocsNameInBackticksIsOneTheCodeHas() throws IOException {
    List<String> stale = new ArrayList<>();
    for (String page : pages()) {
      for (DocNames.Finding f : names.check(page)) {
        if (REPORTED_ONLY.contains(page)) {
          System.out.println("DocsTest (reported only): " + f);
        } else {
          stale.add(f.toString());
        }
      }
    }
    assertThat(stale)
        .withFailMessage("%d names the code no longer has:%n%s", stale.size(),
            String.join(System.lineSeparator(), stale))
        .isEmpty();
  }

  /** The drifts this test was written after, and their kind, are each one failure line. */
  @Test
  void eachStaleNameIsOneFindingNamingItsLine() {
    String page = String.join("\n",
        "# A page",
        "",
        "| the run ledger | `ledger/` beside the image | by `prune` |",
        "",
        "Now the workers hand each shard to the upload in memory (`ImagePipe`): no file.",
        "Reading an image with its bases (`store.ImageChain`), finished by",
        "`ImageSink.finishh`, tuned with `--no-such-option` and measured by",
        "`bench/no-such-script.sh`.",
        "",
        "```sh",
        "beamsave save --library /srv/data --imagee /backup/x.bsave",
        "```");
    assertThat(names.check("docs/page.md", page)).extracting(Object::toString).containsExactly(
        "docs/page.md:3: `ledger/`: ledger is neither in the repository nor a name the code uses",
        "docs/page.md:5: `ImagePipe`: no such class under */src/main/java or */src/test/java",
        "docs/page.md:6: `store.ImageChain`: ImageChain is in io.beamsave.transforms.read, not in"
            + " a package store",
        "docs/page.md:7: `ImageSink.finishh`: ImageSink has no finishh",
        "docs/page.md:7: `--no-such-option`: not an option of beamsave, of Beam, or of a program"
            + " or script named beside it",
        "docs/page.md:8: `bench/no-such-script.sh`: no such file or directory in the repository",
        "docs/page.md:11: `--imagee`: not an option of beamsave, of Beam, or of a program or"
            + " script named beside it");
  }

  @Test
  void namesTheCodeHasPassInEachKindTheyComeIn() {
    String page = String.join("\n",
        "# A page",
        "",
        "The ledger is `beamsave-ledger/`; staging `.beamsave-staging-RUN/<lib>/shards/`, and",
        "`read.ImageChain`, `ImageSink.finish`, `ConsolidatePlan#catalog`, `locks.ImageLock`,",
        "`java.nio.file.Path`, `CacheDirectory=`, `SlowDown`, `FileChannel`.",
        "`--keep-last 7`, `-- --runner=FlinkRunner --flinkMaster=HOST:PORT --targetParallelism=2`,",
        "`bench/compare-links.sh`, `deploy/flink/target/flink-LINE/`, `transforms/.../fs`,",
        "`pipelines/target/beamsave-<version>.tar.gz`, `{library}/{library}-{utc}.bsave`,",
        "[the format](image-format.md).",
        "",
        "```sh",
        "bench/save-vs-peers.sh --encrypted /tmp/corpus 7",
        "systemctl enable --now beamsave-save.timer",
        "```");
    assertThat(names.check("docs/page.md", page)).isEmpty();
  }

  @Test
  void anotherProgramsOptionPassesOnlyWhereThatProgramIsNamed() {
    String named = "# Containers\n\nRun it with `podman run --rm --tmpfs /tmp beamsave`.\n";
    String alone = "# Containers\n\nGive it `--tmpfs /tmp` when the root is read-only.\n";
    assertThat(names.check("docs/page.md", named)).isEmpty();
    assertThat(names.check("docs/page.md", alone)).extracting(DocNames.Finding::name)
        .containsExactly("--tmpfs");
  }
}

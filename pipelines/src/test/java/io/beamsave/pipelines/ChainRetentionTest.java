package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.pipelines.retention.Retention;
import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Retention of incremental chains: prune keeps every base a kept image needs, lets a
 * consolidated image stand for the chain it was folded from, and says why; images shows where
 * each image stands in its chain.
 */
class ChainRetentionTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
  private static final Instant FIRST = Instant.parse("2026-10-01T02:15:00Z");

  @TempDir Path dir;

  static Path nightly(Path at, Instant t) {
    return at.resolve("data-" + STAMP.format(t) + ".bsave");
  }

  static Instant day(int n) {
    return FIRST.plus(Duration.ofDays(n));
  }

  private static List<JsonNode> lines(String out) throws IOException {
    List<JsonNode> nodes = new ArrayList<>();
    for (String line : out.split("\n")) {
      if (!line.isBlank()) {
        nodes.add(JSON.readTree(line));
      }
    }
    return nodes;
  }

  private static List<JsonNode> ofType(List<JsonNode> nodes, String type) {
    return nodes.stream().filter(n -> n.path("type").asText().equals(type)).toList();
  }

  /** What the schedule below knows of each image it wrote: the point in time it stands for. */
  record Saved(Path path, ImageId id, Instant point, boolean consolidated) {}

  /**
   * Sixty nights of saves, full or incremental at random (against the newest image, as {@code
   * save --base latest} chooses it, referencing a random part of its base's bases), some
   * consolidated an hour later, pruned at random under random rules: after every prune each
   * image left has every base it names, and every point in time the rules keep is still there,
   * as its consolidated image where it has one.
   */
  @Test
  void pruningAScheduleOfChainsNeverStrandsAnImageNorDropsWhatTheRulesKeep() throws Exception {
    int deletedOverall = 0;
    for (long seed = 1; seed <= 4; seed++) {
      Random random = new Random(seed);
      Path at = Files.createDirectories(dir.resolve("schedule-" + seed));
      List<Saved> stored = new ArrayList<>();
      for (int d = 0; d < 60; d++) {
        Instant t = day(d);
        Path image = nightly(at, t);
        if (stored.isEmpty() || random.nextInt(4) == 0) {
          stored.add(saved(image, ChainImages.full(image, t), t, false));
        } else {
          Path base = Path.of(StoredImages.newest(StoredImages.list(at.toString(), null)
              .values().iterator().next(), null));
          List<Catalog.Base> also = new ArrayList<>();
          for (Catalog.Base b : ImageReader.readCatalog(base).bases()) {
            if (random.nextInt(10) < 7) {
              also.add(b);
            }
          }
          stored.add(saved(image, ChainImages.incremental(image, t, base, also), t, false));
        }
        if (random.nextInt(5) == 0) {
          // Consolidate one of the originals still stored, an hour after its save.
          List<Saved> originals = stored.stream().filter(s -> !s.consolidated()).toList();
          Saved o = originals.get(random.nextInt(originals.size()));
          Path to = nightly(at, o.point().plus(Duration.ofHours(1)));
          if (!Files.exists(to)) {
            stored.add(saved(to, ChainImages.consolidated(to, o.path()), o.point(), true));
          }
        }
        if (random.nextBoolean()) {
          int last = random.nextInt(4);
          int daily = random.nextInt(6);
          int weekly = random.nextInt(4);
          int monthly = random.nextInt(3);
          int yearly = random.nextInt(2);
          Retention.Period within = random.nextInt(3) == 0
              ? Retention.Period.parse(random.nextBoolean() ? (1 + random.nextInt(9)) + "d"
                  : "1w" + random.nextInt(24) + "h") : null;
          if (last + daily + weekly + monthly + yearly == 0 && within == null) {
            last = 1;
          }
          Retention rules = new Retention(last, daily, weekly, monthly, yearly, within);
          String context = "seed " + seed + ", night " + d + ", " + rules;
          Set<Instant> kept = pointsKept(stored, rules);
          // What the rules keep is kept as its consolidated image, once there is one.
          List<Path> keptConsolidated = stored.stream()
              .filter(s -> s.consolidated() && kept.contains(s.point())).map(Saved::path)
              .toList();
          List<Object> prune = new ArrayList<>(List.of("prune", "--at", at, "--keep-last",
              rules.last(), "--keep-daily", rules.daily(), "--keep-weekly", rules.weekly(),
              "--keep-monthly", rules.monthly(), "--keep-yearly", rules.yearly(), "--yes",
              "--json"));
          if (within != null) {
            prune.addAll(List.of("--keep-within", within));
          }
          Cli.ok(prune.toArray());
          int before = stored.size();
          stored.removeIf(s -> !Files.exists(s.path()));
          deletedOverall += before - stored.size();
          assertEveryBaseIsStored(at, context);
          for (Instant point : kept) {
            List<Saved> left = stored.stream().filter(s -> s.point().equals(point)).toList();
            assertThat(left).as("%s: point %s, kept by the rules", context, point).isNotEmpty();
          }
          assertThat(keptConsolidated).as(context).allSatisfy(p -> assertThat(p).exists());
        }
      }
    }
    assertThat(deletedOverall).as("the schedules deleted something").isGreaterThan(20);
  }

  private static Saved saved(Path path, Catalog c, Instant point, boolean consolidated) {
    return new Saved(path, c.id(), point, consolidated);
  }

  /** The points in time the rules keep: an original and its consolidations are one. */
  private static Set<Instant> pointsKept(List<Saved> stored, Retention rules) {
    Set<Instant> points = new HashSet<>();
    stored.forEach(s -> points.add(s.point()));
    List<StoredImages.Image> standIns = points.stream()
        .map(p -> new StoredImages.Image(p.toString(), "data", p, 1, false)).toList();
    Set<Instant> kept = new HashSet<>();
    rules.decide(standIns).stream().filter(Retention.Decision::keep)
        .forEach(d -> kept.add(d.image().time()));
    return kept;
  }

  private static void assertEveryBaseIsStored(Path at, String context) throws IOException {
    Map<ImageId, Path> ids = new HashMap<>();
    List<Catalog> catalogs = new ArrayList<>();
    try (Stream<Path> s = Files.list(at)) {
      for (Path p : s.filter(x -> x.toString().endsWith(".bsave")).toList()) {
        Catalog c = ImageReader.readCatalog(p);
        ids.put(c.id(), p);
        catalogs.add(c);
      }
    }
    for (Catalog c : catalogs) {
      for (Catalog.Base b : c.bases()) {
        assertThat(ids).as("%s: image %s lost its base %s", context, c.id(), b.location())
            .containsKey(b.id());
      }
    }
  }

  /** A full image and two incremental ones on it, a night apart; an older full one. */
  private Path chain() throws IOException {
    Path at = Files.createDirectories(dir.resolve("chain"));
    ChainImages.full(nightly(at, day(0)), day(0));
    ChainImages.full(nightly(at, day(1)), day(1));
    ChainImages.incremental(nightly(at, day(2)), day(2), nightly(at, day(1)), List.of());
    Catalog i2 = ImageReader.readCatalog(nightly(at, day(2)));
    ChainImages.incremental(nightly(at, day(3)), day(3), nightly(at, day(2)), i2.bases());
    return at;
  }

  @Test
  void theDryRunSaysWhichImageNeedsEachBaseItKeeps() throws IOException {
    Path at = chain();
    Cli dry = Cli.ok("prune", "--at", at, "--keep-last", "1");
    assertThat(dry.out())
        .containsPattern("keep .*data-20261004T021500Z.bsave  \\(last 1\\)")
        .containsPattern("keep .*data-20261003T021500Z.bsave  \\(base of"
            + " data-20261004T021500Z.bsave\\)")
        .containsPattern("keep .*data-20261002T021500Z.bsave  \\(base of"
            + " data-20261004T021500Z.bsave and 1 more\\)")
        .containsPattern("delete .*data-20261001T021500Z.bsave\n")
        .contains("would delete 1 image");
    assertThat(dry.err()).isEmpty();

    List<JsonNode> json = ofType(lines(Cli.ok("prune", "--at", at, "--keep-last", "1", "--yes",
        "--json").out()), "decision");
    assertThat(json).anySatisfy(d -> {
      assertThat(d.path("image").asText()).endsWith("data-20261003T021500Z.bsave");
      assertThat(d.path("action").asText()).isEqualTo("keep");
      assertThat(d.path("reasons").get(0).asText())
          .isEqualTo("base of data-20261004T021500Z.bsave");
    });
    assertThat(nightly(at, day(0))).doesNotExist();
    assertThat(nightly(at, day(1))).exists();
    assertThat(Cli.ok("verify", "--chain", nightly(at, day(3))).out()).startsWith("OK ");
  }

  @Test
  void aConsolidatedImageStandsForTheImageItWasFoldedFromAndItsChainMayGo() throws IOException {
    Path at = chain();
    Path folded = at.resolve("data-20261004T051500Z.bsave");
    ChainImages.consolidated(folded, nightly(at, day(3)));

    Cli dry = Cli.ok("prune", "--at", at, "--keep-last", "1");
    assertThat(dry.out())
        .containsPattern("keep .*data-20261004T051500Z.bsave  \\(last 1\\)")
        .containsPattern("delete .*data-20261004T021500Z.bsave  \\(consolidated into"
            + " data-20261004T051500Z.bsave\\)")
        .containsPattern("delete .*data-20261003T021500Z.bsave\n")
        .containsPattern("delete .*data-20261002T021500Z.bsave\n")
        .contains("would delete 4 images");
    // The two count as one: keeping two points in time keeps the night before as well.
    assertThat(Cli.ok("prune", "--at", at, "--keep-last", "2").out())
        .containsPattern("keep .*data-20261003T021500Z.bsave  \\(last 2\\)")
        .containsPattern("keep .*data-20261002T021500Z.bsave  \\(base of"
            + " data-20261003T021500Z.bsave\\)")
        .containsPattern("delete .*data-20261004T021500Z.bsave  \\(consolidated into");

    // A newer save against the original still needs it, and all it references.
    ChainImages.incremental(nightly(at, day(4)), day(4), nightly(at, day(3)),
        ImageReader.readCatalog(nightly(at, day(3))).bases());
    Cli after = Cli.ok("prune", "--at", at, "--keep-last", "2", "--yes");
    assertThat(after.out())
        .containsPattern("keep .*data-20261004T051500Z.bsave  \\(last 2\\)")
        .containsPattern("keep .*data-20261004T021500Z.bsave  \\(base of"
            + " data-20261005T021500Z.bsave\\)")
        .contains("deleted 1 image");
    assertThat(nightly(at, day(0))).doesNotExist();
    assertThat(nightly(at, day(1))).exists();
  }

  @Test
  void baseIsFoundByItsIdWhereverItMovedAndAMissingOneIsWarnedAbout() throws IOException {
    Path at = chain();
    // Moved into a series of its own, with a newer image there: not kept by the rules.
    Path archive = Files.createDirectories(at.resolve("archive"));
    Path moved = nightly(archive, day(1));
    Files.move(nightly(at, day(1)), moved);
    ChainImages.full(nightly(archive, day(9)), day(9));
    Cli dry = Cli.ok("prune", "--at", at, "--keep-last", "1");
    assertThat(dry.out()).containsPattern("keep .*archive/data-20261002T021500Z.bsave  \\(base"
        + " of data-20261004T021500Z.bsave and 1 more\\)");
    assertThat(dry.err()).isEmpty();

    Files.delete(moved);
    Cli missing = Cli.ok("prune", "--at", at, "--keep-last", "1", "--json");
    List<JsonNode> warnings = ofType(lines(missing.out()), "warning");
    assertThat(warnings).hasSize(2).allSatisfy(w -> assertThat(w.path("message").asText())
        .contains("depends on base " + ImageReader.readCatalog(nightly(at, day(2))).bases().get(0)
            .id())
        .contains("which is not stored here"));
    assertThat(missing.err()).contains("beamsave: warning: ")
        .contains("data-20261004T021500Z.bsave depends on base");
  }

  @Test
  void imagesShowsEachImagesChainAndAMissingBase() throws IOException {
    Path at = chain();
    Path folded = at.resolve("data-20261004T051500Z.bsave");
    Catalog c = ChainImages.consolidated(folded, nightly(at, day(3)));
    Cli text = Cli.ok("images", "--at", at);
    assertThat(text.out())
        .containsPattern("ok +incremental 2 on data-20261003T021500Z.bsave +/.*"
            + "data-20261004T021500Z.bsave")
        .containsPattern("ok +incremental 1 on data-20261002T021500Z.bsave +/")
        .containsPattern("ok +full, from data-20261004T021500Z.bsave +/.*"
            + "data-20261004T051500Z.bsave")
        .containsPattern("ok +full +/.*data-20261002T021500Z.bsave");

    Files.delete(nightly(at, day(1)));
    List<JsonNode> json = ofType(lines(Cli.ok("images", "--at", at, "--json").out()), "image");
    Catalog i3 = ImageReader.readCatalog(nightly(at, day(3)));
    assertThat(json).anySatisfy(n -> {
      assertThat(n.path("image").asText()).endsWith("data-20261004T021500Z.bsave");
      assertThat(n.path("imageId").asText()).isEqualTo(i3.id().toString());
      assertThat(n.path("depth").asInt()).isEqualTo(2);
      assertThat(n.path("base").asText()).isEqualTo(nightly(at, day(2)).toString());
      assertThat(n.path("baseId").asText()).isEqualTo(i3.bases().get(0).id().toString());
      assertThat(n.path("origin").isNull()).isTrue();
      assertThat(n.path("status").asText()).isEqualTo("missing base");
      assertThat(n.path("missingBases")).singleElement().satisfies(m ->
          assertThat(m.path("location").asText()).endsWith("data-20261002T021500Z.bsave"));
    });
    assertThat(json).anySatisfy(n -> {
      assertThat(n.path("image").asText()).endsWith("data-20261004T051500Z.bsave");
      assertThat(n.path("origin").asText()).isEqualTo(i3.id().toString());
      assertThat(n.path("depth").asInt()).isZero();
      assertThat(n.path("base").isNull()).isTrue();
      assertThat(n.path("status").asText()).isEqualTo("ok");
    });
    assertThat(c.origin()).isEqualTo(i3.id());
    assertThat(Cli.ok("images", "--at", at).out())
        .containsPattern("missing base +incremental 1 on data-20261002T021500Z.bsave"
            + " \\(missing\\)");
  }
}

package io.beamsave.pipelines.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.beamsave.pipelines.stored.Lineage;
import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.catalog.Catalog;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which images {@code prune} keeps and why: the rules count points in time, every image a kept
 * one needs stays, and nothing it cannot judge (damaged, uploading, in use, not opened by the
 * keys given, a claim nobody confirmed) is ever the reason an image goes.
 */
class PrunePlanTest {
  static final Retention KEEP_LAST_1 = new Retention(1, 0, 0);
  static final Retention KEEP_LAST_2 = new Retention(2, 0, 0);
  static final PrunePlan.Proof CONFIRMED = (consolidated, original) -> null;

  private final List<PrunePlan.Candidate> stored = new ArrayList<>();

  /** The nightly save's time, {@code day} days after the first of December 2026. */
  static Instant day(int day) {
    return Instant.parse("2026-12-01T02:15:00Z").plus(java.time.Duration.ofDays(day));
  }

  private PrunePlan.Candidate add(String series, String name, Instant time, boolean busy,
      Lineage lineage, String problem, String notCounted) {
    PrunePlan.Candidate c = new PrunePlan.Candidate(
        new StoredImages.Image("/backup/" + series + "/" + name, series, time, 1 << 20, busy),
        lineage, problem, notCounted);
    stored.add(c);
    return c;
  }

  private PrunePlan.Candidate full(String name, int day) {
    return add("data", name, day(day), false,
        new Lineage(ImageId.random(), null, 0, List.of(), day(day), false, false), null, null);
  }

  /** An image saved against {@code bases} (the direct base first), each recorded elsewhere. */
  private PrunePlan.Candidate incremental(String name, int day, PrunePlan.Candidate... bases) {
    List<Catalog.Base> recorded = new ArrayList<>();
    for (PrunePlan.Candidate b : bases) {
      // Where it was when this image was saved: images move, ids do not.
      recorded.add(new Catalog.Base(b.lineage().id(), new byte[32],
          b.lineage().created().toEpochMilli(), "/where/it/was/" + b.image().uri().hashCode()));
    }
    return add("data", name, day(day), false,
        new Lineage(ImageId.random(), null, bases.length, recorded, day(day), false, false),
        null, null);
  }

  /** A full image written on {@code day}, standing for {@code origin}'s point in time. */
  private PrunePlan.Candidate consolidated(String name, int day, PrunePlan.Candidate origin,
      boolean fromHeader) {
    return add("data", name, day(day), false, new Lineage(ImageId.random(), origin.lineage().id(),
        0, List.of(), origin.lineage().created(), fromHeader, fromHeader), null, null);
  }

  /** An image as the explanations name it: its file name. */
  static String name(String uri) {
    return uri.substring(uri.lastIndexOf('/') + 1);
  }

  private Map<String, PrunePlan.Decision> byName(PrunePlan plan) {
    Map<String, PrunePlan.Decision> m = new LinkedHashMap<>();
    plan.decisions().forEach(d -> m.put(name(d.image().uri()), d));
    return m;
  }

  private static List<String> kept(PrunePlan plan) {
    return plan.decisions().stream().filter(PrunePlan.Decision::keep)
        .map(d -> name(d.image().uri())).toList();
  }

  @Test
  void theRulesKeepTheNewestAndEveryOtherImageGoesWithoutAReason() {
    full("d1.bsave", 1);
    full("d2.bsave", 2);
    full("d3.bsave", 3);
    PrunePlan plan = PrunePlan.decide(stored, KEEP_LAST_1);

    assertThat(plan.decisions()).extracting(d -> name(d.image().uri()),
            PrunePlan.Decision::keep, PrunePlan.Decision::reasons)
        .containsExactly(
            tuple("d3.bsave", true, List.of("last 1")),
            tuple("d2.bsave", false, List.of()),
            tuple("d1.bsave", false, List.of()));
    assertThat(plan.warnings()).isEmpty();
  }

  @Test
  void aKeptIncrementalImageKeepsEveryImageItsBytesAreInFoundByIdWhereverItWasSaved() {
    full("old.bsave", 1);
    PrunePlan.Candidate f = full("f.bsave", 2);
    PrunePlan.Candidate i1 = incremental("i1.bsave", 3, f);
    incremental("i2.bsave", 4, i1, f);
    Map<String, PrunePlan.Decision> d = byName(PrunePlan.decide(stored, KEEP_LAST_1));

    assertThat(d.get("i2.bsave").reasons()).containsExactly("last 1");
    assertThat(d.get("i1.bsave").reasons()).containsExactly("base of i2.bsave");
    assertThat(d.get("f.bsave").reasons()).containsExactly("base of i2.bsave and 1 more");
    assertThat(d.get("old.bsave").keep()).isFalse();
  }

  @Test
  void aKeptImageWhoseBaseIsNotStoredHereIsWarnedOf() {
    PrunePlan.Candidate gone = full("gone.bsave", 1);
    PrunePlan.Candidate i = incremental("i.bsave", 2, gone);
    stored.remove(gone);
    PrunePlan plan = PrunePlan.decide(stored, KEEP_LAST_1);

    assertThat(kept(plan)).containsExactly("i.bsave");
    assertThat(plan.warnings()).containsExactly(i.image().uri() + " depends on base "
        + gone.lineage().id() + " (saved as " + i.lineage().bases().get(0).location()
        + "), which is not stored here: it cannot be restored without it");
  }

  @Test
  void aConfirmedConsolidationCountsOnceAndTakesTheOriginalsPlaceAndItsBases() {
    PrunePlan.Candidate f = full("f.bsave", 1);
    PrunePlan.Candidate i = incremental("i.bsave", 2, f);
    consolidated("c.bsave", 5, i, false);
    full("older.bsave", 0);
    Map<String, PrunePlan.Decision> d = byName(
        PrunePlan.decide(stored, KEEP_LAST_2, Map.of(), CONFIRMED));

    assertThat(d.get("c.bsave").reasons()).containsExactly("last 1");
    assertThat(d.get("i.bsave").keep()).isFalse();
    assertThat(d.get("i.bsave").reasons()).containsExactly("consolidated into c.bsave");
    // c and i are one point in time, so the second image kept is the next save, f, and for
    // itself: c needs no base.
    assertThat(d.get("f.bsave").reasons()).containsExactly("last 2");
    assertThat(d.get("older.bsave").keep()).isFalse();
  }

  @Test
  void aClaimToBeConsolidatedThatIsNotConfirmedIsDroppedAndBothImagesAreJudgedAlone() {
    PrunePlan.Candidate f = full("f.bsave", 1);
    PrunePlan.Candidate i = incremental("i.bsave", 2, f);
    consolidated("c.bsave", 5, i, false);
    PrunePlan plan = PrunePlan.decide(stored, KEEP_LAST_2, Map.of(),
        (c, o) -> "file a.txt differs");
    Map<String, PrunePlan.Decision> d = byName(plan);

    assertThat(d.get("i.bsave").keep()).isTrue();
    assertThat(d.get("i.bsave").reasons()).noneMatch(r -> r.startsWith("consolidated into"));
    assertThat(d.get("f.bsave").reasons()).containsExactly("base of i.bsave");
    assertThat(plan.warnings()).containsExactly("/backup/data/c.bsave says it was consolidated"
        + " from i.bsave, which is not confirmed (file a.txt differs): it is judged by itself");
  }

  @Test
  void withoutAProofNoClaimIsBelieved() {
    PrunePlan.Candidate f = full("f.bsave", 1);
    PrunePlan.Candidate i = incremental("i.bsave", 2, f);
    consolidated("c.bsave", 5, i, false);
    PrunePlan plan = PrunePlan.decide(stored, KEEP_LAST_2);

    assertThat(kept(plan)).contains("i.bsave", "f.bsave");
    assertThat(plan.warnings()).singleElement().asString().contains("(not checked)");
  }

  @Test
  void anEncryptedHeadersClaimCanKeepImagesButNeverHaveOneDeleted() {
    PrunePlan.Candidate f = full("f.bsave", 1);
    PrunePlan.Candidate i = incremental("i.bsave", 2, f);
    consolidated("c.bsave", 5, i, true);
    Map<String, PrunePlan.Decision> d = byName(
        PrunePlan.decide(stored, KEEP_LAST_2, Map.of(), CONFIRMED));

    assertThat(d.get("i.bsave").keep()).as("i, though c's header claims to stand for it").isTrue();
    assertThat(d.get("c.bsave").keep()).isTrue();
    assertThat(d.get("f.bsave").reasons()).containsExactly("base of i.bsave");
  }

  @Test
  void aDamagedImageIsNeitherCountedNorDeleted() {
    full("d1.bsave", 1);
    full("d2.bsave", 2);
    add("data", "d3.bsave", day(3), false, null, "catalog: bad magic", null);
    Map<String, PrunePlan.Decision> d = byName(PrunePlan.decide(stored, KEEP_LAST_1));

    assertThat(d.get("d3.bsave").reasons())
        .containsExactly("damaged, not counted: catalog: bad magic");
    assertThat(d.get("d2.bsave").reasons()).as("the newest that reads").containsExactly("last 1");
    assertThat(d.get("d1.bsave").keep()).isFalse();
  }

  @Test
  void anImageNoKeyGivenOpensIsNeitherCountedNorDeleted() {
    full("d1.bsave", 1);
    add("data", "d2.bsave", day(2), false,
        new Lineage(ImageId.random(), null, 0, List.of(), day(2), true, true), null,
        "not counted: no key given opens it");
    Map<String, PrunePlan.Decision> d = byName(PrunePlan.decide(stored, KEEP_LAST_1));

    assertThat(d.get("d2.bsave").reasons()).containsExactly("not counted: no key given opens it");
    assertThat(d.get("d1.bsave").reasons()).containsExactly("last 1");
  }

  @Test
  void anImageBeingUploadedOrUsedByARunIsKeptWithItsBases() {
    add("data", "uploading.bsave", day(1), true,
        new Lineage(ImageId.random(), null, 0, List.of(), day(1), false, false), null, null);
    PrunePlan.Candidate f = full("f.bsave", 2);
    PrunePlan.Candidate used = incremental("used.bsave", 3, f);
    full("newest.bsave", 4);
    Map<String, PrunePlan.Decision> d = byName(PrunePlan.decide(stored, KEEP_LAST_1,
        Map.of(used.lineage().id(), "save"), CONFIRMED));

    assertThat(d.get("newest.bsave").reasons()).containsExactly("last 1");
    assertThat(d.get("uploading.bsave").reasons()).containsExactly("upload in progress");
    assertThat(d.get("used.bsave").reasons()).containsExactly("in use by a save");
    assertThat(d.get("f.bsave").reasons()).containsExactly("base of used.bsave");
  }

  @Test
  void eachSeriesIsJudgedByItselfAndListedNewestFirst() {
    full("a1.bsave", 2);
    full("a2.bsave", 3);
    add("other", "b1.bsave", day(1), false,
        new Lineage(ImageId.random(), null, 0, List.of(), day(1), false, false), null, null);
    PrunePlan plan = PrunePlan.decide(stored, KEEP_LAST_1);

    assertThat(plan.decisions()).extracting(x -> name(x.image().uri()))
        .containsExactly("a2.bsave", "a1.bsave", "b1.bsave");
    assertThat(kept(plan)).as("the oldest image of all, the newest of its series")
        .containsExactly("a2.bsave", "b1.bsave");
  }
}

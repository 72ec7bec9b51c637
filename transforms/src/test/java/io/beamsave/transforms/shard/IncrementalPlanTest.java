package io.beamsave.transforms.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What an incremental save reads again: only files that are new or changed by any sign the
 * kernel gives; an unchanged file points at the bytes its base (or an older image) holds.
 */
class IncrementalPlanTest {
  static final byte[] D1 = {1, 1, 1, 1, 1, 1, 1, 1};
  static final byte[] D2 = {2, 2, 2, 2, 2, 2, 2, 2};

  /** A file as a listing sees it: its metadata, no extents yet. */
  static Entry listed(String path, long size) {
    return Entries.file(path, size);
  }

  /** The same file as the base saved it, its bytes in the base's own shards. */
  static Entry saved(String path, long size, Extent... extents) {
    return Entries.file(path, size, extents);
  }

  static Catalog base(List<Entry> entries) {
    return Entries.catalog("zstd:3", 4096, entries, List.of());
  }

  @Test
  void anUnchangedFilePointsAtTheBytesTheBaseHolds() {
    Catalog base = base(List.of(Entries.dir("d"),
        saved("d/a", 5000, new Extent(0, 0, 4096, D1), new Extent(1, 0, 904, D2))));
    IncrementalPlan.Result r = IncrementalPlan.against(
        List.of(Entries.dir("d"), listed("d/a", 5000)), base, "/backup/base.bsave");

    assertThat(r.entries().get(1).extents()).containsExactly(
        new Extent(1, 0, 0, 4096, D1), new Extent(1, 1, 0, 904, D2));
    assertThat(r.referencedBytes()).isEqualTo(5000);
    assertThat(r.bases()).singleElement().satisfies(b -> {
      assertThat(b.id()).isEqualTo(base.id());
      assertThat(b.location()).isEqualTo("/backup/base.bsave");
    });
    assertThat(r.depth()).isEqualTo(1);
  }

  /** Each sign of a change, applied to a file that is otherwise as the base saved it. */
  static List<Object[]> changes() {
    return List.of(
        change("size", e -> with(e, e.mode(), 5, 6, 7, 8, 9, 99)),
        change("permission bits", e -> with(e, 0600, 5, 6, 7, 8, 9, 100)),
        change("mtime", e -> with(e, e.mode(), 50, 6, 7, 8, 9, 100)),
        change("mtime nanoseconds", e -> with(e, e.mode(), 5, 7, 7, 8, 9, 100)),
        change("ctime (a rewrite with its mtime put back)",
            e -> with(e, e.mode(), 5, 6, 70, 8, 9, 100)),
        change("ctime nanoseconds", e -> with(e, e.mode(), 5, 6, 7, 9, 9, 100)),
        change("inode (replaced by another file)", e -> with(e, e.mode(), 5, 6, 7, 8, 10, 100)));
  }

  static Object[] change(String what, UnaryOperator<Entry> how) {
    return new Object[] {what, how};
  }

  static Entry with(Entry e, int mode, long mtime, int mtimeNs, long ctime, int ctimeNs,
      long inode, long size) {
    return new Entry(e.path(), e.type(), e.flags(), mode, e.uid(), e.gid(), mtime, mtimeNs,
        ctime, ctimeNs, inode, size, e.linkTarget(), e.extents());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("changes")
  void aFileWhoseMetadataChangedIsReadAgain(String what, UnaryOperator<Entry> change) {
    Catalog base = base(List.of(saved("f", 100, new Extent(0, 0, 100, D1))));
    Entry now = change.apply(listed("f", 100));
    IncrementalPlan.Result r = IncrementalPlan.against(List.of(now), base, "base.bsave");

    assertThat(r.entries()).containsExactly(now);
    assertThat(r.referencedBytes()).isZero();
    assertThat(r.bases()).as("the direct base stays the image's parent").hasSize(1);
  }

  @Test
  void aFileTheBaseDidNotSaveWholeIsReadAgain() {
    Catalog base = base(List.of(
        saved("changing", 100, new Extent(0, 0, 100, D1)).withFlags(Entry.FLAG_CHANGED),
        saved("unreadable", 100, new Extent(0, 100, 100, D2)).withFlags(Entry.FLAG_UNREADABLE)));
    List<Entry> now = List.of(listed("changing", 100), listed("unreadable", 100));

    IncrementalPlan.Result r = IncrementalPlan.against(now, base, "base.bsave");

    assertThat(r.entries()).allSatisfy(e -> assertThat(e.extents()).isEmpty());
    assertThat(r.referencedBytes()).isZero();
  }

  @Test
  void newFilesEmptyFilesAndWhatWasNoFileInTheBaseAreReadAsListed() {
    Entry dirThen = new Entry(PathBytes.of("x"), EntryType.DIRECTORY, 0, 0644, 0, 0, 5, 6, 7, 8,
        9, 0, null, List.of());
    Catalog base = base(List.of(dirThen, saved("empty", 0)));
    List<Entry> now = List.of(listed("x", 100), listed("empty", 0), listed("new", 10));

    IncrementalPlan.Result r = IncrementalPlan.against(now, base, "base.bsave");

    assertThat(r.entries()).containsExactlyElementsOf(now);
    assertThat(r.referencedBytes()).isZero();
  }

  @Test
  void referencesIntoTheBasesBasesAreFlattenedAndBasesNoFileNeedsAreDropped() {
    Catalog.Base older = new Catalog.Base(ImageId.random(), new byte[32], 1, "/b/older.bsave");
    Catalog.Base oldest = new Catalog.Base(ImageId.random(), new byte[32], 0, "/b/oldest.bsave");
    // The base, itself incremental: "own" in its shards, "kept" in its base 2 (oldest); nothing
    // of the base's base 1 (older) is referenced by anything that stays unchanged.
    Catalog base = Entries.catalog("zstd:3", 4096, List.of(
            saved("kept", 300, new Extent(2, 4, 0, 300, D2)),
            saved("own", 200, new Extent(0, 0, 200, D1)),
            saved("rewritten", 50, new Extent(1, 0, 0, 50, D1))), List.of())
        .withIdentity(ImageId.random(), null, 2, List.of(older, oldest));
    List<Entry> now = List.of(listed("kept", 300), listed("own", 200),
        with(listed("rewritten", 50), 0644, 5, 6, 70, 8, 9, 50));

    IncrementalPlan.Result r = IncrementalPlan.against(now, base, "/b/base.bsave");

    assertThat(r.bases()).extracting(Catalog.Base::location)
        .containsExactly("/b/base.bsave", "/b/oldest.bsave");
    assertThat(r.entries().get(0).extents()).as("kept: in oldest, now base 2")
        .containsExactly(new Extent(2, 4, 0, 300, D2));
    assertThat(r.entries().get(1).extents()).as("own: in the base, base 1")
        .containsExactly(new Extent(1, 0, 0, 200, D1));
    assertThat(r.entries().get(2).extents()).as("rewritten: read again").isEmpty();
    assertThat(r.referencedBytes()).isEqualTo(500);
    assertThat(r.depth()).isEqualTo(3);
  }

  @Test
  void whenNothingIsUnchangedTheDirectBaseIsStillTheImagesParent() {
    Catalog.Base older = new Catalog.Base(ImageId.random(), new byte[32], 1, "/b/older.bsave");
    Catalog base = Entries.catalog("zstd:3", 4096,
            List.of(saved("f", 10, new Extent(1, 0, 0, 10, D1))), List.of())
        .withIdentity(ImageId.random(), null, 1, List.of(older));

    IncrementalPlan.Result r = IncrementalPlan.against(List.of(listed("g", 10)), base, "/b/base");

    assertThat(r.bases()).extracting(Catalog.Base::location).containsExactly("/b/base");
    assertThat(r.depth()).isEqualTo(2);
  }
}

package io.beamsave.transforms.save;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.sink.FileImageSink;
import io.beamsave.transforms.walk.LibraryWalker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class ListLibraryTest {
  @Rule public final transient TestPipeline pipeline = TestPipeline.create();
  @Rule public final transient TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void listsFilesDirectoriesAndLinksWithoutFollowingLinks() throws Exception {
    Path root = tmp.newFolder("lib").toPath();
    Files.createDirectories(root.resolve("empty"));
    Files.createDirectories(root.resolve("many"));
    for (int i = 0; i < 5000; i++) {
      Files.writeString(root.resolve("many/f" + i), "x".repeat(i % 7));
    }
    Files.createSymbolicLink(root.resolve("link"), Path.of("/usr"));
    Path other = tmp.newFolder("other").toPath();
    Files.writeString(other.resolve("only"), "1");

    SaveSpec spec =
        SaveSpec.of(tmp.getRoot() + "/staging")
            .withLibrary("lib", root.toString(), new FileImageSink(Path.of(tmp.getRoot() + "/lib.bsave")))
            .withLibrary("other", other.toString(), new FileImageSink(Path.of(tmp.getRoot() + "/other.bsave")));
    PCollection<KV<String, StagedListing>> listing = pipeline.apply(ListLibrary.of(spec));

    PAssert.that(listing)
        .satisfies(
            listings -> {
              Map<String, List<Entry>> byLib = new TreeMap<>();
              for (KV<String, StagedListing> kv : listings) {
                assertThat(byLib.put(kv.getKey(), new ArrayList<>(kv.getValue().entries(spec))))
                    .as("one listing per library")
                    .isNull();
              }
              List<Entry> lib = byLib.get("lib");
              assertThat(lib).hasSize(5000 + 3);
              Entry link = find(lib, "link");
              assertThat(link.type()).isEqualTo(EntryType.SYMLINK);
              assertThat(link.linkTarget()).isEqualTo(PathBytes.of("/usr"));
              Entry empty = find(lib, "empty");
              assertThat(empty.type()).isEqualTo(EntryType.DIRECTORY);
              Entry f6 = find(lib, "many/f6");
              assertThat(f6.size()).isEqualTo(6);
              assertThat(Entries.paths(byLib.get("other"))).containsExactly("only");
              return null;
            });
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void aLibraryWalkedInPartsListsWhatAWholeWalkLists() throws Exception {
    // Names at the top of every kind and of byte values either side of '/', a directory the
    // patterns leave out, more names than parts: the parts, joined, are the whole walk.
    Path root = tmp.newFolder("parts").toPath();
    for (int i = 0; i < 40; i++) {
      Path d = root.resolve(String.format("d%02d", i));
      Files.createDirectories(d.resolve("sub"));
      Files.writeString(d.resolve("sub/f"), "x".repeat(i));
      Files.writeString(root.resolve(String.format("d%02d.txt", i)), "y".repeat(i));
    }
    Files.createDirectories(root.resolve("a-b/c"));
    Files.writeString(root.resolve("a-b/c/deep"), "deep");
    Files.createDirectories(root.resolve("cache"));
    Files.writeString(root.resolve("cache/skip"), "skip");
    Files.createSymbolicLink(root.resolve("zlink"), Path.of("d00"));
    SaveSpec spec = SaveSpec.of(tmp.getRoot() + "/staging")
        .withLibrary("parts", root.toString(),
            new FileImageSink(Path.of(tmp.getRoot() + "/parts.bsave")))
        .withExcludes(io.beamsave.transforms.select.Excludes.of(List.of("cache"), false));

    List<WalkInParts.Part> parts = WalkInParts.parts(spec, "parts");
    assertThat(parts).hasSize(WalkInParts.MAX_PARTS);
    java.util.concurrent.ForkJoinPool pool = LibraryWalker.newPool();
    try {
      List<WalkInParts.PartListing> walked = new ArrayList<>();
      long excluded = 0;
      for (WalkInParts.Part p : parts) {
        ListLibrary.Staged w =
            ListLibrary.stage(pool, spec, "parts", p.top(), "parts/walk-" + p.index());
        excluded += w.walked().excluded()[0];
        walked.add(new WalkInParts.PartListing(p.index(), p.of(), w.listing()));
      }
      java.util.Collections.reverse(walked); // the order parts arrive in is no matter
      StagedListing joined = WalkInParts.join("parts", walked);
      StagedListing whole = ListLibrary.stage(pool, spec, "parts").listing();

      assertThat(joined.segments()).hasSize(WalkInParts.MAX_PARTS);
      assertThat(Entries.paths(joined.entries(spec))).hasSize(40 * 4 + 3 + 1)
          .containsExactlyElementsOf(Entries.paths(whole.entries(spec)));
      assertThat(new ArrayList<>(joined.entries(spec)))
          .isEqualTo(new ArrayList<>(whole.entries(spec)));
      assertThat(joined.entries()).isEqualTo(whole.entries());
      assertThat(joined.files()).isEqualTo(whole.files());
      assertThat(joined.rawBytes()).isEqualTo(whole.rawBytes());
      assertThat(joined.head().root()).isEqualTo(whole.head().root());
      assertThat(excluded).isEqualTo(1);

      walked.remove(3);
      assertThatThrownBy(() -> WalkInParts.join("parts", walked))
          .hasMessageContaining("parts: walked parts").hasMessageContaining("not each of them");
    } finally {
      pool.shutdown();
    }
  }

  static Entry find(List<Entry> entries, String path) {
    return entries.stream().filter(e -> e.path().equals(PathBytes.of(path))).findFirst().get();
  }

  @Test
  public void anEmptyLibraryStillYieldsAListing() throws Exception {
    Path root = tmp.newFolder("nothing").toPath();
    SaveSpec spec =
        SaveSpec.of(tmp.getRoot() + "/staging")
            .withLibrary("nothing", root.toString(), new FileImageSink(Path.of(tmp.getRoot() + "/n.bsave")));
    PAssert.that(pipeline.apply(ListLibrary.of(spec)))
        .satisfies(
            listings -> {
              KV<String, StagedListing> only = listings.iterator().next();
              assertThat(only.getKey()).isEqualTo("nothing");
              assertThat(only.getValue().entries(spec)).isEmpty();
              assertThat(only.getValue().head().root().type()).isEqualTo(EntryType.DIRECTORY);
              return null;
            });
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void aWalkBegunAheadIsTakenByThePipeline() throws Exception {
    Path root = tmp.newFolder("ahead").toPath();
    Files.createDirectories(root.resolve("d"));
    Files.writeString(root.resolve("d/f"), "abc");
    SaveSpec spec =
        SaveSpec.of(tmp.getRoot() + "/staging-ahead")
            .withLibrary("ahead", root.toString(), new FileImageSink(Path.of(tmp.getRoot() + "/a.bsave")));
    ListLibrary.WalkedAhead walked = ListLibrary.walkAhead(spec);
    walked.join();
    // Gone before the pipeline runs: its listing is what the pipeline had been given.
    Files.delete(root.resolve("d/f"));
    Files.delete(root.resolve("d"));
    PAssert.that(pipeline.apply(ListLibrary.of(spec).withWalkedAhead(walked)))
        .satisfies(
            listings -> {
              KV<String, StagedListing> only = listings.iterator().next();
              assertThat(Entries.paths(only.getValue().entries(spec)))
                  .containsExactlyInAnyOrder("d", "d/f");
              return null;
            });
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void walksOfMoreLibrariesThanThreadsAheadAllEnd() throws Exception {
    // Each walk waits for the listings it hands its pool: walks in that pool would wait for
    // each other once there were as many as its threads.
    int libraries = 3 * Runtime.getRuntime().availableProcessors() + 1;
    SaveSpec spec = SaveSpec.of(tmp.getRoot() + "/staging-many");
    for (int l = 0; l < libraries; l++) {
      Path root = tmp.newFolder("many-" + l).toPath();
      for (int d = 0; d < 20; d++) {
        Files.createDirectories(root.resolve("d" + d + "/e"));
        Files.writeString(root.resolve("d" + d + "/e/f"), "x");
      }
      spec = spec.withLibrary("many-" + l, root.toString(),
          new FileImageSink(Path.of(tmp.getRoot() + "/many-" + l + ".bsave")));
    }
    java.util.Map<String, ListLibrary.Staged> done = ListLibrary.walkAhead(spec).join();
    assertThat(done).hasSize(libraries);
    for (ListLibrary.Staged s : done.values()) {
      assertThat(s.listing().entries()).isEqualTo(60);
    }
    pipeline.enableAbandonedNodeEnforcement(false);
  }

  @Test
  public void aWalkOfOtherLibrariesIsRefusedWhenThePipelineIsBuilt() throws Exception {
    Path root = tmp.newFolder("one").toPath();
    SaveSpec one = SaveSpec.of(tmp.getRoot() + "/staging-one")
        .withLibrary("one", root.toString(), new FileImageSink(Path.of(tmp.getRoot() + "/1.bsave")));
    SaveSpec two = one.withLibrary("two", root.toString(),
        new FileImageSink(Path.of(tmp.getRoot() + "/2.bsave")));
    ListLibrary.WalkedAhead walked = ListLibrary.walkAhead(one);
    assertThatThrownBy(() -> pipeline.apply(ListLibrary.of(two).withWalkedAhead(walked)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[one]");
    pipeline.enableAbandonedNodeEnforcement(false);
  }
}

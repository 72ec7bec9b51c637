package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.shard.ShardPlanner;
import io.beamsave.transforms.sink.ImageSink;
import io.beamsave.transforms.store.StoreException;
import io.beamsave.transforms.walk.Listing;
import io.beamsave.transforms.walk.Unreadable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;

/**
 * Per library, gathers the results of the compressed shards, which workers have already handed
 * to the library's {@link ImageSink}, and has the sink finish the image with the catalog
 * (entries with their extents and digests, and the shard table) and the trailer; the image
 * appears only when complete. The library's staging is then removed, and an {@link
 * ImageSummary} left in staging for the report. Emits (library, image location).
 *
 * <p>The entries come from the listing {@link PlanShards} left in staging, and the plan is
 * recomputed from them ({@link ShardPlanner} is deterministic), so the listing crosses no
 * shuffle. A library without file data arrives as one empty shard, which is dropped.
 */
public final class AssembleImage
    extends PTransform<PCollection<KV<String, ShardResult>>, PCollection<KV<String, String>>> {
  private final SaveSpec spec;

  private AssembleImage(SaveSpec spec) {
    this.spec = spec;
  }

  public static AssembleImage of(SaveSpec spec) {
    return new AssembleImage(spec);
  }

  @Override
  public PCollection<KV<String, String>> expand(PCollection<KV<String, ShardResult>> shards) {
    return shards
        .apply("GroupByLibrary", GroupByKey.create())
        .apply("Write", ParDo.of(new AssembleImageFn(spec)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), StringUtf8Coder.of()));
  }

  static final class AssembleImageFn
      extends DoFn<KV<String, Iterable<ShardResult>>, KV<String, String>> {
    private final SaveSpec spec;
    private final StageMetrics stage = StageMetrics.of("assemble");

    AssembleImageFn(SaveSpec spec) {
      this.spec = spec;
    }

    @ProcessElement
    public void process(
        @Element KV<String, Iterable<ShardResult>> shards, OutputReceiver<KV<String, String>> out,
        org.apache.beam.sdk.options.PipelineOptions options) throws IOException {
      stage.started();
      String name = shards.getKey();
      SaveSpec.Library lib = spec.library(name);
      StagedListing staged = PlanShards.readListing(spec, name);
      Listing listing = staged.head();
      long raw = staged.rawBytes();
      long shardSize = spec.shardSize(raw);
      long planned = staged.shards();
      // A task that ran twice wrote its shard twice, each copy whole and kept apart by the
      // sink, and both results may arrive here: the sink keeps the copy its image holds.
      Map<ImageSink.WrittenShard, ShardResult> results = new IdentityHashMap<>();
      Set<Integer> distinct = new HashSet<>();
      for (ShardResult r : shards.getValue()) {
        if (r.rawLength() > 0) {
          results.put(r.written(), r);
          distinct.add(r.shard());
        }
      }
      if (distinct.size() != planned) {
        throw new IllegalStateException(
            name + ": " + distinct.size() + " shards compressed, " + planned + " planned");
      }
      // Every planned file is read: what exists only now is added after them.
      LateFiles.Compressed late = LateFiles.compress(spec, name, Math.toIntExact(planned),
          shardSize, options.getJobName());
      late.shards().forEach(r -> results.put(r.written(), r));
      Map<String, String> notes = new java.util.LinkedHashMap<>(lib.notes());
      notes.putAll(late.notes());
      // An encrypted image's header, written before its first shard, already names its id and
      // when it was made; its catalog must agree.
      ImageKey key = lib.sink().key();
      ImageId id = key != null ? key.id() : ImageId.random();
      long created = key != null ? key.envelope().createdMillis()
          : spec.startedMillis() > 0 ? spec.startedMillis() : System.currentTimeMillis();
      Function<List<ImageSink.Kept>, Catalog> catalog = kept -> {
        List<ShardResult> byShard = kept.stream().map(k -> results.get(k.copy())).toList();
        // The entries are made as the catalog's pages are written, one at a time.
        PlannedEntries entries = new PlannedEntries(spec, name, staged, byShard,
            late.entries());
        return new Catalog(name, spec.codec().spec(), created,
            spec.blockSize(), shardSize, listing.root(), entries,
            kept.stream().map(ImageSink.Kept::info).toList())
            .withIdentity(id, null, listing.depth(), listing.bases())
            .withNotes(io.beamsave.transforms.image.catalog.Notes.check(notes));
      };
      checkBasesStored(lib, listing.bases(), spec);
      long imageBytes;
      try {
        imageBytes = lib.sink().finish(new ArrayList<>(results.keySet()), catalog, spec.codec(),
            spec.blockSize());
      } catch (IOException e) {
        throw BeamsaveException.io("cannot write image", lib.destination(), e);
      }
      String image = lib.destination();
      new ImageSummary(name, lib.destination(), staged.files() + late.entries().size(),
          raw + late.rawBytes(), imageBytes, distinct.size() + late.shards().size(),
          unreadable(listing, results.values()), listing.missing(),
          id.toString(), listing.bases().isEmpty() ? "" : listing.bases().get(0).location(),
          staged.referencedBytes(), staged.comparedBytes())
          .writeTo(spec);
      Staging.remove(spec, name + "/");
      out.output(KV.of(name, image));
      stage.finished();
    }
  }

  /**
   * Fails unless every image the new one references is still stored: the direct base as it was
   * read when the save began (its tag: an ETag, or a file's inode, size and mtime), the others
   * where a reader would look for them. A base removed or replaced while the save ran (a prune,
   * an operator) would leave an image that cannot be restored; better no image and one line.
   */
  static void checkBasesStored(SaveSpec.Library lib, List<Catalog.Base> bases, SaveSpec spec) {
    for (int i = 0; i < bases.size(); i++) {
      Catalog.Base b = bases.get(i);
      boolean direct = i == 0 && lib.base() != null && lib.base().id().equals(b.id());
      String why = null;
      try {
        if (direct && !lib.baseTag().isEmpty()) {
          ImageSources.open(b.location(), spec.s3(), lib.baseTag()).close();
        } else if (!ImageChain.stored(lib.destination(), b, spec.s3())) {
          why = "is no longer stored";
        }
      } catch (StoreException e) {
        why = e.kind() == StoreException.Kind.CHANGED ? "was replaced"
            : "cannot be reached (" + e.getMessage() + ")";
      } catch (IOException | RuntimeException e) {
        why = "is no longer there as it was (" + e.getMessage() + ")";
      }
      if (why != null) {
        throw new BeamsaveException(lib.destination() + ": base image " + b.location() + " "
            + why + " while this save ran, and the image would not restore without it; nothing"
            + " was made: save again");
      }
    }
  }

  /**
   * What the walk and the shards could not read, each entry once (a file of several pieces may
   * fail in each), in path order.
   */
  static List<Unreadable> unreadable(Listing listing, java.util.Collection<ShardResult> results) {
    java.util.TreeMap<PathBytes, Unreadable> all = new java.util.TreeMap<>();
    listing.unreadable().forEach(u -> all.putIfAbsent(u.path(), u));
    results.forEach(r -> r.unreadable().forEach(u -> all.putIfAbsent(u.path(), u)));
    return new ArrayList<>(all.values());
  }
}

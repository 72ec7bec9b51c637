package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.image.CatalogWalk;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.block.BlockBuffer;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.shard.IncrementalPlan;
import io.beamsave.transforms.shard.ShardPlanner;
import io.beamsave.transforms.walk.Listing;
import java.io.ByteArrayInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;

/**
 * Plans each library's shards from its staged listing, entry by entry in path order, and cuts
 * them into {@link ShardTask}s with {@link ShardPlanner}. Against a base image, the listing is
 * first merged with the base's catalog, page by page, into a planned listing staged beside it
 * ({@link IncrementalPlan.Merge}). The planned listing's head is left in staging for {@link
 * AssembleImage}. A library with no file data still yields one (empty) task, so that its image
 * is assembled.
 *
 * <p>Counter: {@code bytesPlanned}, the raw bytes of all shards (the total that progress is
 * measured against).
 */
public final class PlanShards
    extends PTransform<PCollection<KV<String, StagedListing>>, PCollection<ShardTask>> {
  private final SaveSpec spec;

  private PlanShards(SaveSpec spec) {
    this.spec = spec;
  }

  public static PlanShards of(SaveSpec spec) {
    return new PlanShards(spec);
  }

  @Override
  public PCollection<ShardTask> expand(PCollection<KV<String, StagedListing>> listing) {
    return listing
        .apply("Plan", ParDo.of(new PlanShardsFn(spec)))
        .setCoder(ShardTask.CODER);
  }

  static final class PlanShardsFn extends DoFn<KV<String, StagedListing>, ShardTask> {
    private final SaveSpec spec;
    private final Counter bytesPlanned = StageMetrics.counter(StageMetrics.BYTES_PLANNED);
    private final Counter bytesReferenced =
        StageMetrics.counter(StageMetrics.BYTES_REFERENCED);
    private final StageMetrics stage = StageMetrics.of("plan");

    PlanShardsFn(SaveSpec spec) {
      this.spec = spec;
    }

    @ProcessElement
    public void process(
        @Element KV<String, StagedListing> listing, OutputReceiver<ShardTask> out)
        throws IOException {
      stage.started();
      StagedListing listed = listing.getValue();
      String name = listing.getKey();
      SaveSpec.Library lib = spec.library(name);
      if (lib.base() != null) {
        if (listed.head().bases().isEmpty()) {
          // Not planned against the base ahead (ListLibrary.walkAhead): planned here.
          listed = againstBase(spec, name, listed);
        }
        bytesReferenced.inc(listed.referencedBytes());
      }
      long raw = listed.rawBytes();
      long shardSize = spec.shardSize(raw);
      long shards = -Math.floorDiv(-raw, shardSize);
      if (shards > lib.sink().maxShards()) {
        long leastMiB = -Math.floorDiv(-raw, (long) lib.sink().maxShards() << 20);
        throw new BeamsaveException(lib.destination() + ": " + shards
            + " shards are more than the " + lib.sink().maxShards()
            + " this image can hold; use --shard-size " + leastMiB + "MiB or more");
      }
      // The plan is made entry by entry, and each shard's pieces go out once it is complete.
      ShardPlanner.Layout layout = new ShardPlanner.Layout(shardSize);
      List<ShardTask.FileRange> pieces = new ArrayList<>();
      int shard = 0;
      for (Iterator<Entry> it = listed.read(spec); it.hasNext(); ) {
        Entry e = it.next();
        long fileOffset = 0;
        for (Extent x : layout.place(e).extents()) {
          if (!x.isReference()) {
            if (x.shard() != shard) {
              emit(name, shard, pieces, out);
              pieces = new ArrayList<>();
              shard = x.shard();
            }
            pieces.add(ShardTask.FileRange.of(e, fileOffset, x.length()));
          }
          fileOffset += x.length();
        }
      }
      // A library without file data still has one (empty) task, so that it is assembled.
      emit(name, shard, pieces, out);
      if (layout.shardCount() > lib.sink().maxShards()) {
        // Shards of many small files close before they are full (ShardPlanner).
        throw new BeamsaveException(lib.destination() + ": " + layout.shardCount()
            + " shards are more than the " + lib.sink().maxShards() + " this image can hold (a"
            + " shard of small files closes at about 200,000 of them); save the library as"
            + " several, one per directory");
      }
      writeListing(spec, name, listed.withShards(layout.shardCount()));
      bytesPlanned.inc(raw);
      stage.finished();
    }

    /** Hands on shard {@code shard}'s task, its pieces staged if they are many. */
    private void emit(String library, int shard, List<ShardTask.FileRange> pieces,
        OutputReceiver<ShardTask> out) throws IOException {
      if (pieces.size() <= ShardTask.INLINE_PIECES) {
        out.output(new ShardTask(library, shard, pieces));
        return;
      }
      long size = 4;
      for (ShardTask.FileRange p : pieces) {
        size += ShardPlanner.pieceBytes(p.path().length());
      }
      BlockBuffer bytes = new BlockBuffer(size);
      try (DataOutputStream data = new DataOutputStream(bytes)) {
        ShardTask.writePieces(pieces, data);
      }
      String staged = Staging.piecesName(library, shard);
      Staging.write(spec, library, staged, bytes.array(), bytes.size());
      out.output(new ShardTask(library, shard, List.of(), staged));
    }
  }

  /**
   * {@code walked} planned against the library's base: merged, in path order, with the base's
   * catalog read page by page, unchanged files pointing at the bytes the base holds; staged as
   * a listing of its own.
   */
  static StagedListing againstBase(SaveSpec spec, String library, StagedListing walked)
      throws IOException {
    SaveSpec.Library lib = spec.library(library);
    Catalog.Base base = lib.base();
    StagedEntries.Writer planned =
        new StagedEntries.Writer(spec, library, Staging.planName(library));
    long[] counts = new long[3];
    IncrementalPlan.Merge merge;
    java.util.Map<PathBytes, Entry> renamed;
    Iterator<Entry> now = walked.read(spec);
    try (ImageSource src = ImageSources.open(base.location(), spec.s3());
        Beneath tree = new Beneath(Dir.open(lib.readPath(), lib.rootPath()))) {
      CatalogHead head = ImageReader.readHead(src,
          lib.baseKey() == null ? Keys.NONE : Keys.of(lib.baseKey()), false);
      Catalog c = head.catalog();
      if (!c.id().equals(base.id()) || !Arrays.equals(c.digest(), base.catalogDigest())) {
        throw new BeamsaveException("--base " + base.location() + ": the image was replaced"
            + " while the save started");
      }
      merge = new IncrementalPlan.Merge(c, base.location());
      ChangedFiles files = new ChangedFiles(merge, tree);
      Entry[] pending = {now.hasNext() ? now.next() : null};
      CatalogWalk baseWalk = new CatalogWalk(src, head);
      baseWalk.walk(PathBytes.of(new byte[0]), old -> {
        files.sawBase(old);
        int order;
        while (pending[0] != null && (order = PathOrder.compare(pending[0].path(), old.path()))
            <= 0) {
          add(planned, files.plan(pending[0], order == 0 ? old : null), counts);
          pending[0] = now.hasNext() ? now.next() : null;
        }
      });
      for (Entry e = pending[0]; e != null; e = now.hasNext() ? now.next() : null) {
        add(planned, files.plan(e, null), counts);
      }
      renamed = files.renamed(baseWalk);
    }
    int chunks = planned.finish();
    String stem = planned.stem();
    int[] renumber = merge.renumbering();
    if (renumber != null || !renamed.isEmpty()) {
      // Renamed files found their bytes in the base, or some of the base's own bases are no
      // longer referenced: the planned listing is taken once more.
      StagedEntries.Writer again =
          new StagedEntries.Writer(spec, library, Staging.planName(library) + "-again");
      for (Iterator<Entry> it = StagedEntries.read(spec, library, stem, chunks,
          planned.entries()); it.hasNext(); ) {
        Entry e = it.next();
        Entry moved = renamed.get(e.path());
        if (moved != null) {
          long referenced = ChangedFiles.referenced(moved);
          counts[1] -= referenced;
          counts[2] += referenced;
          e = moved;
        }
        again.add(IncrementalPlan.renumbered(e, renumber));
      }
      chunks = again.finish();
      stem = again.stem();
    }
    Listing head = walked.head().withBases(merge.bases(), merge.depth());
    return new StagedListing(head, stem, chunks, planned.entries(), counts[0], counts[1],
        counts[2]).withComparedBytes(merge.comparedBytes());
  }

  /** Stages {@code e}, counting files, bytes stored anew and bytes referenced. */
  private static void add(StagedEntries.Writer out, Entry e, long[] counts) throws IOException {
    out.add(e);
    if (e.isFile()) {
      counts[0]++;
      long referenced = 0;
      for (Extent x : e.extents()) {
        referenced += x.isReference() ? x.length() : 0;
      }
      counts[1] += e.size() - referenced;
      counts[2] += referenced;
    }
  }

  /** Keeps the planned listing's head in staging, where {@link AssembleImage} reads it. */
  static void writeListing(SaveSpec spec, String library, StagedListing listing)
      throws IOException {
    BlockBuffer out = new BlockBuffer(4096);
    StagedListing.CODER.encode(listing, out);
    Staging.write(spec, library, Staging.listingName(library), out.array(), out.size());
  }

  /** The planned listing {@link #writeListing} left in staging. */
  static StagedListing readListing(SaveSpec spec, String library) throws IOException {
    return StagedListing.CODER.decode(
        new ByteArrayInputStream(Staging.read(spec, library, Staging.listingName(library))));
  }

  /**
   * The raw bytes planned for all libraries of {@code spec}, from what the planning step left
   * in staging: for progress on runners whose counters arrive only when a task ends.
   */
  public static long plannedBytes(SaveSpec spec) throws IOException {
    long bytes = 0;
    for (String library : spec.libraries().keySet()) {
      bytes += readListing(spec, library).rawBytes();
    }
    return bytes;
  }
}

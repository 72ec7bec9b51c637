package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.shard.IncrementalPlan;
import io.beamsave.transforms.shard.ShardPlanner;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;

/**
 * Keeps each library's listing in the library's staging directory for {@link AssembleImage}, and
 * cuts it into {@link ShardTask}s with {@link ShardPlanner}. A library with no
 * file data still yields one (empty) task, so that its image is assembled.
 *
 * <p>Counter: {@code bytesPlanned}, the raw bytes of all shards (the total that progress is
 * measured against).
 */
public final class PlanShards
    extends PTransform<PCollection<KV<String, Listing>>, PCollection<ShardTask>> {
  private final SaveSpec spec;
  private final BaseCatalogs baseCatalogs;

  private PlanShards(SaveSpec spec, BaseCatalogs baseCatalogs) {
    this.spec = spec;
    this.baseCatalogs = baseCatalogs;
  }

  public static PlanShards of(SaveSpec spec) {
    return new PlanShards(spec, BaseCatalogs.NONE);
  }

  /**
   * Plans against these base catalogs, which the launcher has just read and checked, where the
   * workers run in its JVM, instead of reading them again. Each is used only if it is still
   * the catalog the spec's base names; other bases are read from their images.
   */
  public PlanShards withBaseCatalogs(BaseCatalogs catalogs) {
    return new PlanShards(spec, catalogs);
  }

  @Override
  public PCollection<ShardTask> expand(PCollection<KV<String, Listing>> listing) {
    return listing
        .apply("Plan", ParDo.of(new PlanShardsFn(spec, baseCatalogs)))
        .setCoder(ShardTask.CODER);
  }

  static final class PlanShardsFn extends DoFn<KV<String, Listing>, ShardTask> {
    private final SaveSpec spec;
    private final BaseCatalogs baseCatalogs;
    private final Counter bytesPlanned = StageMetrics.counter(StageMetrics.BYTES_PLANNED);
    private final Counter bytesReferenced =
        StageMetrics.counter(StageMetrics.BYTES_REFERENCED);
    private final StageMetrics stage = StageMetrics.of("plan");

    PlanShardsFn(SaveSpec spec, BaseCatalogs baseCatalogs) {
      this.spec = spec;
      this.baseCatalogs = baseCatalogs;
    }

    @ProcessElement
    public void process(
        @Element KV<String, Listing> listing, OutputReceiver<ShardTask> out)
        throws IOException {
      stage.started();
      Listing listed = listing.getValue();
      SaveSpec.Library lib = spec.library(listing.getKey());
      if (lib.base() != null) {
        IncrementalPlan.Result inc = IncrementalPlan.against(
            listed.entries(),
            readBase(lib.base(), lib.baseKey(), baseCatalogs.get(lib.name()), spec),
            lib.base().location());
        listed = listed.withBases(inc.entries(), inc.bases(), inc.depth());
        bytesReferenced.inc(inc.referencedBytes());
      }
      ShardPlanner.Plan plan = ShardPlanner.plan(listed.entries(), spec.shardSize());
      if (plan.shardCount() > lib.sink().maxShards()) {
        long leastMiB = -Math.floorDiv(-plan.rawBytes(), (long) lib.sink().maxShards() << 20);
        throw new BeamsaveException(lib.destination() + ": " + plan.shardCount()
            + " shards are more than the " + lib.sink().maxShards()
            + " this image can hold; use --shard-size " + leastMiB + "MiB or more");
      }
      writeListing(spec, listing.getKey(), listed.withEntries(plan.entries()));
      List<List<ShardTask.FileRange>> pieces = new ArrayList<>(plan.shardCount());
      for (int i = 0; i < Math.max(1, plan.shardCount()); i++) {
        pieces.add(new ArrayList<>());
      }
      for (Entry e : plan.entries()) {
        long fileOffset = 0;
        for (Extent x : e.extents()) {
          if (x.isReference()) {
            break;
          }
          pieces
              .get(x.shard())
              .add(ShardTask.FileRange.of(e, fileOffset, x.length()));
          fileOffset += x.length();
        }
      }
      for (int i = 0; i < pieces.size(); i++) {
        out.output(new ShardTask(listing.getKey(), i, pieces.get(i)));
      }
      bytesPlanned.inc(plan.rawBytes());
      stage.finished();
    }
  }

  /**
   * The base image's catalog, checked to be the image the save was planned against: one put in
   * its place meanwhile would have the new image reference bytes it does not hold. {@code
   * known} is the catalog the launcher read, if it handed one over.
   */
  static Catalog readBase(Catalog.Base base, ImageKey baseKey, Catalog known, SaveSpec spec)
      throws IOException {
    Catalog offered = known;
    if (offered != null && offered.id().equals(base.id())
        && java.util.Arrays.equals(offered.digest(), base.catalogDigest())) {
      return offered;
    }
    Catalog c;
    try (ImageSource src = ImageSources.open(base.location(), spec.s3())) {
      c = ImageReader.readCatalog(src, baseKey == null ? Keys.NONE : Keys.of(baseKey));
    }
    if (!c.id().equals(base.id()) || !java.util.Arrays.equals(c.digest(), base.catalogDigest())) {
      throw new BeamsaveException("--base " + base.location() + ": the image was replaced"
          + " while the save started");
    }
    return c;
  }

  /** Keeps the sorted listing in staging, where {@link AssembleImage} reads it back. */
  static void writeListing(SaveSpec spec, String library, Listing listing) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(1 << 16);
    Listing.CODER.encode(listing, out);
    Staging.write(spec, library, SaveSpec.listingName(library), out.toByteArray(), out.size());
  }

  /**
   * The raw bytes planned for all libraries of {@code spec}, from the listings the planning
   * step left in staging: for progress on runners whose counters arrive only when a task ends.
   */
  public static long plannedBytes(SaveSpec spec) throws IOException {
    long bytes = 0;
    for (String library : spec.libraries().keySet()) {
      bytes += ShardPlanner.plan(readListing(spec, library).entries(), spec.shardSize()).rawBytes();
    }
    return bytes;
  }

  static Listing readListing(SaveSpec spec, String library) throws IOException {
    return Listing.CODER.decode(
        new ByteArrayInputStream(Staging.read(spec, library, SaveSpec.listingName(library))));
  }
}

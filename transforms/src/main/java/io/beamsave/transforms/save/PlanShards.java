package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.image.BlockBuffer;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.PathOrder;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.shard.IncrementalPlan;
import io.beamsave.transforms.shard.ShardPlanner;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
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
      String name = listing.getKey();
      SaveSpec.Library lib = spec.library(name);
      if (lib.base() != null) {
        IncrementalPlan.Result inc = IncrementalPlan.against(
            listed.entries(),
            readBase(lib.base(), lib.baseKey(), baseCatalogs.get(lib.name()), spec),
            lib.base().location());
        listed = listed.withBases(inc.entries(), inc.bases(), inc.depth());
        bytesReferenced.inc(inc.referencedBytes());
      }
      List<Entry> sorted = listed.entries();
      if (!PathOrder.isSorted(sorted)) {
        sorted = new ArrayList<>(sorted);
        sorted.sort(ShardPlanner.BY_PATH);
      }
      listed = listed.withEntries(sorted);
      long raw = rawBytes(listed);
      long shards = -Math.floorDiv(-raw, spec.shardSize());
      if (shards > lib.sink().maxShards()) {
        long leastMiB = -Math.floorDiv(-raw, (long) lib.sink().maxShards() << 20);
        throw new BeamsaveException(lib.destination() + ": " + shards
            + " shards are more than the " + lib.sink().maxShards()
            + " this image can hold; use --shard-size " + leastMiB + "MiB or more");
      }
      // The plan is made entry by entry, and each shard's pieces go out once it is complete.
      ShardPlanner.Layout layout = new ShardPlanner.Layout(spec.shardSize());
      List<ShardTask.FileRange> pieces = new ArrayList<>();
      int shard = 0;
      for (Entry e : sorted) {
        long fileOffset = 0;
        for (Extent x : layout.place(e).extents()) {
          if (x.isReference()) {
            break;
          }
          if (x.shard() != shard) {
            emit(name, shard, pieces, out);
            pieces = new ArrayList<>();
            shard = x.shard();
          }
          pieces.add(ShardTask.FileRange.of(e, fileOffset, x.length()));
          fileOffset += x.length();
        }
      }
      // A library without file data still has one (empty) task, so that it is assembled.
      emit(name, shard, pieces, out);
      writeListing(spec, name, listed, raw);
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
        size += 70 + p.path().length();
      }
      BlockBuffer bytes = new BlockBuffer(size);
      try (DataOutputStream data = new DataOutputStream(bytes)) {
        ShardTask.writePieces(pieces, data);
      }
      String staged = SaveSpec.piecesName(library, shard);
      Staging.write(spec, library, staged, bytes.array(), bytes.size());
      out.output(new ShardTask(library, shard, List.of(), staged));
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
  static void writeListing(SaveSpec spec, String library, Listing listing, long raw)
      throws IOException {
    // Sized for the entries at once: a growing buffer held twice the listing while it copied.
    long size = 1 << 16;
    for (Entry e : listing.entries()) {
      size += 64 + e.path().length() + (e.linkTarget() == null ? 0 : 2 + e.linkTarget().length())
          + (long) e.extents().size() * 30;
    }
    BlockBuffer out = new BlockBuffer(Math.min(size, Integer.MAX_VALUE - 64));
    Listing.CODER.encode(listing, out);
    Staging.write(spec, library, SaveSpec.listingName(library), out.array(), out.size());
    ByteArrayOutputStream planned = new ByteArrayOutputStream(8);
    new DataOutputStream(planned).writeLong(raw);
    Staging.write(spec, library, SaveSpec.plannedName(library), planned.toByteArray(), 8);
  }

  /** Bytes of the listing's files that go to the new image's shards. */
  private static long rawBytes(Listing listing) {
    long n = 0;
    for (Entry e : listing.entries()) {
      boolean ref = !e.extents().isEmpty() && e.extents().get(0).isReference();
      n += e.isFile() && !ref ? e.size() : 0;
    }
    return n;
  }

  /**
   * The raw bytes planned for all libraries of {@code spec}, from what the planning step left
   * in staging: for progress on runners whose counters arrive only when a task ends.
   */
  public static long plannedBytes(SaveSpec spec) throws IOException {
    long bytes = 0;
    for (String library : spec.libraries().keySet()) {
      bytes += new java.io.DataInputStream(new ByteArrayInputStream(
          Staging.read(spec, library, SaveSpec.plannedName(library)))).readLong();
    }
    return bytes;
  }

  /** The staged listing's bytes, which {@link Listing#readHead} and its entries read. */
  static byte[] listingBytes(SaveSpec spec, String library) {
    return Staging.read(spec, library, SaveSpec.listingName(library));
  }
}

package io.beamsave.transforms.io;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
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

  private PlanShards(SaveSpec spec) {
    this.spec = spec;
  }

  public static PlanShards of(SaveSpec spec) {
    return new PlanShards(spec);
  }

  @Override
  public PCollection<ShardTask> expand(PCollection<KV<String, Listing>> listing) {
    return listing
        .apply("Plan", ParDo.of(new PlanShardsFn(spec)))
        .setCoder(ShardTask.CODER);
  }

  static final class PlanShardsFn extends DoFn<KV<String, Listing>, ShardTask> {
    private final SaveSpec spec;
    private final Counter bytesPlanned = StageMetrics.counter(StageMetrics.BYTES_PLANNED);
    private final StageMetrics stage = StageMetrics.of("plan");

    PlanShardsFn(SaveSpec spec) {
      this.spec = spec;
    }

    @ProcessElement
    public void process(
        @Element KV<String, Listing> listing, OutputReceiver<ShardTask> out)
        throws IOException {
      stage.started();
      List<Entry> entries = listing.getValue().entries();
      ShardPlanner.Plan plan = ShardPlanner.plan(entries, spec.shardSize());
      SaveSpec.Library lib = spec.library(listing.getKey());
      if (plan.shardCount() > lib.sink().maxShards()) {
        long leastMiB = -Math.floorDiv(-plan.rawBytes(), (long) lib.sink().maxShards() << 20);
        throw new BeamsaveException(lib.destination() + ": " + plan.shardCount()
            + " shards are more than the " + lib.sink().maxShards()
            + " this image can hold; use --shard-size " + leastMiB + "MiB or more");
      }
      writeListing(spec, listing.getKey(), listing.getValue().withEntries(plan.entries()));
      List<List<ShardTask.Piece>> pieces = new ArrayList<>(plan.shardCount());
      for (int i = 0; i < Math.max(1, plan.shardCount()); i++) {
        pieces.add(new ArrayList<>());
      }
      for (Entry e : plan.entries()) {
        long fileOffset = 0;
        for (Extent x : e.extents()) {
          pieces
              .get(x.shard())
              .add(ShardTask.Piece.of(e, fileOffset, x.length()));
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

  /** Keeps the sorted listing in staging, where {@link AssembleImage} reads it back. */
  static void writeListing(SaveSpec spec, String library, Listing listing) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(1 << 16);
    Listing.CODER.encode(listing, out);
    Staging.write(spec, SaveSpec.listingName(library), out.toByteArray(), out.size());
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
        new ByteArrayInputStream(Staging.read(spec, SaveSpec.listingName(library))));
  }
}

package io.beamsave.transforms.io;

import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.shard.ShardPlanner;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;

/**
 * Gathers each library's listing and cuts it into {@link ShardTask}s with {@link ShardPlanner}.
 *
 * <p>Counter: {@code bytesPlanned}, the raw bytes of all shards (the total that progress is
 * measured against).
 */
public final class PlanShards
    extends PTransform<PCollection<KV<String, EntryBatch>>, PCollection<ShardTask>> {
  private final SaveSpec spec;

  private PlanShards(SaveSpec spec) {
    this.spec = spec;
  }

  public static PlanShards of(SaveSpec spec) {
    return new PlanShards(spec);
  }

  @Override
  public PCollection<ShardTask> expand(PCollection<KV<String, EntryBatch>> listing) {
    return listing
        .apply("GroupByLibrary", GroupByKey.create())
        .apply("Plan", ParDo.of(new PlanShardsFn(spec.shardSize())))
        .setCoder(ShardTask.CODER);
  }

  static final class PlanShardsFn extends DoFn<KV<String, Iterable<EntryBatch>>, ShardTask> {
    private final long shardSize;
    private final Counter bytesPlanned = StageMetrics.counter(StageMetrics.BYTES_PLANNED);
    private final StageMetrics stage = StageMetrics.of("plan");

    PlanShardsFn(long shardSize) {
      this.shardSize = shardSize;
    }

    @ProcessElement
    public void process(
        @Element KV<String, Iterable<EntryBatch>> listing, OutputReceiver<ShardTask> out) {
      stage.started();
      ShardPlanner.Plan plan = ShardPlanner.plan(gather(listing.getValue()), shardSize);
      List<List<ShardTask.Piece>> pieces = new ArrayList<>(plan.shardCount());
      for (int i = 0; i < plan.shardCount(); i++) {
        pieces.add(new ArrayList<>());
      }
      for (Entry e : plan.entries()) {
        long fileOffset = 0;
        for (Extent x : e.extents()) {
          pieces
              .get(x.shard())
              .add(
                  new ShardTask.Piece(
                      e.path(), fileOffset, x.length(), e.size(), e.mtimeSeconds(),
                      e.mtimeNanos()));
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

  static List<Entry> gather(Iterable<EntryBatch> batches) {
    List<Entry> all = new ArrayList<>();
    for (EntryBatch b : batches) {
      all.addAll(b.entries());
    }
    return all;
  }
}

package io.beamsave.transforms.consolidate;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.save.ShardResult;
import io.beamsave.transforms.sink.ImageSink;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;

/**
 * Gathers the shards {@link ConsolidateShards} made, which the workers have already handed to
 * the image's {@link ImageSink}, and has the sink finish the consolidated image with its
 * catalog ({@link ConsolidatePlan#catalog}) and trailer; the image appears only when complete.
 * Emits the image's location.
 */
public final class AssembleConsolidated
    extends PTransform<PCollection<KV<String, ShardResult>>, PCollection<String>> {
  private final ConsolidatePlan plan;
  private final ImageSink sink;
  private final Codec codec;

  private AssembleConsolidated(ConsolidatePlan plan, ImageSink sink, Codec codec) {
    this.plan = plan.withoutTasks();
    this.sink = sink;
    this.codec = codec;
  }

  public static AssembleConsolidated of(ConsolidatePlan plan, ImageSink sink, Codec codec) {
    return new AssembleConsolidated(plan, sink, codec);
  }

  @Override
  public PCollection<String> expand(PCollection<KV<String, ShardResult>> shards) {
    return shards
        .apply("GroupShards", GroupByKey.create())
        .apply("Finish", ParDo.of(new AssembleConsolidatedFn(this)))
        .setCoder(StringUtf8Coder.of());
  }

  /**
   * Finishes the image from the shards written (each one or more times): what the pipeline's
   * last step does, and what a run does by itself when the image has no shard at all.
   */
  public static long finish(
      ConsolidatePlan plan, ImageSink sink, Codec codec, Iterable<ShardResult> results) {
    List<ImageSink.WrittenShard> written = new ArrayList<>();
    Set<Integer> distinct = new HashSet<>();
    for (ShardResult r : results) {
      written.add(r.written());
      distinct.add(r.shard());
    }
    if (distinct.size() != plan.shardCount()) {
      throw new IllegalStateException(sink.location() + ": " + distinct.size() + " shards made, "
          + plan.shardCount() + " planned");
    }
    try {
      return sink.finish(written,
          kept -> plan.catalog(kept.stream().map(ImageSink.Kept::info).toList()),
          codec, plan.blockSize());
    } catch (IOException e) {
      throw BeamsaveException.io("cannot write image", sink.location(), e);
    }
  }

  static final class AssembleConsolidatedFn
      extends DoFn<KV<String, Iterable<ShardResult>>, String> {
    private final ConsolidatePlan plan;
    private final ImageSink sink;
    private final Codec codec;
    private final StageMetrics stage = StageMetrics.of("assemble");

    AssembleConsolidatedFn(AssembleConsolidated spec) {
      this.plan = spec.plan;
      this.sink = spec.sink;
      this.codec = spec.codec;
    }

    @ProcessElement
    public void process(
        @Element KV<String, Iterable<ShardResult>> shards, OutputReceiver<String> out) {
      stage.started();
      finish(plan, sink, codec, shards.getValue());
      out.output(sink.location());
      stage.finished();
    }
  }
}

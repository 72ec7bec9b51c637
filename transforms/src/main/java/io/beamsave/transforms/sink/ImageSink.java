package io.beamsave.transforms.sink;

import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.ShardInfo;
import java.io.IOException;
import java.io.Serializable;
import java.util.List;
import java.util.function.Function;

/**
 * The one place that knows where an image goes, chosen once when the save is planned ({@link
 * FileImageSink} for a file, {@link StoreImageSink} for object storage) and carried in the
 * save's spec to every worker. The model is Beam's {@code WriteFiles}: workers write temporary
 * output as their shards complete, and one finalizing step makes the image.
 *
 * <ul>
 *   <li>{@link #writeShard} takes one compressed shard. It is idempotent by shard id: a task
 *       that runs twice (a retried bundle, a job restarted after a lost TaskManager) writes its
 *       shard again, and the image is built from one whole copy.
 *   <li>{@link #finish} writes the catalog and the trailer and makes the image appear at its
 *       final name or key, complete, or not at all.
 *   <li>{@link #abandon} removes what an unfinished run wrote, so that workers still running
 *       cannot bring it back.
 * </ul>
 */
public interface ImageSink extends Serializable {
  /** Where the finished image is, as the operator names it: a path or {@code s3://B/K}. */
  String location();

  /**
   * Before the save runs: removes what an earlier, killed run of this image left that would
   * otherwise be taken for this run's output.
   */
  void prepare() throws IOException;

  /**
   * Writes shard {@code shard}'s blocks {@code blocks[0, len)}; returns where this copy is, by
   * which {@link #finish} finds it: for a file, its offset in the image; for a store, the id of
   * the staged object. Each copy is kept apart, since two runs of a task need not produce the
   * same bytes ({@code auto} picks levels by timing).
   */
  long writeShard(int shard, byte[] blocks, int len) throws IOException;

  /**
   * Makes the image from the shards written, one copy of each, in shard order ({@code shards}
   * says where each copy is, as {@link #writeShard} returned): {@code catalog} builds the catalog from the
   * final shard table, {@code codec} compresses it in blocks of {@code blockSize}. Returns the
   * image's length.
   */
  long finish(
      List<WrittenShard> shards, Function<List<ShardInfo>, Catalog> catalog, Codec codec,
      int blockSize) throws IOException;

  /** One copy of a shard as written: its id, where it is, its lengths and block lengths. */
  record WrittenShard(int shard, long where, long storedLength, long rawLength, int[] blocks) {}

  /** The run failed and its workers have stopped: removes its unfinished output. */
  void discard();

  /**
   * The run was interrupted and workers may still be running: removes its unfinished output
   * for good, so that none of them can write it again.
   */
  void abandon();
}

package io.beamsave.transforms.sink;

import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.ShardInfo;
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
 *   <li>{@link #prepare} runs before the pipeline is built and returns the sink the workers
 *       carry.
 *   <li>{@link #writeShard} takes one compressed shard. It is idempotent by shard id: a task
 *       that runs twice (a retried bundle, a job restarted after a lost TaskManager) writes its
 *       shard again, and the image is built from one whole copy.
 *   <li>{@link #finish} writes the catalog and the trailer and makes the image appear at its
 *       final name or key, complete, or not at all.
 *   <li>{@link #discard} removes what an unfinished run wrote, so that workers still running
 *       cannot bring it back, and says what it could not remove.
 * </ul>
 */
public interface ImageSink extends Serializable {
  /** Where the finished image is, as the operator names it: a path or {@code s3://B/K}. */
  String location();

  /**
   * The key of the encrypted image this sink writes, or null if it is not encrypted. Workers
   * seal each shard under a key of its own and hand {@link #writeShard} the frames; {@link
   * #finish} seals the catalog and records every key wrapped by this one.
   */
  default ImageKey key() {
    return null;
  }

  /** This sink writing an image encrypted with {@code key} (null: not encrypted). */
  ImageSink encryptedWith(ImageKey key);

  /** The bytes the image begins with: its header. */
  default byte[] header() {
    return key() == null ? ImageFormat.header() : key().header();
  }

  /**
   * Before the pipeline is built: removes what an earlier, killed run of this image left that
   * would otherwise be taken for this run's output, and returns the sink the workers are to
   * write to (this one, or one that carries what was begun here, such as an upload's id).
   */
  ImageSink prepare() throws IOException;

  /** The most shards an image of this sink can hold. */
  default int maxShards() {
    return Integer.MAX_VALUE;
  }

  /**
   * Writes shard {@code shard}'s blocks {@code blocks[0, len)}; returns where this copy is, by
   * which {@link #finish} finds it. Two runs of a task need not produce the same bytes ({@code
   * auto} picks levels by timing), so each copy can be told apart.
   */
  Copy writeShard(int shard, byte[] blocks, int len) throws IOException;

  /**
   * Where one copy of a shard went, in the sink's own terms, by which {@link #finish} finds it:
   * one record per kind of place.
   */
  sealed interface Copy extends Serializable
      permits Copy.InFile, Copy.Staged, Copy.Part, Copy.ImageComplete {
    /** Appended to the image's partial file at {@code offset} ({@link FileImageSink}). */
    record InFile(long offset) implements Copy {}

    /**
     * Staged as an object of its own beside the image, {@code id} telling it from the shard's
     * other copies ({@link StoreImageSink}).
     */
    record Staged(long id) implements Copy {}

    /**
     * Sent as the shard's part of the image's upload, to which the store gave {@code etag}
     * (quotes removed; "" where it gave none) ({@link StoreImageSink}).
     */
    record Part(String etag) implements Copy {}

    /**
     * Written nowhere: the run's image was complete already (a task of a job run again after
     * its image was made), and holds another copy of the shard.
     */
    record ImageComplete() implements Copy {}
  }

  /**
   * Makes the image from the shards written: {@code shards} holds every copy the job's results
   * name, one or more of each shard, and the sink keeps one copy of each, the one its output
   * holds. {@code catalog} builds the catalog from the copies kept, in shard order, each with
   * where it lies in the image; {@code codec} compresses it in blocks of {@code blockSize}, and
   * the {@link #key} (if any) seals it. Returns the image's length.
   */
  long finish(
      List<WrittenShard> shards, Function<List<Kept>, Catalog> catalog, Codec codec,
      int blockSize) throws IOException;

  /**
   * One copy of a shard as written: its id, where it is, its lengths and block lengths, and in
   * an encrypted image its key, wrapped ({@link ShardInfo#sealedKey}).
   */
  record WrittenShard(
      int shard, Copy copy, long storedLength, long rawLength, int[] blocks, byte[] sealedKey) {
    public WrittenShard(int shard, Copy copy, long storedLength, long rawLength, int[] blocks) {
      this(shard, copy, storedLength, rawLength, blocks, null);
    }

    /** What the catalog's shard table records of this copy, were it at {@code offset}. */
    public ShardInfo at(long offset) {
      return new ShardInfo(offset, storedLength, rawLength, blocks, sealedKey);
    }
  }

  /** The copy of a shard that the image holds, and where it lies in the image. */
  record Kept(WrittenShard copy, ShardInfo info) {}

  /** The last copy written of each shard, in shard order: any whole copy will do. */
  static List<WrittenShard> lastOfEach(List<WrittenShard> shards) {
    java.util.TreeMap<Integer, WrittenShard> last = new java.util.TreeMap<>();
    for (WrittenShard s : shards) {
      last.put(s.shard(), s);
    }
    return new java.util.ArrayList<>(last.values());
  }

  /**
   * Fails at once if this run's image can no longer be made: a write failed for good (the
   * store cannot be reached, or refused it), or the run was discarded. Workers call it before
   * they compress a shard, so that a dead store ends the run within a shard's time instead of
   * after every remaining shard has been compressed for nothing.
   */
  default void checkWritable() {}

  /**
   * The run failed or was interrupted, and workers may still be running (the DirectRunner lets
   * running bundles finish): removes its unfinished output for good, so that none of them can
   * write it again. Returns what could not be removed (say, an upload in a store that stopped
   * answering), each as a phrase naming it ("the multipart upload of s3://B/K"); empty if
   * nothing was left.
   */
  List<String> discard();
}

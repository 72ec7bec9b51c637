package io.beamsave.transforms.run;

import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Metrics;

/**
 * Names of the metrics the transforms publish and the command line reads for progress and
 * reports. A stage's wall time is the span from the earliest start to the latest end any worker
 * recorded: two distributions per stage whose min and max the runner aggregates.
 */
public final class StageMetrics implements java.io.Serializable {
  public static final String NAMESPACE = "beamsave";
  public static final String STAGE_NAMESPACE = "beamsave.stage";

  /** Raw bytes the plan puts into shards (the total for progress). */
  public static final String BYTES_PLANNED = "bytesPlanned";
  /** Raw bytes of files an incremental save left in its base image, unread. */
  public static final String BYTES_REFERENCED = "bytesReferenced";
  /** Raw bytes read and compressed into shards. */
  public static final String BYTES_READ = "bytesRead";
  /** Bytes of blocks appended to images (headers included). */
  public static final String BYTES_STAGED = "bytesStaged";
  public static final String SHARDS_WRITTEN = "shardsWritten";
  public static final String BLOCKS_STORED_RAW = "blocksStoredRaw";
  /**
   * Raw bytes of blocks the codec was tried on and could not shrink, stored raw: the price of
   * compressing paid for nothing. With codec {@code none} nothing is tried, so nothing counts.
   */
  public static final String BYTES_STORED_RAW = "bytesStoredRaw";
  public static final String FILES_LISTED = "filesListed";
  public static final String SPECIAL_FILES_SKIPPED = "specialFilesSkipped";
  public static final String FILES_CHANGED = "filesChanged";
  /** Raw bytes decoded and checked by verify or restore. */
  public static final String BYTES_CHECKED = "bytesChecked";
  /** Files a restore's workers made whose mtime the target's filesystem did not keep exactly. */
  public static final String MTIMES_CLAMPED = "mtimesClamped";
  /** Pieces of files {@code restore --skip-damaged} found damaged and left out. */
  public static final String PIECES_DAMAGED = "piecesDamaged";
  /** Raw bytes a consolidate has put into its image's shards, copied or rewritten. */
  public static final String BYTES_CONSOLIDATED = "bytesConsolidated";
  /** Stored bytes of a chain's images that a consolidate's workers read (not copied in store). */
  public static final String BYTES_FETCHED = "bytesFetched";
  /** Of {@link #BYTES_FETCHED}, those read to rewrite pieces of partly referenced shards. */
  public static final String BYTES_FETCHED_TO_REWRITE = "bytesFetchedToRewrite";
  /** Bytes of finished images sent to object storage. */
  public static final String BYTES_UPLOADED = "bytesUploaded";

  private final Distribution start;
  private final Distribution end;

  private StageMetrics(String stage) {
    this.start = Metrics.distribution(STAGE_NAMESPACE, stage + ".start");
    this.end = Metrics.distribution(STAGE_NAMESPACE, stage + ".end");
  }

  public static StageMetrics of(String stage) {
    return new StageMetrics(stage);
  }

  /** The counter of entries the operator's exclude pattern number {@code i} left out. */
  public static String excludedBy(int i) {
    return "excludedByPattern" + i;
  }

  public static Counter counter(String name) {
    return Metrics.counter(NAMESPACE, name);
  }

  public void started() {
    start.update(System.currentTimeMillis());
  }

  public void finished() {
    end.update(System.currentTimeMillis());
  }
}

package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.run.RunState;
import io.beamsave.transforms.store.Store;

/**
 * A save run's working files — each library's listing, which waits for assembly, and the
 * summary for the report — by name in the run's staging {@link Store}: a directory every worker
 * reaches, or an {@code s3://} prefix when the workers share no disk. Each is written whole, so
 * a reader never sees half of one. The shards themselves go to the image's sink, not here.
 */
public final class Staging {
  private Staging() {}

  /** The staged name of the pieces of shard {@code shard} of {@code library}, if many. */
  public static String piecesName(String library, int shard) {
    return library + "/pieces-" + shard;
  }

  /**
   * A new staged name for the digests of shard {@code shard} of {@code library}, unique to the
   * attempt that read it.
   */
  public static String digestsName(String library, int shard) {
    return library + "/digests-" + shard + "-" + java.util.UUID.randomUUID();
  }

  /** The stem of the staged entries of {@code library} as its walk found them. */
  public static String walkName(String library) {
    return library + "/walk";
  }

  /** The stem of the staged entries of {@code library} as planned against a base. */
  public static String planName(String library) {
    return library + "/plan";
  }

  /** The staged name of the planned listing of {@code library}, which waits for assembly. */
  public static String listingName(String library) {
    return library + "/listing";
  }

  /** The staged name of the {@link ImageSummary} {@link AssembleImage} leaves for the report. */
  public static String summaryName(String library) {
    return library + ".summary";
  }

  /**
   * The save's state in this JVM, by its staging (named by the run's id): one monitor, so that
   * a write and the run's abandonment never interleave; whether it was stopped, after which
   * nothing more is written there; what the launcher hands its workers here (the listings of a
   * walk begun ahead, a PostgreSQL backup's late files).
   */
  static RunState state(SaveSpec spec) {
    return RunState.of("staging " + spec.staging());
  }

  /**
   * Writes {@code data[0, len)} as {@code name}, a working file of {@code library}: sealed
   * under its image's key when the image is encrypted, since staging may lie in the image's
   * bucket (workers on several machines) or beside the image, and a listing names every file.
   */
  public static void write(SaveSpec spec, String library, String name, byte[] data, int len) {
    ImageKey key = spec.library(library).sink().key();
    if (key != null) {
      data = key.wrap(java.util.Arrays.copyOf(data, len), context(name));
      len = data.length;
    }
    RunState run = state(spec);
    synchronized (run.monitor("staging")) {
      if (run.stopped() != null) {
        throw new BeamsaveException("the save was stopped");
      }
      spec.stagingStore().put(name, data, len, "application/octet-stream");
    }
  }

  /** What {@link #write} wrote as {@code name} for {@code library}. */
  public static byte[] read(SaveSpec spec, String library, String name) {
    byte[] data = spec.stagingStore().get(name);
    ImageKey key = spec.library(library).sink().key();
    if (key == null) {
      return data;
    }
    byte[] plain = key.unwrap(data, context(name));
    if (plain == null) {
      throw new BeamsaveException(spec.stagingStore().where(name) + ": this run's working file"
          + " does not authenticate (changed while the save ran)");
    }
    return plain;
  }

  private static byte[] context(String name) {
    return ("staging " + name).getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** Removes the run's staging for good: an interrupted run's workers write no more there. */
  public static void abandon(SaveSpec spec) {
    RunState run = state(spec);
    synchronized (run.monitor("staging")) {
      run.stop("the save was stopped", true, 0);
    }
    remove(spec, "");
  }

  /** Removes everything under {@code prefix} (a library's: {@code "NAME/"}). */
  public static void remove(SaveSpec spec, String prefix) {
    Store store = spec.stagingStore();
    for (Store.Item item : store.list(prefix)) {
      store.delete(item.key());
    }
  }
}

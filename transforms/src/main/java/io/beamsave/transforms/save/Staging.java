package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.store.Store;

/**
 * A save run's working files — each library's listing, which waits for assembly, and the
 * summary for the report — by name in the run's staging {@link Store}: a directory every worker
 * reaches, or an {@code s3://} prefix when the workers share no disk. Each is written whole, so
 * a reader never sees half of one. The shards themselves go to the image's sink, not here.
 */
public final class Staging {
  private Staging() {}

  /** Staging of runs that were stopped, in this JVM: nothing more is written there. */
  private static final java.util.Set<String> ABANDONED =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** One monitor per staging: a write and the run's abandonment never interleave. */
  private static final java.util.Map<String, Object> WRITING =
      new java.util.concurrent.ConcurrentHashMap<>();

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
    synchronized (WRITING.computeIfAbsent(spec.staging(), s -> new Object())) {
      if (ABANDONED.contains(spec.staging())) {
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
    synchronized (WRITING.computeIfAbsent(spec.staging(), s -> new Object())) {
      ABANDONED.add(spec.staging());
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

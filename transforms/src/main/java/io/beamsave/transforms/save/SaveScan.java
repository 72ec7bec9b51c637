package io.beamsave.transforms.save;

import io.beamsave.transforms.image.CatalogCursor;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.shard.IncrementalPlan;
import io.beamsave.transforms.walk.LibraryWalker;
import java.io.IOException;
import java.util.concurrent.ForkJoinPool;

/**
 * What a save of one library would take, found by walking it as the save would (its excludes,
 * its {@code --files-from}) without reading a byte of a file or writing anything: {@code save
 * --dry-run}. Against a base image's catalog (walked alongside, in path order) it counts the
 * files an incremental save would find unchanged.
 */
public final class SaveScan {
  private SaveScan() {}

  /** Entries, files and their bytes; of those, what the base holds unchanged. */
  public record Found(long entries, long files, long rawBytes, long unchangedFiles,
      long unchangedBytes) {}

  /** Walks {@code lib} of {@code spec}; {@code base} the base's catalog, or null. */
  public static Found of(SaveSpec spec, SaveSpec.Library lib, CatalogCursor base) {
    ForkJoinPool pool = LibraryWalker.newPool();
    long[] n = new long[5];
    try {
      Entry[] old = {base == null ? null : base.next()};
      LibraryWalker.walk(pool, lib.readPath(), lib.rootPath(), LibraryWalker.TopNames.ALL,
          spec.excludes(), spec.filesFrom(lib.name()), spec.skipUnreadable(), e -> {
            n[0]++;
            if (!e.isFile()) {
              return;
            }
            n[1]++;
            n[2] += e.size();
            while (old[0] != null && PathOrder.compare(old[0].path(), e.path()) < 0) {
              old[0] = base.next();
            }
            if (old[0] != null && old[0].path().equals(e.path()) && old[0].isFile()
                && IncrementalPlan.unchanged(e, old[0])) {
              n[3]++;
              n[4] += e.size();
            }
          });
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } finally {
      pool.shutdown();
    }
    return new Found(n[0], n[1], n[2], n[3], n[4]);
  }
}

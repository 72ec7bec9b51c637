package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.shard.ShardPlanner;
import io.beamsave.transforms.walk.WalkedEntry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Files a library's image holds that exist only once every other file of it has been read:
 * a PostgreSQL backup's {@code backup_label} and the WAL written while the save read the data
 * files ({@code pg_backup_stop} returns the one and ends the other). The save registers a
 * {@link Source} for the library in its own JVM; the worker that assembles the image, which runs
 * only after every planned shard is written, asks it for the files, compresses them into shards
 * after the planned ones and merges their entries into the catalog in path order.
 *
 * <p>The source holds state no worker elsewhere can reach (a database session keeps the backup
 * open), so a library with late files ({@link SaveSpec.Library#lateFrom}) is assembled where the
 * save runs, or fails in one line: never into an image without them.
 */
public final class LateFiles {
  private LateFiles() {}

  /** Hands over a library's late files; called once per assembly of its image. */
  public interface Source {
    Handed collect() throws IOException;
  }

  /**
   * The files, from one or more directories, and {@code notes} for the image beside the
   * library's own.
   */
  public record Handed(List<From> from, Map<String, String> notes) {}

  /**
   * {@code dir} holds each of {@code paths}, regular files, by the relative path the image gives
   * them (their directories are in the listing).
   */
  public record From(Path dir, List<PathBytes> paths) {}

  /** The late files as the image holds them: entries placed with their digests, and shards. */
  record Compressed(List<Entry> entries, List<ShardResult> shards, Map<String, String> notes,
      long rawBytes) {
    static final Compressed NONE = new Compressed(List.of(), List.of(), Map.of(), 0);
  }

  /** What a library's source is shared under in its save's state. */
  private record SourceOf(String library) {}

  /**
   * Makes {@code source} the one for {@code library} of {@code spec} until closed: in the save's
   * state in this JVM, where the worker that assembles the image finds it.
   */
  public static AutoCloseable register(SaveSpec spec, String library, Source source) {
    return Staging.state(spec).share(new SourceOf(library), source);
  }

  /**
   * Collects library {@code name}'s late files, if it has any, and writes them to its sink as
   * shards from {@code firstShard} on, {@code shardSize} raw bytes at most each.
   */
  static Compressed compress(SaveSpec spec, String name, int firstShard, long shardSize,
      String jobName) throws IOException {
    SaveSpec.Library lib = spec.library(name);
    if (lib.lateFrom() == null) {
      return Compressed.NONE;
    }
    Source source = Staging.state(spec).sharedIfAny(new SourceOf(name));
    if (source == null) {
      throw new BeamsaveException(name + ": " + lib.lateFrom() + " hands its files over in the"
          + " JVM that runs the save, and this image is assembled elsewhere: run the save with"
          + " its workers in that JVM (the DirectRunner, or Flink's embedded cluster)");
    }
    Handed handed = source.collect();
    TreeMap<PathBytes, PathBytes> all = new TreeMap<>(PathOrder.PATHS);
    List<Entry> placed = new ArrayList<>();
    // Each shard with the directory its pieces are read from, in shard order.
    TreeMap<Integer, Map.Entry<Path, List<ShardTask.FileRange>>> tasks = new TreeMap<>();
    long raw = 0;
    int next = firstShard;
    for (From from : handed.from()) {
      List<PathBytes> sorted = new ArrayList<>(from.paths());
      sorted.sort(PathOrder.PATHS);
      for (PathBytes p : sorted) {
        if (p.length() == 0 || all.put(p, p) != null) {
          throw new IllegalStateException(name + ": late file '" + p + "' is empty or twice");
        }
      }
      Dir root = Dir.open(from.dir());
      try (Beneath tree = new Beneath(root)) {
        ShardPlanner.Layout layout = new ShardPlanner.Layout(shardSize);
        for (PathBytes p : sorted) {
          FileStat s = tree.dir(p.bytes(), Math.max(p.lastSlash(), 0)).stat(p.fileName());
          Entry e = s.isRegularFile() ? WalkedEntry.of(s, p, null) : null;
          if (e == null) {
            throw new BeamsaveException(name + ": " + lib.lateFrom() + " handed over "
                + from.dir().resolve(p.toString()) + ", which is not a regular file");
          }
          List<Extent> extents = new ArrayList<>();
          long offset = 0;
          for (Extent x : layout.place(e).extents()) {
            int shard = Math.addExact(next, x.shard());
            extents.add(new Extent(shard, x.offset(), x.length(), null));
            tasks.computeIfAbsent(shard, k -> Map.entry(from.dir(), new ArrayList<>()))
                .getValue().add(ShardTask.FileRange.of(e, offset, x.length()));
            offset += x.length();
          }
          raw += e.size();
          placed.add(e.withExtents(extents));
        }
        next += layout.shardCount();
      } finally {
        root.close();
      }
    }
    Map<Integer, ShardResult> results = compressAll(spec, name, tasks, jobName);
    List<ShardResult> shards = new ArrayList<>(results.values());
    Map<Integer, byte[]> digests = new TreeMap<>();
    for (ShardResult r : shards) {
      if (!r.changedPaths().isEmpty() || !r.unreadable().isEmpty()) {
        PathBytes bad = !r.changedPaths().isEmpty() ? r.changedPaths().get(0)
            : r.unreadable().get(0).path();
        throw new BeamsaveException(name + ": " + bad + ", handed over by " + lib.lateFrom()
            + ", " + (r.changedPaths().isEmpty() ? "could not be read"
            : "changed while it was being saved") + "; nothing was made: save again");
      }
      digests.put(r.shard(), r.digests(spec, name));
    }
    int[] cursor = new int[next];
    List<Entry> entries = new ArrayList<>(placed.size());
    for (Entry e : placed) {
      List<Extent> withDigests = new ArrayList<>(e.extents().size());
      for (Extent x : e.extents()) {
        int at = cursor[x.shard()]++ * ImageFormat.DIGEST_SIZE;
        withDigests.add(x.withDigest(java.util.Arrays.copyOfRange(digests.get(x.shard()), at,
            at + ImageFormat.DIGEST_SIZE)));
      }
      entries.add(e.withExtents(withDigests));
    }
    entries.sort(PathOrder.ENTRIES);
    return new Compressed(entries, shards, handed.notes(), raw);
  }

  /**
   * Compresses {@code tasks} (each shard's directory and pieces) on as many threads as there
   * are processors, each with a compressor of its own: the late files may be many WAL
   * segments, and the pipeline's workers are idle by now. Results by shard.
   */
  private static Map<Integer, ShardResult> compressAll(SaveSpec spec, String name,
      TreeMap<Integer, Map.Entry<Path, List<ShardTask.FileRange>>> tasks, String jobName)
      throws IOException {
    int threads = Math.max(1, Math.min(tasks.size(), Runtime.getRuntime().availableProcessors()));
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(threads, r -> {
          Thread t = new Thread(r, "late-files");
          t.setDaemon(true);
          return t;
        });
    List<CompressShards.CompressShardFn> made =
        java.util.Collections.synchronizedList(new ArrayList<>());
    ThreadLocal<CompressShards.CompressShardFn> fns = ThreadLocal.withInitial(() -> {
      CompressShards.CompressShardFn fn = new CompressShards.CompressShardFn(spec, false);
      fn.setup();
      made.add(fn);
      return fn;
    });
    try {
      Map<Integer, java.util.concurrent.Future<ShardResult>> running = new TreeMap<>();
      for (var t : tasks.entrySet()) {
        running.put(t.getKey(), pool.submit(() -> {
          Dir root = Dir.open(t.getValue().getKey());
          try (Beneath tree = new Beneath(root)) {
            return fns.get().compress(new ShardTask(name, t.getKey(), t.getValue().getValue()),
                tree, jobName);
          } finally {
            root.close();
          }
        }));
      }
      Map<Integer, ShardResult> results = new TreeMap<>();
      for (var r : running.entrySet()) {
        try {
          results.put(r.getKey(), r.getValue().get());
        } catch (java.util.concurrent.ExecutionException e) {
          if (e.getCause() instanceof IOException io) {
            throw io;
          }
          if (e.getCause() instanceof RuntimeException re) {
            throw re;
          }
          throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("interrupted while adding the late files");
        }
      }
      return results;
    } finally {
      pool.shutdownNow();
      try {
        pool.awaitTermination(1, java.util.concurrent.TimeUnit.MINUTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      made.forEach(CompressShards.CompressShardFn::teardown);
    }
  }
}

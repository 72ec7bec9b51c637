package io.beamsave.pipelines.restore;

import io.beamsave.pipelines.runner.Job;
import io.beamsave.pipelines.transfer.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.beam.Elements;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ReadShards;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.shard.ShardPlanner;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.values.PCollection;

/**
 * Restores an image, or the entries matching {@code --include} globs, into a directory. Reads
 * the catalog, prepares the target tree, reads only the shards holding the chosen files in
 * parallel (every block checksum and file digest checked), then sets symlinks and metadata.
 */
public final class RestorePipeline {
  private RestorePipeline() {}

  static final String READ_STEP = "ReadShards";

  /** Bytes checked against {@code bytes}; on Flink, shards read against {@code shards}. */
  public static Job.Progress progress(String verb, long bytes, int shards) {
    return new Job.Progress(
        verb, StageMetrics.BYTES_CHECKED, null, bytes, READ_STEP, null, shards, null);
  }

  /** What a restore did; {@code warnings} say what did not come back exactly, and why. */
  public record Outcome(
      Path target, long files, long entries, long bytes, double seconds, List<String> warnings) {}

  /** Adds the reading and writing of {@code tasks} to {@code p}. */
  public static PCollection<Long> build(Pipeline p, List<ReadTask> tasks, ReadShards read) {
    return p.apply("Shards", Elements.of(tasks, ReadTask.CODER))
        .apply("Reshuffle", Reshuffle.viaRandomKey())
        .apply(READ_STEP, read);
  }

  public static Outcome run(
      ImageRef image,
      Path target,
      List<String> includes,
      boolean overwrite,
      PipelineOptions options,
      PrintWriter progress) {
    long start = System.nanoTime();
    Catalog catalog = image.readCatalog();
    List<Entry> chosen = new ArrayList<>(Selection.select(catalog.entries(), includes));
    // A file the save could not read holds zeros or nothing: making it would pass that off as
    // the file, so it stays out, and the operator is told.
    List<Entry> unread = chosen.stream().filter(e -> e.isFile() && e.unreadable()).toList();
    chosen.removeAll(unread);
    long unlisted = chosen.stream().filter(e -> !e.isFile() && e.unreadable()).count();
    if (chosen.isEmpty() && includes != null && !includes.isEmpty()) {
      throw new BeamsaveException(
          "no entry of " + image.display() + " matches --include " + includes);
    }
    chosen.sort(ShardPlanner.BY_PATH);
    List<Entry> files = chosen.stream().filter(Entry::isFile).toList();
    long bytes = files.stream().mapToLong(Entry::size).sum();
    // Before the target is touched: a missing or replaced base fails the restore up front.
    ImageChain chain = ImageChain.resolve(image.member(), files, image.s3(), image.keys(),
        image.baseLocations());
    List<String> warnings = new ArrayList<>();
    try (TargetTree tree = TargetTree.prepare(target, image.display(), overwrite, progress)) {
      boolean finished = false;
      boolean workersRan = false;
      try {
        long[] ids = tree.create(chosen);
        List<ReadTask> tasks = ReadTask.forEntries(chain, files, ids);
        long clampedByWorkers = 0;
        if (!tasks.isEmpty()) {
          Pipeline p = Pipeline.create(options);
          build(p, tasks,
              ReadShards.restoreTo(tree.target(), image.s3()).withKeys(chain.keys())
                  .withTags(chain.tags()));
          workersRan = true;
          clampedByWorkers = Job.run(p, progress("restored", bytes, tasks.size()), progress)
              .counter(StageMetrics.MTIMES_CLAMPED);
        }
        // The library root's metadata goes to the target in a whole restore; one of chosen
        // entries leaves the target as it was.
        boolean whole = includes == null || includes.isEmpty();
        tree.finish(chosen, ids, whole ? catalog.root() : null);
        finished = true;
        String clamped = tree.clampedTimes(clampedByWorkers, chosen);
        if (clamped != null) {
          warnings.add(clamped);
        }
        if (!unread.isEmpty()) {
          warnings.add(unread.size() + " file" + (unread.size() == 1 ? "" : "s") + " could not"
              + " be read when saved (marked f? in 'list') and " + (unread.size() == 1 ? "was"
              : "were") + " not restored, e.g. " + unread.get(0).path());
        }
        if (unlisted > 0) {
          warnings.add(unlisted + " director" + (unlisted == 1 ? "y" : "ies") + " could not be"
              + " wholly listed when saved (marked d? in 'list'): restored with what was saved");
        }
        long changed = files.stream().filter(Entry::changed).count();
        if (changed > 0) {
          warnings.add(changed + " restored file" + (changed == 1 ? "" : "s") + " changed while"
              + " being saved (marked f! in 'list'): what was read then came back, which may"
              + " not be a whole version of the file");
        }
      } finally {
        if (!finished) {
          tree.abandon(workersRan);
        }
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot close restore target", target, e);
    }
    return new Outcome(
        target, files.size(), chosen.size(), bytes, (System.nanoTime() - start) / 1e9, warnings);
  }
}

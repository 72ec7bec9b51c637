package io.beamsave.pipelines.verify;

import io.beamsave.pipelines.restore.RestorePipeline;
import io.beamsave.pipelines.transfer.ImageRef;
import io.beamsave.pipelines.runner.Job;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.io.ReadShards;
import io.beamsave.transforms.io.ReadTask;
import io.beamsave.transforms.io.StageMetrics;
import java.io.PrintWriter;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Verifies an image: the header, trailer and catalog structure, then every shard in parallel,
 * every block checksum and every file digest. Writes nothing.
 */
public final class VerifyPipeline {
  private VerifyPipeline() {}

  public record Outcome(Catalog catalog, long bytesChecked, long changedFiles, double seconds) {}

  public static Outcome run(ImageRef image, PipelineOptions options, PrintWriter progress) {
    long start = System.nanoTime();
    Catalog catalog = image.readCatalog();
    List<Entry> files = catalog.entries().stream().filter(Entry::isFile).toList();
    List<ReadTask> tasks = ReadTask.forEntries(catalog, files);
    long expected = catalog.rawBytes();
    long checked = 0;
    if (!tasks.isEmpty()) {
      Pipeline p = Pipeline.create(options);
      RestorePipeline.build(
          p,
          tasks,
          ReadShards.verify(image.location(), catalog.blockSize(), image.s3()));
      checked =
          Job.run(p, RestorePipeline.progress("verified", expected, tasks.size()), progress)
              .counter(StageMetrics.BYTES_CHECKED);
    }
    if (checked != expected) {
      throw new BeamsaveException(
          image.display() + ": checked " + checked + " bytes, the catalog holds " + expected);
    }
    long changed = catalog.entries().stream().filter(Entry::changed).count();
    return new Outcome(catalog, checked, changed, (System.nanoTime() - start) / 1e9);
  }
}

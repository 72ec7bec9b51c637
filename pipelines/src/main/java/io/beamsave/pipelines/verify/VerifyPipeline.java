package io.beamsave.pipelines.verify;

import io.beamsave.pipelines.restore.ReadRun;
import io.beamsave.pipelines.restore.RestorePipeline;
import io.beamsave.pipelines.transfer.ImageRef;
import io.beamsave.pipelines.transfer.TransferProgress;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.StructureCheck;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.read.ReadShards;
import io.beamsave.transforms.read.ReadTask;
import java.io.PrintWriter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Verifies an image: the header, trailer and catalog structure, then every shard in parallel,
 * every block checksum and every file digest, reading an incremental image's unchanged files
 * from its bases. With {@code chain}, also every image it depends on, each as a whole of its
 * own. Writes nothing.
 */
public final class VerifyPipeline {
  private VerifyPipeline() {}

  /** {@code images}: the images checked, the given one first. */
  public record Outcome(
      Catalog catalog, long bytesChecked, long changedFiles, double seconds,
      List<ImageChain.Member> images) {}

  public static Outcome run(ImageRef image, Supplier<PipelineOptions> options,
      PrintWriter progress) {
    return run(image, false, ReadRun.PipelineUse.AUTO, options, progress);
  }

  public static Outcome run(ImageRef image, boolean chain, ReadRun.PipelineUse use,
      Supplier<PipelineOptions> options, PrintWriter progress) {
    long start = System.nanoTime();
    Catalog catalog = image.readCatalog();
    List<Entry> files = catalog.entries().stream().filter(Entry::isFile).toList();
    ImageChain top = ImageChain.resolve(image.member(catalog), files, image.s3(), image.keys(),
        image.baseLocations());
    List<ReadTask> tasks = new ArrayList<>(ReadTask.forEntries(top, files));
    long expected = catalog.rawBytes();
    List<ImageChain.Member> checked = new ArrayList<>(List.of(top.top()));
    if (chain) {
      for (ImageChain.Member base : dependencies(image, catalog)) {
        List<Entry> own = base.catalog().entries().stream()
            .filter(Entry::isFile)
            .map(e -> e.withExtents(e.extents().stream().filter(x -> !x.isReference()).toList()))
            .filter(e -> !e.extents().isEmpty())
            .toList();
        tasks.addAll(ReadTask.forEntries(ImageChain.of(base), own));
        expected += base.catalog().ownRawBytes();
        checked.add(base);
      }
    }
    java.util.Map<String, io.beamsave.transforms.crypt.ImageKey> keys =
        new java.util.HashMap<>(top.keys());
    keys.putAll(ImageChain.keysOf(checked));
    java.util.Map<String, String> tags = new java.util.HashMap<>(top.tags());
    tags.putAll(ImageChain.tagsOf(checked));
    long bytes = ReadRun.read(tasks, ReadShards.verify(image.s3()).withKeys(keys).withTags(tags),
        expected, use, options, RestorePipeline.progress("verified", expected, tasks.size()),
        progress).bytesChecked();
    if (bytes != expected) {
      throw new BeamsaveException(
          image.display() + ": checked " + bytes + " bytes, the catalogs hold " + expected);
    }
    long changed = catalog.entries().stream().filter(Entry::changed).count();
    return new Outcome(catalog, bytes, changed, (System.nanoTime() - start) / 1e9, checked);
  }

  /**
   * Checks what can be checked of an encrypted image without its key: header, trailer and every
   * frame's length and checksum ({@link StructureCheck}), reading it once, front to back.
   */
  public static StructureCheck.Result checkStructure(ImageRef image, PrintWriter progress) {
    try (ImageSource src = ImageSources.open(image.location(), image.s3());
        TransferProgress shown = new TransferProgress("checked", src.size(), progress)) {
      return StructureCheck.check(src, shown);
    } catch (java.io.IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }

  /**
   * Every image the given one depends on, each once: its bases, their bases, and so on, each
   * opened and checked to be the image recorded.
   */
  static List<ImageChain.Member> dependencies(ImageRef image, Catalog catalog) {
    List<ImageChain.Member> out = new ArrayList<>();
    Set<ImageId> seen = new HashSet<>(List.of(catalog.id()));
    Deque<ImageChain.Member> queue = new ArrayDeque<>();
    queue.add(image.member());
    while (!queue.isEmpty()) {
      ImageChain.Member m = queue.poll();
      ImageChain c = ImageChain.resolveAll(m.location(), m.catalog(), image.s3(), image.keys(),
          image.baseLocations());
      for (ImageChain.Member base : c.opened()) {
        if (seen.add(base.catalog().id())) {
          out.add(base);
          queue.add(base);
        }
      }
    }
    return out;
  }
}

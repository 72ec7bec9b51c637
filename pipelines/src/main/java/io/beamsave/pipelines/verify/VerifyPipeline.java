package io.beamsave.pipelines.verify;

import io.beamsave.pipelines.restore.LinksOut;
import io.beamsave.pipelines.restore.ReadRun;
import io.beamsave.pipelines.restore.RestorePipeline;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.pipelines.transfer.TransferProgress;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.StructureCheck;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
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

  /**
   * {@code catalog}: the image's (its entries only when it was read whole); {@code images}: the
   * images checked, the given one first.
   */
  public record Outcome(
      Catalog catalog, long files, long unreadable, long bytesChecked, long changedFiles,
      double seconds, List<ImageChain.Member> images, ShardSubset subset) {}

  /** File entries a verify in this JVM checks at a time, or about so many of their bytes. */
  static final int BATCH_FILES = 50_000;
  static final long BATCH_BYTES = 256L << 20;

  public static Outcome run(ImageRef image, Supplier<PipelineOptions> options,
      PrintWriter progress) {
    return run(image, false, ReadRun.PipelineUse.AUTO, options, progress);
  }

  public static Outcome run(ImageRef image, boolean chain, ReadRun.PipelineUse use,
      Supplier<PipelineOptions> options, PrintWriter progress) {
    return run(image, chain, null, use, options, progress);
  }

  /**
   * Like {@link #run(ImageRef, boolean, ReadRun.PipelineUse, Supplier, PrintWriter)}, reading
   * only the shards {@code subset} chooses (all of them if null).
   */
  public static Outcome run(ImageRef image, boolean chain, ShardSubset subset,
      ReadRun.PipelineUse use, Supplier<PipelineOptions> options, PrintWriter progress) {
    long start = System.nanoTime();
    if (!chain) {
      CatalogHead head = image.head();
      if (use.here(head.totals().rawBytes()) || subset != null) {
        return verifyHere(image, head, subset, progress, start);
      }
    }
    Catalog catalog = image.readCatalog();
    LinksOut links = new LinksOut(p -> {
      int at = java.util.Collections.binarySearch(catalog.entries(),
          new Entry(p, EntryType.FILE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
              null, List.of()), io.beamsave.transforms.image.catalog.PathOrder.ENTRIES);
      return at < 0 ? null : catalog.entries().get(at);
    }, image.display() + ": entry");
    catalog.entries().forEach(links::resolve);
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
    if (subset != null) {
      java.util.Map<String, ImageChain.Member> members = new java.util.LinkedHashMap<>();
      for (ImageChain.Member m : top.opened()) {
        members.putIfAbsent(m.location(), m);
      }
      for (ImageChain.Member m : checked) {
        members.putIfAbsent(m.location(), m);
      }
      subset.choose(List.copyOf(members.values()));
      tasks = new ArrayList<>(subset.keep(tasks));
      expected = ShardSubset.pieceBytes(tasks);
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
    long unreadable = catalog.entries().stream().filter(Entry::unreadable).count();
    return new Outcome(catalog, catalog.fileCount(), unreadable, bytes, changed,
        (System.nanoTime() - start) / 1e9, checked, subset);
  }

  /**
   * Verifies {@code image} in this JVM as its catalog's pages are read, a batch of files at a
   * time, so that the memory it takes does not grow with the files the image holds.
   */
  private static Outcome verifyHere(ImageRef image, CatalogHead head, ShardSubset subset,
      PrintWriter progress, long start) {
    ImageChain chain = ImageChain.resolveHeads(image.member(head.catalog()), image.s3(),
        image.keys(), image.baseLocations());
    if (subset != null) {
      subset.choose(chain.opened());
    }
    ReadShards read = ReadShards.verify(image.s3()).withKeys(chain.keys())
        .withTags(chain.tags());
    long expected = head.totals().rawBytes();
    var batches = new Object() {
      final List<Entry> files = new ArrayList<>();
      long batchBytes;
      long count;
      long unreadable;
      long changed;
      long checked;
      long chosenBytes;

      void add(Entry e, ReadRun.Here here) {
        unreadable += e.unreadable() ? 1 : 0;
        if (!e.isFile()) {
          return;
        }
        count++;
        changed += e.changed() ? 1 : 0;
        files.add(e);
        batchBytes += e.size();
        if (files.size() >= BATCH_FILES || batchBytes >= BATCH_BYTES) {
          flush(here);
        }
      }

      void flush(ReadRun.Here here) {
        chain.check(files);
        List<ReadTask> tasks = ReadTask.forEntries(chain, files);
        if (subset != null) {
          tasks = subset.keep(tasks);
          chosenBytes += ShardSubset.pieceBytes(tasks);
        }
        checked += here.read(tasks, read)[0];
        files.clear();
        batchBytes = 0;
      }
    };
    try (ReadRun.Here here = new ReadRun.Here(RestorePipeline.progress("verified", expected,
        head.catalog().shards().size()), progress)) {
      LinksOut links = new LinksOut(p -> {
        List<Entry> found = image.find(List.of(p), head);
        return found.isEmpty() ? null : found.get(0);
      }, image.display() + ": entry");
      image.walk(List.of(PathBytes.of(new byte[0])), e -> batches.add(links.resolve(e), here));
      batches.flush(here);
    }
    long wanted = subset == null ? expected : batches.chosenBytes;
    if (batches.checked != wanted) {
      throw new BeamsaveException(image.display() + ": checked " + batches.checked
          + " bytes, the catalog holds " + wanted);
    }
    return new Outcome(head.catalog(), batches.count, batches.unreadable, batches.checked,
        batches.changed, (System.nanoTime() - start) / 1e9, List.of(chain.top()), subset);
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

package io.beamsave.pipelines.restore;

import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ReadShards;
import io.beamsave.transforms.read.ReadTask;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.LongPredicate;

/**
 * An image, or the entries {@code --include} selects, restored in this JVM as its catalog's
 * pages are read, a batch of entries at a time: each batch's directories and files are created, its pieces read (a thread per core),
 * and its files and links placed before the next is taken, so that a restore of any number of
 * files holds a batch of entries, not the catalog. A directory's metadata is set once the walk
 * has passed all that lies beneath it (path order keeps a subtree together), deepest first; the
 * directories waiting are those on the way down to where the walk is.
 */
final class BatchedRestore {
  /**
   * How much a batch holds: {@code entries} entries, or about {@code bytes} bytes of files (a
   * larger file makes a batch alone), whichever comes first.
   */
  record Limits(int entries, long bytes) {
    static final Limits DEFAULT = new Limits(50_000, 256L << 20);
  }

  private final ImageChain chain;
  private final TargetTree tree;
  private final ReadShards read;
  private final ReadRun.Here here;
  private final Limits limits;
  private final boolean skipDamaged;
  private final List<Entry> batch = new ArrayList<>();
  private long batchBytes;
  /** Directories the walk is within, deepest on top. */
  private final Deque<Entry> open = new ArrayDeque<>();
  /** Directories the walk has passed, deepest first, waiting for their batch to be placed. */
  private final List<Entry> passed = new ArrayList<>();
  private boolean workersRan;
  private long files;
  private long entries;
  private long bytes;
  private long clampedByWorkers;
  private final RestorePipeline.Skipped skipped = new RestorePipeline.Skipped();

  private BatchedRestore(ImageChain chain, TargetTree tree, ReadShards read,
      ReadRun.Here here, Limits limits, boolean skipDamaged) {
    this.limits = limits;
    this.skipDamaged = skipDamaged;
    this.chain = chain;
    this.tree = tree;
    this.read = read;
    this.here = here;
  }

  /** Restores all of {@code image}, whose catalog's head is {@code head}, as asked. */
  static RestorePipeline.Outcome run(ImageRef image, CatalogHead head, RestoreRequest request,
      PrintWriter progress, Restore.Listener listener) {
    return run(image, head, request, progress, listener, Limits.DEFAULT, bytes -> true);
  }

  /**
   * Restores the entries of {@code image} that the request's includes select (all of them
   * without) into its target, in batches of {@code limits}; or, when the files selected hold
   * more bytes than {@code here} takes, touches nothing and returns null: a pipeline's work.
   */
  static RestorePipeline.Outcome run(ImageRef image, CatalogHead head, RestoreRequest request,
      PrintWriter progress, Restore.Listener listener, Limits limits, LongPredicate here) {
    Path target = request.target();
    List<String> includes = request.includes();
    long start = System.nanoTime();
    // Before the target is touched: a missing or replaced base fails the restore up front...
    ImageChain chain = ImageChain.resolveHeads(image.member(head.catalog()), image.s3(),
        image.keys(), image.baseLocations());
    // And a selection whose extents overlap, or reference what a base does not hold: one pass
    // over the pages that can hold it, which also finds how much it is. A selection that fits
    // in a batch is kept from this pass; a larger one is read again as it is restored.
    Selected selected = new Selected(image, head, includes);
    List<Entry> held = new ArrayList<>();
    long[] count = new long[3];
    Withheld first = request.policy().start();
    selected.forEach(first, e -> {
      chain.check(List.of(e));
      count[0]++;
      count[1] += e.isFile() ? e.size() : 0;
      count[2] += e.meta().xattrBytes();
      if (count[0] <= limits.entries() && count[2] <= limits.bytes()) {
        held.add(e);
      }
    });
    boolean whole = includes == null || includes.isEmpty();
    if (!whole && count[0] == 0) {
      throw new BeamsaveException(
          "no entry of " + image.display() + " matches --include " + includes);
    }
    if (!here.test(count[1])) {
      return null;
    }
    boolean kept = count[0] <= limits.entries() && count[2] <= limits.bytes();
    // What the policy withholds is counted on the pass whose entries are restored.
    Withheld withheld = kept ? first : request.policy().start();
    if (!kept) {
      held.clear(); // The first batch's worth: read again with the rest.
    }
    BatchedRestore r;
    List<String> warnings = new ArrayList<>();
    TargetMirror.Removed removed = null;
    Map<PathBytes, String> damaged;
    long damagedFiles;
    try (TargetTree tree = TargetTree.prepare(request, image.display(), progress)) {
      ReadShards read = ReadShards.restoreTo(tree.target(), image.s3())
          .withKeys(chain.keys()).withTags(chain.tags()).withSkipDamaged(request.skipDamaged());
      try (ReadRun.Here reading = new ReadRun.Here(RestorePipeline.progress("restored",
          count[1], head.catalog().shards().size()), progress)) {
        r = new BatchedRestore(chain, tree, read, reading, limits, request.skipDamaged());
        boolean finished = false;
        try {
          if (kept) {
            held.forEach(r::add);
          } else {
            selected.forEach(withheld, r::add);
          }
          // The library root's metadata goes to the target in a whole restore; a selection
          // leaves the target as it was.
          r.finish(whole ? withheld.apply(head.catalog().root()) : null);
          finished = true;
        } finally {
          if (!finished) {
            tree.abandon(r.workersRan);
          }
        }
      }
      damaged = tree.damaged();
      damagedFiles = tree.damagedFiles();
      if (request.delete()) {
        removed = tree.mirror(image, listener::removing);
      }
      String clamped = tree.clampedTimes(r.clampedByWorkers);
      if (clamped != null) {
        warnings.add(clamped);
      }
      r.skipped.warnings(warnings, io.beamsave.pipelines.postgres.PostgresSave
          .savedInBackupMode(head.catalog().notes()));
      withheld.warnings(warnings);
      tree.lostMetadata(warnings);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot close restore target", target, e);
    }
    return new RestorePipeline.Outcome(target, r.files - damagedFiles,
        r.entries - damaged.size(), r.bytes, (System.nanoTime() - start) / 1e9, warnings, removed,
        damaged);
  }

  /**
   * The entries a selection takes, in path order, read from the pages that can hold them: those
   * beneath the directories its patterns name, and the directories above those.
   */
  private static final class Selected {
    private final ImageRef image;
    private final List<String> includes;
    private final java.util.function.Function<PathBytes, Entry> lookup;
    private final List<PathBytes> under;
    /** The directories above those walked, in path order. */
    private final List<Entry> above;

    Selected(ImageRef image, CatalogHead head, List<String> includes) {
      this.image = image;
      this.includes = includes;
      this.lookup = p -> {
        List<Entry> found = image.find(List.of(p), head);
        return found.isEmpty() ? null : found.get(0);
      };
      this.under = Selection.under(includes);
      Set<PathBytes> dirs = new TreeSet<>(PathOrder.PATHS);
      for (PathBytes p : under) {
        for (PathBytes d = p.parent(); d != null && !d.isEmpty(); d = d.parent()) {
          dirs.add(d);
        }
      }
      this.above = dirs.isEmpty() ? List.of() : image.find(List.copyOf(dirs), head);
    }

    /** Each entry selected, as {@code withheld} lets it be restored (none it leaves out). */
    void forEach(Withheld withheld, Consumer<Entry> out) {
      // Each pass meets the links afresh: their stand-ins are the same each time.
      LinksOut links = new LinksOut(includes, lookup);
      Selection.Stream stream = new Selection.Stream(includes, e -> {
        Entry restored = withheld.apply(links.resolve(e));
        if (restored != null) {
          out.accept(restored);
        }
      });
      Iterator<Entry> a = above.iterator();
      Entry[] next = {a.hasNext() ? a.next() : null};
      image.walk(under, e -> {
        while (next[0] != null && PathOrder.compare(next[0].path(), e.path()) < 0) {
          stream.accept(next[0]);
          next[0] = a.hasNext() ? a.next() : null;
        }
        stream.accept(e);
      });
    }
  }

  private void add(Entry e) {
    while (!open.isEmpty() && !PathOrder.within(e.path(), open.peek().path())) {
      passed.add(open.pop());
    }
    if (!skipped.restores(e)) {
      return;
    }
    if (e.type() == EntryType.DIRECTORY) {
      open.push(e);
    }
    batch.add(e);
    // Attributes are held as the batch is: a crafted image of few bytes may claim many of them.
    batchBytes += (e.isFile() ? e.size() : 0) + e.meta().xattrBytes();
    if (batch.size() >= limits.entries() || batchBytes >= limits.bytes()) {
      flush();
    }
  }

  /** Creates, reads and places the batch, then sets the metadata of the directories passed. */
  private void flush() {
    List<Entry> batchFiles = batch.stream().filter(Entry::isFile).toList();
    long[] ids = tree.create(batch);
    List<ReadTask> tasks = ReadTask.forEntries(chain, batchFiles, ids);
    if (!tasks.isEmpty()) {
      workersRan = true;
      long clamped;
      try {
        clamped = here.read(tasks, read)[1];
      } catch (BeamsaveException e) {
        throw RestorePipeline.skipDamagedHint(e);
      }
      if (skipDamaged) {
        tree.collectDamaged();
      }
      if (clamped > 0) {
        tree.findClamped(batch);
        clampedByWorkers += clamped;
      }
    }
    tree.place(batch, ids);
    tree.directories(passed);
    passed.clear();
    files += batchFiles.size();
    entries += batch.size();
    bytes += batchFiles.stream().mapToLong(Entry::size).sum();
    batch.clear();
    batchBytes = 0;
  }

  private void finish(Entry top) {
    flush();
    tree.directories(new ArrayList<>(open));
    tree.done(top);
  }
}

package io.beamsave.pipelines.restore;

import io.beamsave.pipelines.postgres.PostgresSave;
import io.beamsave.pipelines.runner.Job;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.beam.Elements;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ReadShards;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.select.Glob;
import io.beamsave.transforms.shard.ShardPlanner;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
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

  /**
   * What a restore did; {@code warnings} say what did not come back exactly, and why; {@code
   * removed}, with {@code --delete}, what was removed (else null); {@code damaged}, with {@code
   * --skip-damaged}, the files left out because their bytes do not read back as saved, and why
   * (their count is not in {@code files}).
   */
  public record Outcome(Path target, long files, long entries, long bytes, double seconds,
      List<String> warnings, TargetMirror.Removed removed, Map<PathBytes, String> damaged) {}

  /**
   * The paths {@code includes} name when every one is an anchored path without wildcards
   * ({@code d/f}, {@code /etc}): what they select is beneath them and above them only, and a
   * paged catalog reads just those pages. Null when there are none, or any is a pattern.
   */
  public static List<PathBytes> literalPaths(List<String> includes) {
    if (includes == null || includes.isEmpty()) {
      return null;
    }
    List<PathBytes> out = new ArrayList<>();
    for (String i : includes) {
      PathBytes p = Glob.literalPath(i);
      if (p == null) {
        return null;
      }
      out.add(p);
    }
    return out;
  }

  /**
   * What a restore leaves out or restores as it was saved, told in warnings: a file the save
   * could not read holds zeros or nothing, and making it would pass that off as the file.
   */
  static final class Skipped {
    private long unread;
    private PathBytes firstUnread;
    /** The files left out, for their hard links: as many as the save could not read. */
    private final Set<PathBytes> unreadPaths = new java.util.HashSet<>();
    private long unlisted;
    private long changed;

    /** Whether {@code e} is restored; counts it if it is not, or is restored as saved. */
    boolean restores(Entry e) {
      boolean linkToUnread = e.isHardLink() && unreadPaths.contains(e.linkTarget());
      if ((e.isFile() && e.unreadable()) || linkToUnread) {
        if (unread++ == 0) {
          firstUnread = e.path();
        }
        unreadPaths.add(e.path());
        return false;
      }
      unlisted += !e.isFile() && e.unreadable() ? 1 : 0;
      changed += e.isFile() && e.changed() ? 1 : 0;
      return true;
    }

    /**
     * The warnings; {@code mendedByWal}: the image is of a PostgreSQL data directory saved in
     * backup mode, whose changed files the server's recovery mends.
     */
    void warnings(List<String> out, boolean mendedByWal) {
      if (unread > 0) {
        out.add(unread + " file" + (unread == 1 ? "" : "s") + " could not be read when saved"
            + " (marked f? in 'list') and " + (unread == 1 ? "was" : "were") + " not restored,"
            + " e.g. " + firstUnread);
      }
      if (unlisted > 0) {
        out.add(unlisted + " director" + (unlisted == 1 ? "y" : "ies") + " could not be wholly"
            + " listed when saved (marked d? in 'list'): restored with what was saved");
      }
      if (changed > 0 && mendedByWal) {
        // A backup's files change as the server writes them; the WAL in the image mends them.
        out.add(changed + " restored file" + (changed == 1 ? "" : "s") + " changed while"
            + " being saved, as PostgreSQL wrote them (marked f! in 'list'): its recovery from"
            + " the WAL in the image, when it starts, mends them");
      } else if (changed > 0) {
        out.add(changed + " restored file" + (changed == 1 ? "" : "s") + " changed while"
            + " being saved (marked f! in 'list'): what was read then came back, which may not"
            + " be a whole version of the file");
      }
    }
  }

  private static Entry first(List<Entry> found) {
    return found.isEmpty() ? null : found.get(0);
  }

  /**
   * What a restore would do ({@code --dry-run}): the files and bytes and other entries it would
   * write, those it would leave out, and whether the target exists; nothing is written.
   */
  public record Planned(long files, long bytes, long others, long leftOut, boolean targetExists) {}

  /**
   * Plans the restore {@link #run} would make, checking what it checks first (the target, the
   * selection, the bases' presence), and reading only the catalog: nothing is written.
   */
  static Planned dryRun(ImageRef image, RestoreRequest request) {
    Path target = request.target();
    List<String> includes = request.includes();
    boolean overwrite = request.overwrite();
    Withheld withheld = request.policy().start();
    boolean exists = Files.exists(target, java.nio.file.LinkOption.NOFOLLOW_LINKS);
    if (exists && !Files.isDirectory(target)) {
      throw new BeamsaveException("target " + target + " is no directory");
    }
    if (exists && request.delete()) {
      try {
        TargetMirror.refuseRoot(target, target.toRealPath(), request.noPreserveRoot());
      } catch (IOException e) {
        throw BeamsaveException.io("cannot read restore target", target, e);
      }
    }
    if (exists && !overwrite) {
      try (java.util.stream.Stream<Path> in = Files.list(target)) {
        if (in.findAny().isPresent()) {
          throw new BeamsaveException(
              "target " + target + " is not empty; use --overwrite to restore into it");
        }
      } catch (IOException e) {
        throw BeamsaveException.io("cannot read restore target", target, e);
      }
    }
    boolean all = includes == null || includes.isEmpty();
    List<Glob> globs = all ? List.of() : Selection.compile(includes);
    List<PathBytes> literal = literalPaths(includes);
    List<PathBytes> roots = literal != null ? literal : List.of(PathBytes.of(""));
    long[] n = new long[4];
    Set<PathBytes> matchedDirs = new java.util.HashSet<>();
    Set<PathBytes> above = new TreeSet<>(PathOrder.PATHS);
    Skipped skipped = new Skipped();
    CatalogHead head = image.walk(roots, e -> {
      boolean dir = e.type() == EntryType.DIRECTORY;
      if (!all && globs.stream().noneMatch(g -> g.matchesSelfOrParent(e.path(), dir))) {
        return;
      }
      if (withheld.apply(e) == null) {
        return; // Not made: the policy withholds it (a device not granted).
      }
      if (!skipped.restores(e)) {
        n[3]++;
        return;
      }
      if (e.isFile()) {
        n[0]++;
        n[1] += e.size();
      } else {
        n[2]++;
      }
      if (dir) {
        matchedDirs.add(e.path());
      }
      for (PathBytes d = e.path().parent(); !all && d != null; d = d.parent()) {
        above.add(d);
      }
    });
    above.removeAll(matchedDirs);
    n[2] += above.size();
    if (!all && n[0] + n[2] == 0) {
      throw new BeamsaveException(
          "no entry of " + image.display() + " matches --include " + includes);
    }
    // A missing or replaced base fails the restore up front; so it does here.
    ImageChain.resolveHeads(image.member(head.catalog()), image.s3(), image.keys(),
        image.baseLocations());
    return new Planned(n[0], n[1], n[2], n[3], exists);
  }

  /**
   * {@code e}, which ended a restore, saying that {@code --skip-damaged} restores the rest where
   * what ended it is damaged data (the catalog was whole, the files elsewhere read back).
   */
  static BeamsaveException skipDamagedHint(BeamsaveException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof io.beamsave.transforms.image.block.DamagedDataException) {
        return new BeamsaveException(e.getMessage() + "; restore --skip-damaged restores every"
            + " file whose blocks check", e);
      }
    }
    return e;
  }

  /** Adds the reading and writing of {@code tasks} to {@code p}. */
  public static PCollection<Long> build(Pipeline p, List<ReadTask> tasks, ReadShards read) {
    return p.apply("Shards", Elements.of(tasks, ReadTask.CODER))
        .apply("Reshuffle", Reshuffle.viaRandomKey())
        .apply(READ_STEP, read);
  }

  /**
   * Restores {@code image} as {@code request} says: the catalog read, the target prepared, the
   * chosen files' shards read in parallel (here, or in a pipeline made with {@code options}),
   * everything placed with its metadata as {@link RestorePolicy} allows, and with {@code
   * --delete} what the image lacks removed, beneath the target's handle.
   */
  static Outcome run(ImageRef image, RestoreRequest request,
      Supplier<PipelineOptions> options, PrintWriter progress, Restore.Listener listener) {
    long start = System.nanoTime();
    Path target = request.target();
    List<String> includes = request.includes();
    ReadRun.PipelineUse use = request.use();
    Withheld withheld = request.policy().start();
    List<PathBytes> literal = literalPaths(includes);
    if (request.whole()) {
      CatalogHead head = image.head();
      if (use.here(head.totals().rawBytes())) {
        return BatchedRestore.run(image, head, request, progress, listener);
      }
    } else if (use.here(0)) {
      // A selection is read page by page to learn how much it holds; a small one is restored
      // here as it was read, a larger one goes to a pipeline.
      Outcome here = BatchedRestore.run(image, image.head(), request, progress, listener,
          BatchedRestore.Limits.DEFAULT, use::here);
      if (here != null) {
        return here;
      }
    }
    Catalog catalog;
    List<Entry> candidates;
    if (literal == null) {
      catalog = image.readCatalog();
      candidates = catalog.entries();
    } else {
      // Named paths: only the catalog pages that hold them and their directories are read.
      Map<PathBytes, Entry> found = new LinkedHashMap<>();
      CatalogHead head = image.walk(literal, e -> found.putIfAbsent(e.path(), e));
      Set<PathBytes> above = new TreeSet<>(PathOrder.PATHS);
      for (PathBytes p : literal) {
        for (PathBytes d = p.parent(); d != null; d = d.parent()) {
          above.add(d);
        }
      }
      for (Entry e : image.find(List.copyOf(above), head)) {
        found.putIfAbsent(e.path(), e);
      }
      catalog = head.catalog();
      candidates = List.copyOf(found.values());
    }
    Skipped skipped = new Skipped();
    List<Entry> chosen = new ArrayList<>();
    CatalogHead head = image.head();
    LinksOut links = new LinksOut(includes, p -> first(image.find(List.of(p), head)));
    for (Entry e : Selection.select(candidates, includes)) {
      e = withheld.apply(links.resolve(e));
      if (e != null && skipped.restores(e)) {
        chosen.add(e);
      }
    }
    if (chosen.isEmpty() && includes != null && !includes.isEmpty()) {
      throw new BeamsaveException(
          "no entry of " + image.display() + " matches --include " + includes);
    }
    chosen.sort(ShardPlanner.BY_PATH);
    List<Entry> files = chosen.stream().filter(Entry::isFile).toList();
    long bytes = files.stream().mapToLong(Entry::size).sum();
    // Before the target is touched: a missing or replaced base fails the restore up front.
    ImageChain chain = ImageChain.resolve(image.member(catalog), files, image.s3(),
        image.keys(), image.baseLocations());
    List<String> warnings = new ArrayList<>();
    TargetMirror.Removed removed = null;
    Map<PathBytes, String> damaged = Map.of();
    long damagedFiles = 0;
    try (TargetTree tree = TargetTree.prepare(request, image.display(), progress)) {
      boolean finished = false;
      boolean workersRan = false;
      try {
        long[] ids = tree.create(chosen);
        List<ReadTask> tasks = ReadTask.forEntries(chain, files, ids);
        workersRan = !tasks.isEmpty();
        long clampedByWorkers;
        try {
          clampedByWorkers = ReadRun.read(tasks,
              ReadShards.restoreTo(tree.target(), image.s3()).withKeys(chain.keys())
                  .withTags(chain.tags()).withSkipDamaged(request.skipDamaged()), bytes, use,
              options, progress("restored", bytes, tasks.size()), progress).mtimesClamped();
        } catch (BeamsaveException e) {
          throw skipDamagedHint(e);
        }
        if (request.skipDamaged()) {
          tree.collectDamaged();
        }
        // The library root's metadata goes to the target in a whole restore; one of chosen
        // entries leaves the target as it was.
        boolean whole = includes == null || includes.isEmpty();
        tree.finish(chosen, ids, whole ? withheld.apply(catalog.root()) : null);
        finished = true;
        damaged = tree.damaged();
        damagedFiles = tree.damagedFiles();
        if (request.delete()) {
          removed = tree.mirror(image, listener::removing);
        }
        withheld.warnings(warnings);
        tree.lostMetadata(warnings);
        String clamped = tree.clampedTimes(clampedByWorkers, chosen);
        if (clamped != null) {
          warnings.add(clamped);
        }
        skipped.warnings(warnings, PostgresSave.savedInBackupMode(catalog.notes()));
      } finally {
        if (!finished) {
          tree.abandon(workersRan);
        }
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot close restore target", target, e);
    }
    return new Outcome(target, files.size() - damagedFiles, chosen.size() - damaged.size(),
        bytes, (System.nanoTime() - start) / 1e9, warnings, removed, damaged);
  }
}

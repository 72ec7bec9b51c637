package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.catalog.ExtentDigest;
import io.beamsave.transforms.run.RunState;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.walk.LibraryWalker.Walked;
import io.beamsave.transforms.walk.LibraryWalker;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Impulse;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;

/**
 * Walks each library of a {@link SaveSpec}, stages its entries (files, directories, symlinks;
 * never following links; names as bytes, times to the nanosecond) in path order as the walk
 * finds them, and emits a {@link StagedListing} of them keyed by library name, also for an
 * empty library. Special files are skipped with a
 * warning. With {@code --files-from}, only the listed entries, all under listed directories, and
 * the directories on the way to them are walked; listed paths not found go into the listing.
 *
 * <p>Counters: {@code filesListed}, {@code specialFilesSkipped}. Fails, naming the path, when a
 * directory cannot be listed or a file cannot be read; with {@link SaveSpec#skipUnreadable}, such
 * an entry is instead kept flagged unreadable (a file without its bytes, a directory without
 * what could not be listed), or left out when not even its type is known, and recorded in the
 * listing with the cause.
 */
public final class ListLibrary extends PTransform<PBegin, PCollection<KV<String, StagedListing>>> {
  private final SaveSpec spec;
  private final WalkedAhead walked;

  private ListLibrary(SaveSpec spec, WalkedAhead walked) {
    this.spec = spec;
    this.walked = walked;
  }

  /** Walks each library of {@code spec} in the pipeline's workers. */
  public static ListLibrary of(SaveSpec spec) {
    return new ListLibrary(spec, null);
  }

  /**
   * Takes the listings from {@code walked}, a walk of the same libraries begun before the
   * pipeline in this JVM (see {@link #walkAhead}): they become the pipeline's input, so its
   * workers do not walk again. Only for a runner whose workers see this machine's files, which
   * is where the files are compared with the listing when they are read.
   */
  public ListLibrary withWalkedAhead(WalkedAhead walked) {
    return new ListLibrary(spec, walked);
  }

  @Override
  public PCollection<KV<String, StagedListing>> expand(PBegin input) {
    PCollection<byte[]> start = input.apply("Start", Impulse.create());
    PCollection<KV<String, StagedListing>> listings;
    if (walked == null) {
      listings = WalkInParts.walk(start, spec);
    } else {
      if (!walked.walks.keySet().equals(spec.libraries().keySet())) {
        throw new IllegalArgumentException("the walk begun ahead covers " + walked.walks.keySet()
            + ", not the libraries " + spec.libraries().keySet());
      }
      listings = start.apply("WalkedAhead", ParDo.of(new WalkedAheadFn(spec, walked.walks)));
    }
    return listings.setCoder(KvCoder.of(StringUtf8Coder.of(), StagedListing.CODER));
  }

  /** A library walked and its entries staged: the listing to hand on, and what the walk met. */
  record Staged(StagedListing listing, Walked walked) {}

  /** Walks library {@code name} of {@code spec} on {@code pool}, staging its entries. */
  static Staged stage(ForkJoinPool pool, SaveSpec spec, String name) {
    return stage(pool, spec, name, LibraryWalker.TopNames.ALL, Staging.walkName(name));
  }

  /** Walks the part of library {@code name} that {@code top} covers, staged as {@code stem}. */
  static Staged stage(ForkJoinPool pool, SaveSpec spec, String name,
      LibraryWalker.TopNames top, String stem) {
    SaveSpec.Library lib = spec.library(name);
    StagedEntries.Writer out = new StagedEntries.Writer(spec, name, stem);
    Walked w;
    try (SnapshotPlaceholders placeholders = new SnapshotPlaceholders(lib)) {
      w = LibraryWalker.walk(pool, lib.readPath(), lib.rootPath(), top,
          OwnFiles.excludes(spec, lib),
          spec.filesFrom(name), spec.skipUnreadable(), e -> out.add(placeholders.real(e)));
    }
    int chunks;
    try {
      chunks = out.finish();
    } catch (java.io.IOException e) {
      throw BeamsaveException.io("cannot stage the listing of", lib.rootPath(), e);
    }
    return new Staged(new StagedListing(w.head(), out.stem(), chunks, w.entries(), w.files(),
        w.rawBytes(), 0), w);
  }

  /**
   * Emits listings walked before the pipeline, and counts them as a walk in the pipeline would.
   * The walks' results stay in the launcher's JVM, in the save's state there ({@link
   * Staging#state}), where the workers (threads of that JVM: walks begin ahead only for such
   * runners) take them, once, waiting for walks not done yet (the runner starts meanwhile). A
   * worker that finds none (a task run again) walks the library itself.
   */
  static final class WalkedAheadFn extends DoFn<byte[], KV<String, StagedListing>> {
    private final SaveSpec spec;
    private final Counter filesListed = StageMetrics.counter(StageMetrics.FILES_LISTED);
    private final Counter specialSkipped =
        StageMetrics.counter(StageMetrics.SPECIAL_FILES_SKIPPED);
    private final StageMetrics stage = StageMetrics.of("list");

    WalkedAheadFn(SaveSpec spec, Map<String, CompletableFuture<Staged>> walks) {
      this.spec = spec;
      Map<String, CompletableFuture<Staged>> copy = new LinkedHashMap<>(walks);
      RunState state = Staging.state(spec);
      state.take(WalkedAheadFn.class);
      state.shared(WalkedAheadFn.class, k -> copy);
    }

    @ProcessElement
    public void process(OutputReceiver<KV<String, StagedListing>> out) {
      stage.started();
      Map<String, CompletableFuture<Staged>> walks =
          Staging.state(spec).take(WalkedAheadFn.class);
      for (String name : spec.libraries().keySet()) {
        Staged w = walks == null ? null : join(walks.get(name));
        if (w == null) {
          ForkJoinPool pool = LibraryWalker.newPool();
          try {
            w = stage(pool, spec, name);
          } finally {
            pool.shutdownNow();
          }
        }
        out.output(KV.of(name, w.listing()));
        filesListed.inc(w.listing().files());
        specialSkipped.inc(w.walked().special());
        countExcluded(w.walked().excluded());
      }
      stage.finished();
    }
  }

  /**
   * Counts, per operator's exclude pattern, the entries it left out (counted even when none,
   * so that a pattern that matched nothing anywhere can be told apart).
   */
  static void countExcluded(long[] byPattern) {
    for (int i = 0; i < byPattern.length; i++) {
      StageMetrics.counter(StageMetrics.excludedBy(i)).inc(byPattern[i]);
    }
  }

  /**
   * Walks of a save's libraries begun, on background threads, before its pipeline: on the
   * DirectRunner they overlap the start-up of Beam and its runner, about a second, instead of
   * following it. Passed to the pipeline with {@link #withWalkedAhead}.
   */
  public static final class WalkedAhead {
    private final Map<String, CompletableFuture<Staged>> walks;

    private WalkedAhead(Map<String, CompletableFuture<Staged>> walks) {
      this.walks = walks;
    }

    /** Waits for every walk; throws what the first failed one met. */
    Map<String, Staged> join() {
      Map<String, Staged> done = new LinkedHashMap<>();
      walks.forEach((name, walk) -> done.put(name, ListLibrary.join(walk)));
      return done;
    }
  }

  /**
   * Starts walking the libraries of {@code spec} now, on background threads, and loads the
   * codec's native library meanwhile. The listing is the same as the pipeline's own walk would
   * make: files are compared with it when they are read.
   */
  public static WalkedAhead walkAhead(SaveSpec spec) {
    ForkJoinPool pool = LibraryWalker.newPool();
    // A walk waits for the listings it submits to the pool: walks run beside it, never in it,
    // or walks of as many libraries as the pool has threads would wait for each other.
    ExecutorService walkers = Executors.newFixedThreadPool(
        Math.max(1, Math.min(spec.libraries().size(), pool.getParallelism())), r -> {
          Thread t = new Thread(r, "beamsave-walk-ahead");
          t.setDaemon(true);
          return t;
        });
    Map<String, CompletableFuture<Staged>> walks = new LinkedHashMap<>();
    for (String name : spec.libraries().keySet()) {
      walks.put(name, CompletableFuture.supplyAsync(
          () -> againstBase(spec, name, stage(pool, spec, name)), walkers));
    }
    walkers.shutdown();
    pool.execute(
        () -> {
          try {
            spec.codec().newCompressor().close();
            new ExtentDigest().close();
          } catch (Throwable exiting) {
            // Only a warm-up: a run that fails early exits while native libraries load, and
            // whatever that throws here is not the operator's concern.
          }
        });
    // Not before the walks end: each submits its listings to the pool as it goes.
    CompletableFuture.allOf(walks.values().toArray(new CompletableFuture<?>[0]))
        .whenComplete((done, failed) -> pool.shutdown());
    return new WalkedAhead(walks);
  }

  /**
   * {@code walked}, for a library saved against a base, planned against it too ({@link
   * PlanShards#againstBase}): while the runner starts, the changed files that planning reads
   * are read. The planning step takes such a listing as it is.
   */
  private static Staged againstBase(SaveSpec spec, String name, Staged walked) {
    if (spec.library(name).base() == null) {
      return walked;
    }
    try {
      return new Staged(PlanShards.againstBase(spec, name, walked.listing()), walked.walked());
    } catch (java.io.IOException e) {
      throw BeamsaveException.io("cannot plan against the base", spec.library(name).base()
          .location(), e);
    }
  }

  private static Staged join(CompletableFuture<Staged> ahead) {
    try {
      return ahead.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }
}

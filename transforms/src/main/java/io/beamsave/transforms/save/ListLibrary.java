package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.beam.Elements;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.fs.SymlinkException;
import io.beamsave.transforms.image.CatalogPaths;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.EntryType;
import io.beamsave.transforms.image.ExtentDigest;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.select.Excludes;
import io.beamsave.transforms.select.FilesFrom;
import io.beamsave.transforms.store.ObjectUri;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountedCompleter;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
 * Walks each library of a {@link SaveSpec} and emits its root and entries (files, directories,
 * symlinks; never following links; names as bytes, times to the nanosecond) as one {@link
 * Listing} keyed by library name, also for an empty library. Special files are skipped with a
 * warning. With {@code --files-from}, only the listed entries, all under listed directories, and
 * the directories on the way to them are walked; listed paths not found go into the listing.
 *
 * <p>Counters: {@code filesListed}, {@code specialFilesSkipped}. Fails, naming the path, when a
 * directory cannot be listed or a file cannot be read; with {@link SaveSpec#skipUnreadable}, such
 * an entry is instead kept flagged unreadable (a file without its bytes, a directory without
 * what could not be listed), or left out when not even its type is known, and recorded in the
 * listing with the cause.
 */
public final class ListLibrary extends PTransform<PBegin, PCollection<KV<String, Listing>>> {
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
  public PCollection<KV<String, Listing>> expand(PBegin input) {
    PCollection<byte[]> start = input.apply("Start", Impulse.create());
    PCollection<KV<String, Listing>> listings;
    if (walked == null) {
      listings = start
          .apply("LibraryNames", ParDo.of(new LibraryNamesFn(spec)))
          .apply("Walk", ParDo.of(new ListLibraryFn(spec)));
    } else {
      if (!walked.walks.keySet().equals(spec.libraries().keySet())) {
        throw new IllegalArgumentException("the walk begun ahead covers " + walked.walks.keySet()
            + ", not the libraries " + spec.libraries().keySet());
      }
      listings = start.apply("WalkedAhead", ParDo.of(new WalkedAheadFn(walked.join())));
    }
    return listings.setCoder(KvCoder.of(StringUtf8Coder.of(), Listing.CODER));
  }

  /**
   * A warning from the walk, in the form every warning of beamsave's takes. The walk runs in
   * the worker, whose standard error is the operator's on the DirectRunner and the
   * TaskManager's log on Flink.
   */
  private static void warn(String line) {
    System.err.println("beamsave: warning: " + line);
    System.err.flush();
  }

  /**
   * Emits the library names. Impulse and a DoFn rather than {@code Create.of}, which expands to a
   * splittable read of several steps: the DirectRunner's bookkeeping grows with every step, and
   * three interleaved pairs of saves of the 1.5 GiB corpus ran ~0.3 s faster without them.
   */
  static final class LibraryNamesFn extends DoFn<byte[], String> {
    private final SaveSpec spec;

    LibraryNamesFn(SaveSpec spec) {
      this.spec = spec;
    }

    @ProcessElement
    public void process(OutputReceiver<String> out) {
      spec.libraries().keySet().forEach(out::output);
    }
  }

  static final class ListLibraryFn extends DoFn<String, KV<String, Listing>> {
    private final SaveSpec spec;
    private final Counter filesListed = StageMetrics.counter(StageMetrics.FILES_LISTED);
    private final Counter specialSkipped =
        StageMetrics.counter(StageMetrics.SPECIAL_FILES_SKIPPED);
    private final StageMetrics stage = StageMetrics.of("list");

    ListLibraryFn(SaveSpec spec) {
      this.spec = spec;
    }

    private transient ForkJoinPool pool;

    @Setup
    public void setup() {
      pool = new ForkJoinPool(Math.max(1, Runtime.getRuntime().availableProcessors()));
    }

    @Teardown
    public void teardown() {
      if (pool != null) {
        pool.shutdownNow();
      }
    }

    @ProcessElement
    public void process(@Element String name, OutputReceiver<KV<String, Listing>> out) {
      stage.started();
      // Output and counters stay on this thread, because Beam's metrics and receivers belong
      // to it.
      SaveSpec.Library lib = spec.library(name);
      Walked w = walk(pool, lib.rootPath(), excludes(spec, lib), spec.filesFrom(name),
          spec.skipUnreadable()).walked();
      out.output(KV.of(name, w.listing));
      filesListed.inc(w.files());
      specialSkipped.inc(w.special);
      countExcluded(w.excluded);
      stage.finished();
    }
  }

  /**
   * Emits listings walked before the pipeline, carried in the DoFn encoded as {@link Elements}
   * carries its elements (a DoFn travels serialized, and a listing's coder is far more compact
   * than Java's), and counts them as a walk in the pipeline would.
   */
  static final class WalkedAheadFn extends DoFn<byte[], KV<String, Listing>> {
    private static final KvCoder<String, Listing> CODER =
        KvCoder.of(StringUtf8Coder.of(), Listing.CODER);
    private final byte[] encoded;
    private final HashMap<String, Long> special = new HashMap<>();
    private final HashMap<String, long[]> excluded = new HashMap<>();
    private final Counter filesListed = StageMetrics.counter(StageMetrics.FILES_LISTED);
    private final Counter specialSkipped =
        StageMetrics.counter(StageMetrics.SPECIAL_FILES_SKIPPED);
    private final StageMetrics stage = StageMetrics.of("list");

    WalkedAheadFn(Map<String, Walked> walks) {
      List<KV<String, Listing>> listings = new ArrayList<>();
      walks.forEach((name, w) -> {
        listings.add(KV.of(name, w.listing));
        special.put(name, w.special);
        excluded.put(name, w.excluded);
      });
      encoded = Elements.encode(listings, CODER);
    }

    @ProcessElement
    public void process(OutputReceiver<KV<String, Listing>> out) throws IOException {
      stage.started();
      for (KV<String, Listing> listing : Elements.decode(encoded, CODER)) {
        out.output(listing);
        filesListed.inc(listing.getValue().entries().stream().filter(Entry::isFile).count());
        specialSkipped.inc(special.get(listing.getKey()));
        countExcluded(excluded.get(listing.getKey()));
      }
      stage.finished();
    }
  }

  /**
   * Counts, per operator's exclude pattern, the entries it left out (counted even when none,
   * so that a pattern that matched nothing anywhere can be told apart).
   */
  private static void countExcluded(long[] byPattern) {
    for (int i = 0; i < byPattern.length; i++) {
      StageMetrics.counter(StageMetrics.excludedBy(i)).inc(byPattern[i]);
    }
  }

  /**
   * One library's listing, the special files its walk skipped, and the entries each of the
   * operator's exclude patterns left out.
   */
  record Walked(Listing listing, long special, long[] excluded) {
    long files() {
      return listing.entries().stream().filter(Entry::isFile).count();
    }
  }

  /**
   * Walks of a save's libraries begun, on background threads, before its pipeline: on the
   * DirectRunner they overlap the start-up of Beam and its runner, about a second, instead of
   * following it. Passed to the pipeline with {@link #withWalkedAhead}.
   */
  public static final class WalkedAhead {
    private final Map<String, CompletableFuture<Walk>> walks;

    private WalkedAhead(Map<String, CompletableFuture<Walk>> walks) {
      this.walks = walks;
    }

    /** Waits for every walk; throws what the first failed one met. */
    Map<String, Walked> join() {
      Map<String, Walked> done = new LinkedHashMap<>();
      walks.forEach((name, walk) -> done.put(name, ListLibrary.join(walk).walked()));
      return done;
    }
  }

  /**
   * Starts walking the libraries of {@code spec} now, on background threads, and loads the
   * codec's native library meanwhile. The listing is the same as the pipeline's own walk would
   * make: files are compared with it when they are read.
   */
  public static WalkedAhead walkAhead(SaveSpec spec) {
    ForkJoinPool pool = new ForkJoinPool(Math.max(1, Runtime.getRuntime().availableProcessors()));
    Map<String, CompletableFuture<Walk>> walks = new LinkedHashMap<>();
    for (SaveSpec.Library lib : spec.libraries().values()) {
      Path root = lib.rootPath();
      Excludes excludes = excludes(spec, lib);
      FilesFrom only = spec.filesFrom(lib.name());
      boolean skip = spec.skipUnreadable();
      walks.put(lib.name(),
          CompletableFuture.supplyAsync(() -> walk(pool, root, excludes, only, skip), pool));
    }
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
    pool.shutdown();
    return new WalkedAhead(walks);
  }

  /**
   * Walks a library through directory handles, listing directories in parallel: a walk is a
   * chain of small syscalls, and while it runs nothing else in the save can. Every directory is
   * opened from its parent's handle without following links, so a directory swapped for a
   * symlink mid-walk fails the walk instead of leading it outside the library.
   */
  private static Walk walk(
      ForkJoinPool pool, Path root, Excludes excludes, FilesFrom only, boolean skip) {
    Walk walk = new Walk(excludes, only, skip);
    try (Dir dir = Dir.open(root)) {
      walk.root = entry(dir.stat(), PathBytes.of(new byte[0]), null);
      pool.invoke(new WalkDirectory(null, walk, new SharedDir(walk, dir, false), null, EMPTY, 0,
          only == null));
    } catch (IOException e) {
      throw BeamsaveException.io("cannot list", root, e);
    } finally {
      walk.closeLeftovers();
    }
    return walk;
  }

  private static final PathBytes EMPTY = PathBytes.of(new byte[0]);

  /**
   * What the walk of {@code lib} leaves out: the operator's excludes, and beamsave's own files
   * where an image of this save, its ledger or the run's staging lies inside the library (so
   * that a save into the library never takes in earlier images, a partial one or staging).
   */
  static Excludes excludes(SaveSpec spec, SaveSpec.Library lib) {
    Path root = real(lib.rootPath());
    java.util.Set<Path> imageDirs = new java.util.LinkedHashSet<>();
    List<String> own = new ArrayList<>();
    for (SaveSpec.Library l : spec.libraries().values()) {
      String where = l.sink().location();
      if (!ObjectUri.isObject(where) && Path.of(where).getParent() != null) {
        Path image = real(Path.of(where));
        imageDirs.add(image.getParent());
        if (image.startsWith(root) && !image.equals(root)) {
          // This run's image whatever its name, with its .partial and .lock.
          String rel = Excludes.quote(root.relativize(image).toString());
          own.add("/" + rel);
          own.add("/" + rel + ".*");
        }
      }
    }
    for (Path dir : imageDirs) {
      if (dir.startsWith(root)) {
        String rel = root.relativize(dir).toString();
        String in = "/" + (rel.isEmpty() ? "" : Excludes.quote(rel) + "/");
        for (String name : List.of("*" + ImageFormat.EXTENSION, "*" + ImageFormat.EXTENSION + ".*",
            "beamsave-ledger/" /* the ledger, as pipelines.transfer.Ledger names it */,
            ".beamsave-staging-*/", ".beamsave-lease-*")) {
          own.add(in + name);
        }
      }
    }
    if (!ObjectUri.isObject(spec.staging())) {
      Path staging = real(Path.of(spec.staging()));
      if (staging.startsWith(root) && !staging.equals(root)) {
        own.add("/" + Excludes.quote(root.relativize(staging).toString()) + "/");
      }
      // Other runs' staging beside this run's (killed ones', or a concurrent save's).
      Path base = staging.getParent();
      if (base != null && base.startsWith(root)) {
        String rel = root.relativize(base).toString();
        own.add("/" + (rel.isEmpty() ? "" : Excludes.quote(rel) + "/") + ".beamsave-staging-*/");
      }
    }
    return spec.excludes().withOwn(own);
  }

  /** {@code p} with its links resolved as far as it exists (it may not be made yet). */
  private static Path real(Path p) {
    Path abs = p.toAbsolutePath().normalize();
    Path existing = abs;
    while (existing != null && !java.nio.file.Files.exists(existing)) {
      existing = existing.getParent();
    }
    try {
      return existing == null ? abs : existing.toRealPath().resolve(existing.relativize(abs));
    } catch (IOException e) {
      return abs;
    }
  }

  private static Walk join(CompletableFuture<Walk> ahead) {
    try {
      return ahead.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }

  /** What the walk of one library found, shared by its directory tasks. */
  private static final class Walk {
    final Excludes excludes;
    final java.util.concurrent.atomic.AtomicLongArray excluded;
    volatile Entry root;
    final Queue<Entry> found = new ConcurrentLinkedQueue<>();
    final AtomicLong special = new AtomicLong();
    final Set<SharedDir> open = ConcurrentHashMap.newKeySet();
    /** What --files-from selects, or null for everything. */
    final FilesFrom only;
    final boolean skip;
    final Queue<Unreadable> unreadable = new ConcurrentLinkedQueue<>();
    /** Entries found but not wholly read: files without their bytes, directories partly listed. */
    final Set<PathBytes> flagged = ConcurrentHashMap.newKeySet();
    /** Listed paths the walk came to. */
    final Set<PathBytes> reached = ConcurrentHashMap.newKeySet();
    /** Directories on the way to listed paths that were excluded or could not be read. */
    final Set<PathBytes> settled = ConcurrentHashMap.newKeySet();

    Walk(Excludes excludes, FilesFrom only, boolean skip) {
      this.excludes = excludes;
      this.excluded = new java.util.concurrent.atomic.AtomicLongArray(excludes.patterns().size());
      this.only = only;
      this.skip = skip;
    }

    /**
     * Fails the walk on {@code e} as the message names it, or with {@link #skip} records {@code
     * rel} as unreadable and flags {@code flag} (the entry itself, or the directory that misses
     * it) instead. A directory swapped for a symlink always fails: that is a library changing
     * under the save, not one it may not read.
     */
    void cannot(String action, String shown, PathBytes rel, PathBytes flag, IOException e) {
      if (!skip || e instanceof SymlinkException) {
        throw BeamsaveException.io(action, shown, e);
      }
      unreadable.add(new Unreadable(rel, BeamsaveException.describe(e)));
      if (flag != null && !flag.isEmpty()) {
        flagged.add(flag);
      }
      settled.add(rel);
    }

    Walked walked() {
      long[] byPattern = new long[excluded.length()];
      for (int i = 0; i < byPattern.length; i++) {
        byPattern[i] = excluded.get(i);
      }
      List<Entry> entries = new ArrayList<>(found.size());
      for (Entry e : found) {
        entries.add(flagged.contains(e.path()) ? unreadableEntry(e) : e);
      }
      List<Unreadable> skipped = new ArrayList<>(unreadable);
      skipped.sort(java.util.Comparator.comparing(Unreadable::path));
      List<PathBytes> missing = new ArrayList<>();
      if (only != null) {
        for (PathBytes p : only.paths()) {
          if (!reached.contains(p) && !underSettled(p)) {
            missing.add(p);
          }
        }
      }
      return new Walked(new Listing(root, entries, skipped, missing), special.get(), byPattern);
    }

    private boolean underSettled(PathBytes p) {
      for (PathBytes d = p.parent(); d != null; d = d.parent()) {
        if (settled.contains(d)) {
          return true;
        }
      }
      return false;
    }

    /** Closes the handles of directories whose walk a failure cut short. */
    void closeLeftovers() {
      for (SharedDir d : open) {
        d.closeNow();
      }
    }
  }

  /**
   * A directory handle shared by the task that lists it and the tasks of its subdirectories,
   * each of which opens its own from it: closed when the last has, so that the handles open at
   * once number about the walk's depth times its threads, not its width.
   */
  private static final class SharedDir {
    final Walk walk;
    final Dir dir;
    final boolean owned;
    final AtomicInteger users = new AtomicInteger(1);

    SharedDir(Walk walk, Dir dir, boolean owned) {
      this.walk = walk;
      this.dir = dir;
      this.owned = owned;
      if (owned) {
        walk.open.add(this);
      }
    }

    void retain() {
      users.incrementAndGet();
    }

    void release() {
      if (users.decrementAndGet() == 0) {
        closeNow();
      }
    }

    void closeNow() {
      if (owned && walk.open.remove(this)) {
        try {
          dir.close();
        } catch (IOException ignored) {
          // A listing handle: nothing was written through it.
        }
      }
    }
  }

  /**
   * Lists one directory, records its children and forks the walks of its subdirectories. A
   * counted completer, not a recursive action: a task ends before its subdirectories' run, so
   * the stack stays flat however deep the tree nests (a thousand levels overflowed the other).
   */
  private static final class WalkDirectory extends CountedCompleter<Void> {
    private final Walk walk;
    private final SharedDir parent;
    private final byte[] name;
    private final PathBytes rel;
    private final int depth;
    /** Whether all of this directory is saved; if not, it is on the way to listed paths. */
    private final boolean selected;

    /**
     * The walk of {@code parent}'s child {@code name} at {@code depth} components, or of the
     * root when name is null.
     */
    WalkDirectory(CountedCompleter<?> completer, Walk walk, SharedDir parent, byte[] name,
        PathBytes rel, int depth, boolean selected) {
      super(completer);
      this.walk = walk;
      this.parent = parent;
      this.name = name;
      this.rel = rel;
      this.depth = depth;
      this.selected = selected;
    }

    @Override
    public void compute() {
      SharedDir self = parent;
      if (name != null) {
        try {
          self = new SharedDir(walk, parent.dir.openDir(name), true);
        } catch (IOException e) {
          walk.cannot("cannot list", parent.dir.child(name), rel, rel, e);
          self = null;
        } finally {
          parent.release();
        }
        if (self == null) {
          tryComplete();
          return;
        }
      }
      List<WalkDirectory> subdirectories = new ArrayList<>();
      Dir dir = self.dir;
      try {
        List<byte[]> children;
        try {
          children = dir.list();
        } catch (IOException e) {
          walk.cannot("cannot list", dir.name(), rel, rel, e);
          children = List.of();
        }
        if (walk.excludes.caches() && isCache(dir, children)) {
          children = List.of(CACHE_TAG);
        }
        for (byte[] child : children) {
          PathBytes childRel = rel.child(child);
          boolean childSelected = selected;
          if (walk.only != null && walk.only.listed(childRel)) {
            // Also beneath a listed directory: a path listed twice is not missing.
            childSelected = true;
            walk.reached.add(childRel);
          } else if (!selected && !walk.only.onTheWay(childRel)) {
            continue; // Off the listed paths and the way to them: not even stat'ed.
          }
          // What a pattern leaves out whatever its type is never even stat'ed (a stale mount,
          // a file gone meanwhile); patterns of directories only are tried after the stat.
          int excludedBy = walk.excludes.match(childRel, false);
          FileStat s = null;
          if (excludedBy < 0) {
            try {
              s = dir.stat(child);
            } catch (IOException x) {
              walk.cannot("cannot read", dir.child(child), childRel, rel, x);
              continue;
            }
            if (!childSelected && !s.isDirectory()) {
              continue; // On the way, but not a directory: what was listed beneath is missing.
            }
            if (s.isDirectory()) {
              excludedBy = walk.excludes.match(childRel, true);
            }
          }
          if (excludedBy >= 0) {
            walk.settled.add(childRel);
            if (excludedBy < walk.excluded.length()) {
              walk.excluded.incrementAndGet(excludedBy);
            }
            continue;
          }
          if (childRel.length() > CatalogPaths.MAX_NAME_BYTES) {
            throw new BeamsaveException("cannot save " + dir.child(child) + ": its path in the"
                + " library is longer than " + CatalogPaths.MAX_NAME_BYTES + " bytes");
          }
          if (depth + 1 > ImageFormat.MAX_DEPTH) {
            throw new BeamsaveException("cannot save " + dir.child(child) + ": it nests deeper"
                + " than " + ImageFormat.MAX_DEPTH + " directories");
          }
          Entry e;
          try {
            e = entry(s, childRel, s.isSymlink() ? dir.readLink(child) : null);
          } catch (IOException x) {
            walk.cannot("cannot read", dir.child(child), childRel, rel, x);
            continue;
          }
          if (e == null) {
            walk.special.incrementAndGet();
            warn("skipping special file (FIFO, socket or device) "
                + io.beamsave.transforms.Printable.text(dir.child(child)) + ": it is not saved");
            continue;
          }
          if (e.type() == EntryType.DIRECTORY) {
            self.retain();
            subdirectories.add(new WalkDirectory(this, walk, self, child, childRel, depth + 1,
                childSelected));
          } else if (e.isFile() && (e.mode() & 0444) != 0444 && !dir.canRead(child)) {
            // A file everyone's bits may read skips the access() call: an ACL that still denies
            // this user makes the read fail later, naming the file the same way.
            walk.cannot("cannot read", dir.child(child), childRel, childRel,
                new java.nio.file.AccessDeniedException(dir.child(child)));
          }
          walk.found.add(e);
        }
      } finally {
        self.release();
      }
      setPendingCount(subdirectories.size());
      subdirectories.forEach(WalkDirectory::fork);
      tryComplete();
    }
  }

  private static final byte[] CACHE_TAG =
      Excludes.CACHE_TAG.getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  /** Whether {@code dir} holds a CACHEDIR.TAG file that begins with the tag's signature. */
  private static boolean isCache(Dir dir, List<byte[]> children) {
    if (children.stream().noneMatch(c -> java.util.Arrays.equals(c, CACHE_TAG))) {
      return false;
    }
    byte[] want = Excludes.CACHE_SIGNATURE.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    try {
      if (!dir.stat(CACHE_TAG).isRegularFile()) {
        return false;
      }
      byte[] got = new byte[want.length];
      int n = 0;
      try (OpenFile f = dir.openRead(CACHE_TAG)) {
        while (n < got.length) {
          int r = f.read(n, got, n, got.length - n);
          if (r <= 0) {
            break;
          }
          n += r;
        }
      }
      return n == want.length && java.util.Arrays.equals(got, want);
    } catch (IOException e) {
      // As tar and restic: a tag that cannot be read tags nothing.
      warn("cannot read " + io.beamsave.transforms.Printable.text(dir.child(CACHE_TAG))
          + ", so its directory is saved: " + BeamsaveException.describe(e));
      return false;
    }
  }

  /**
   * {@code e} flagged unreadable: a file keeps no bytes (none were read, and none are planned),
   * a directory keeps what could be listed.
   */
  static Entry unreadableEntry(Entry e) {
    Entry flagged = e.withFlags(e.flags() | Entry.FLAG_UNREADABLE);
    if (!e.isFile()) {
      return flagged;
    }
    return new Entry(e.path(), e.type(), flagged.flags(), e.mode(), e.uid(), e.gid(),
        e.mtimeSeconds(), e.mtimeNanos(), e.ctimeSeconds(), e.ctimeNanos(), e.inode(), 0,
        e.linkTarget(), List.of());
  }

  /**
   * The catalog entry for what {@code s} describes, at {@code rel}, or {@code null} for a
   * special file (FIFO, socket, device), which images do not hold.
   */
  static Entry entry(FileStat s, PathBytes rel, byte[] linkTarget) {
    EntryType type;
    if (s.isDirectory()) {
      type = EntryType.DIRECTORY;
    } else if (s.isRegularFile()) {
      type = EntryType.FILE;
    } else if (s.isSymlink()) {
      type = EntryType.SYMLINK;
    } else {
      return null;
    }
    return new Entry(
        rel,
        type,
        0,
        s.permissions(),
        s.uid(),
        s.gid(),
        s.mtimeSeconds(),
        s.mtimeNanos(),
        s.ctimeSeconds(),
        s.ctimeNanos(),
        s.inode(),
        type == EntryType.FILE ? s.size() : 0,
        linkTarget == null ? null : PathBytes.of(linkTarget),
        List.of());
  }
}

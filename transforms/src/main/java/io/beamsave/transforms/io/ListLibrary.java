package io.beamsave.transforms.io;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.image.ExtentDigest;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.EntryType;
import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.atomic.AtomicLong;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.Impulse;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Walks each library of a {@link SaveSpec} and emits its entries (files, directories, symlinks;
 * never following links) as one {@link Listing} keyed by library name, also for an empty
 * library. Special files are skipped with a warning.
 *
 * <p>Counters: {@code filesListed}, {@code specialFilesSkipped}. Fails, naming the path, when a
 * directory cannot be listed or a file cannot be read.
 */
public final class ListLibrary extends PTransform<PBegin, PCollection<KV<String, Listing>>> {
  private final SaveSpec spec;

  private ListLibrary(SaveSpec spec) {
    this.spec = spec;
  }

  public static ListLibrary of(SaveSpec spec) {
    return new ListLibrary(spec);
  }

  @Override
  public PCollection<KV<String, Listing>> expand(PBegin input) {
    return input
        .apply("Start", Impulse.create())
        .apply("LibraryNames", ParDo.of(new LibraryNamesFn(spec)))
        .apply("Walk", ParDo.of(new ListLibraryFn(spec)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), Listing.CODER));
  }

  private static final Logger LOG = LoggerFactory.getLogger(ListLibrary.class);

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
      Path root = Path.of(spec.library(name).root());
      // Output and counters stay on this thread, because Beam's metrics and receivers belong
      // to it.
      CompletableFuture<Walk> ahead = AHEAD.remove(aheadKey(spec, name));
      Walk walk = ahead != null ? join(ahead) : walk(pool, root);
      List<Entry> entries = new ArrayList<>(walk.found);
      long files = entries.stream().filter(Entry::isFile).count();
      out.output(KV.of(name, new Listing(entries)));
      filesListed.inc(files);
      specialSkipped.inc(walk.special.get());
      stage.finished();
    }
  }

  /**
   * Walks begun by {@link #walkAhead} in this JVM and not yet taken by a pipeline, by run and
   * library.
   */
  private static final ConcurrentHashMap<String, CompletableFuture<Walk>> AHEAD =
      new ConcurrentHashMap<>();

  /**
   * Starts walking the libraries of {@code spec} now, on background threads, and loads the
   * codec's native library meanwhile. A pipeline that then runs in this JVM (the DirectRunner)
   * takes the walk instead of starting its own after a second of runner start-up; on other
   * runners the workers walk as usual and this costs the launcher one walk. The listing is the
   * same either way: files are compared with it when they are read.
   */
  public static void walkAhead(SaveSpec spec) {
    ForkJoinPool pool = new ForkJoinPool(Math.max(1, Runtime.getRuntime().availableProcessors()));
    for (SaveSpec.Library lib : spec.libraries().values()) {
      Path root = Path.of(lib.root());
      AHEAD.put(
          aheadKey(spec, lib.name()),
          CompletableFuture.supplyAsync(() -> walk(pool, root), pool));
    }
    pool.execute(
        () -> {
          Codecs.parse(spec.codec()).newCompressor().close();
          new ExtentDigest().close();
        });
    pool.shutdown();
  }

  /** Whether a walk begun for {@code library} of {@code spec} still waits for its pipeline. */
  static boolean walkedAhead(SaveSpec spec, String library) {
    return AHEAD.containsKey(aheadKey(spec, library));
  }

  /** Drops walks begun for {@code spec} that no pipeline took (a run that failed early). */
  public static void forgetAhead(SaveSpec spec) {
    spec.libraries().keySet().forEach(name -> AHEAD.remove(aheadKey(spec, name)));
  }

  private static String aheadKey(SaveSpec spec, String library) {
    return spec.staging() + "\0" + library;
  }

  /**
   * Walks a library, listing directories in parallel: a walk is a chain of small syscalls, and
   * while it runs nothing else in the save can.
   */
  private static Walk walk(ForkJoinPool pool, Path root) {
    Walk walk = new Walk();
    pool.invoke(new WalkDirectory(walk, root, ""));
    return walk;
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
    final Queue<Entry> found = new ConcurrentLinkedQueue<>();
    final AtomicLong special = new AtomicLong();
  }

  /** Lists one directory, records its children and walks its subdirectories in parallel. */
  private static final class WalkDirectory extends RecursiveAction {
    private final Walk walk;
    private final Path dir;
    private final String rel;

    WalkDirectory(Walk walk, Path dir, String rel) {
      this.walk = walk;
      this.dir = dir;
      this.rel = rel;
    }

    @Override
    protected void compute() {
      List<WalkDirectory> subdirectories = new ArrayList<>();
      for (Path child : children(dir)) {
        String name = child.getFileName().toString();
        String childRel = rel.isEmpty() ? name : rel + "/" + name;
        Entry e;
        try {
          e = entry(child, childRel);
        } catch (IOException x) {
          throw BeamsaveException.io("cannot read", child, x);
        }
        if (e == null) {
          walk.special.incrementAndGet();
          LOG.warn("skipping special file (fifo, socket or device): {}", child);
          continue;
        }
        if (e.type() == EntryType.DIRECTORY) {
          subdirectories.add(new WalkDirectory(walk, child, childRel));
        } else if (e.isFile() && (e.mode() & 0444) != 0444 && !Files.isReadable(child)) {
          // A file everyone's bits may read skips the access() call: an ACL that still denies
          // this user makes the read fail later, naming the file the same way.
          throw new BeamsaveException("cannot read " + child + ": permission denied");
        }
        walk.found.add(e);
      }
      invokeAll(subdirectories);
    }
  }

  private static List<Path> children(Path dir) {
    List<Path> children = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      ds.forEach(children::add);
    } catch (IOException | DirectoryIteratorException e) {
      IOException cause =
          e instanceof DirectoryIteratorException ? ((DirectoryIteratorException) e).getCause()
              : (IOException) e;
      throw BeamsaveException.io("cannot list", dir, cause);
    }
    return children;
  }

  private static final int S_IFMT = 0170000;
  private static final int S_IFDIR = 0040000;
  private static final int S_IFREG = 0100000;
  private static final int S_IFLNK = 0120000;

  /**
   * The catalog entry for {@code p} from a single {@code lstat}, or {@code null} for a special
   * file (FIFO, socket, device), which images do not hold.
   */
  static Entry entry(Path p, String rel) throws IOException {
    Map<String, Object> a =
        Files.readAttributes(
            p, "unix:mode,uid,gid,size,lastModifiedTime", LinkOption.NOFOLLOW_LINKS);
    int mode = (Integer) a.get("mode");
    Instant t = ((FileTime) a.get("lastModifiedTime")).toInstant();
    EntryType type;
    String target = null;
    long size = 0;
    switch (mode & S_IFMT) {
      case S_IFDIR:
        type = EntryType.DIRECTORY;
        break;
      case S_IFREG:
        type = EntryType.FILE;
        size = (Long) a.get("size");
        break;
      case S_IFLNK:
        type = EntryType.SYMLINK;
        target = Files.readSymbolicLink(p).toString();
        break;
      default:
        return null;
    }
    return new Entry(
        rel,
        type,
        0,
        mode & 07777,
        (Integer) a.get("uid"),
        (Integer) a.get("gid"),
        t.getEpochSecond(),
        t.getNano(),
        size,
        target,
        List.of());
  }
}

package io.beamsave.transforms.read;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.run.LiveProgress;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.Map;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;

/**
 * Reads shards of an image, checking every block checksum and every extent digest on the way,
 * and either only checks them (verify) or writes the pieces into files under a target directory
 * (restore). Emits the raw bytes checked per task.
 *
 * <p>A restore writes only under temporary names ({@link RestoreTarget#temporaryName}), each
 * reached through directory handles from the target without following a link, so that nothing
 * is written outside the target even if its directories are swapped for links meanwhile: into
 * the files the caller created beforehand, checked to be the very file created (its inode),
 * which the caller renames afterwards; and, for a piece that is its whole file ({@link
 * ShardReader.Whole}), into a file it creates exclusively, gives its metadata through its
 * handle once the digest matched, renames into place and checks is still that file. Zero
 * blocks are skipped, leaving holes.
 *
 * <p>Counters: {@code bytesChecked}, {@code mtimesClamped}.
 */
public final class ReadShards extends PTransform<PCollection<ReadTask>, PCollection<Long>> {
  private final RestoreTarget target;
  private final S3Settings store;
  private final Map<String, ImageKey> keys;
  private final Map<String, String> tags;

  private ReadShards(RestoreTarget target, S3Settings store, Map<String, ImageKey> keys,
      Map<String, String> tags) {
    this.target = target;
    this.store = store;
    this.keys = Map.copyOf(keys);
    this.tags = Map.copyOf(tags);
  }

  /**
   * Checks the pieces of each task's image (a path, or {@code s3://} read with {@code store})
   * and writes nothing.
   */
  public static ReadShards verify(S3Settings store) {
    return new ReadShards(null, store, Map.of(), Map.of());
  }

  /** Restores the pieces of each task's image into their files under {@code target}. */
  public static ReadShards restoreTo(RestoreTarget target, S3Settings store) {
    return new ReadShards(target, store, Map.of(), Map.of());
  }

  /**
   * The same, reading the encrypted images among the tasks' with these keys, by location (as
   * {@link io.beamsave.transforms.read.ImageChain#keys} gives them).
   */
  public ReadShards withKeys(Map<String, ImageKey> imageKeys) {
    return new ReadShards(target, store, imageKeys, tags);
  }

  /**
   * The same, each image read only if it still is the one the driver read ({@link
   * io.beamsave.transforms.read.ImageChain#tags}): one replaced meanwhile fails as replaced.
   */
  public ReadShards withTags(Map<String, String> imageTags) {
    return new ReadShards(target, store, keys, imageTags);
  }

  @Override
  public PCollection<Long> expand(PCollection<ReadTask> tasks) {
    return tasks
        .apply(target == null ? "Verify" : "Restore", ParDo.of(new ReadShardFn(this)))
        .setCoder(VarLongCoder.of());
  }

  static final class ReadShardFn extends DoFn<ReadTask, Long> {
    private final RestoreTarget target;
    private final S3Settings store;
    private final Map<String, ImageKey> keys;
    private final Map<String, String> tags;
    private final Counter bytesChecked = StageMetrics.counter(StageMetrics.BYTES_CHECKED);
    private final Counter mtimesClamped = StageMetrics.counter(StageMetrics.MTIMES_CLAMPED);
    private final StageMetrics stage;

    /** A chain's images are read by the same workers. */
    private transient ChainReaders images;

    ReadShardFn(ReadShards spec) {
      this.target = spec.target;
      this.store = spec.store;
      this.keys = spec.keys;
      this.tags = spec.tags;
      this.stage = StageMetrics.of(target == null ? "verify" : "restore");
    }

    @Setup
    public void setup() {
      images = new ChainReaders(store, tags, s -> s);
    }

    @Teardown
    public void teardown() throws IOException {
      if (images != null) {
        images.close();
      }
    }

    @ProcessElement
    public void process(@Element ReadTask task, OutputReceiver<Long> out,
        org.apache.beam.sdk.options.PipelineOptions options) throws IOException {
      stage.started();
      java.util.concurrent.atomic.LongAdder live =
          LiveProgress.counter(options.getJobName(), StageMetrics.BYTES_CHECKED);
      long[] done = read(task, live);
      mtimesClamped.inc(done[1]);
      out.output(done[0]);
      stage.finished();
    }

    /** Reads one task; returns the raw bytes checked and the files whose mtime was clamped. */
    long[] read(ReadTask task, java.util.concurrent.atomic.LongAdder live) throws IOException {
      long[] checked = {0};
      long clamped = 0;
      try (TargetFiles files = target == null ? null : new TargetFiles(target)) {
        images.reader(task.blockSize()).read(
            images.source(task.image()),
            task.image(),
            keys.get(task.image()),
            task.shard(),
            task.info(),
            task.pieces(),
            task.beside(),
            new ShardReader.Sink() {
              @Override
              public void write(ShardReader.FileExtent piece, long fileOffset, byte[] buf, int off,
                  int len, boolean zero) {
                checked[0] += len;
                bytesChecked.inc(len);
                live.add(len);
                if (files != null && !zero) {
                  files.write(piece, fileOffset, buf, off, len);
                }
              }

              @Override
              public void pieceDone(ShardReader.FileExtent piece) {
                if (files != null) {
                  files.pieceDone(piece);
                }
              }
            });
        if (files != null) {
          clamped = files.clamped;
        }
      }
      return new long[] {checked[0], clamped};
    }
  }

  /**
   * Reads {@code tasks} in this JVM, without a pipeline, on {@code threads} threads (each with
   * a reader of its own, taking the next task when done): for work a pipeline's start would take
   * longer than. {@code live} hears of the bytes as they are checked. The first failure stops
   * the others from taking more tasks and is thrown.
   *
   * @return the raw bytes checked and the files whose mtime was clamped
   */
  public long[] readHere(java.util.List<ReadTask> tasks,
      java.util.concurrent.atomic.LongAdder live, int threads) throws IOException {
    java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicLong checked = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.atomic.AtomicLong clamped = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.atomic.AtomicReference<Throwable> failed =
        new java.util.concurrent.atomic.AtomicReference<>();
    Runnable worker = () -> {
      ReadShardFn fn = new ReadShardFn(this);
      fn.setup();
      try {
        for (int i; failed.get() == null && (i = next.getAndIncrement()) < tasks.size(); ) {
          long[] done = fn.read(tasks.get(i), live);
          checked.addAndGet(done[0]);
          clamped.addAndGet(done[1]);
        }
      } catch (IOException | RuntimeException | Error e) {
        failed.compareAndSet(null, e);
      } finally {
        try {
          fn.teardown();
        } catch (IOException e) {
          failed.compareAndSet(null, e);
        }
      }
    };
    int n = Math.max(1, Math.min(threads, tasks.size()));
    java.util.List<Thread> running = new java.util.ArrayList<>();
    for (int t = 1; t < n; t++) {
      Thread th = new Thread(worker, "read-shards-" + t);
      th.start();
      running.add(th);
    }
    worker.run();
    for (Thread th : running) {
      try {
        th.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failed.compareAndSet(null, new java.io.InterruptedIOException("interrupted"));
      }
    }
    Throwable f = failed.get();
    if (f instanceof IOException io) {
      throw io;
    }
    if (f instanceof RuntimeException r) {
      throw r;
    }
    if (f instanceof Error err) {
      throw err;
    }
    return new long[] {checked.get(), clamped.get()};
  }

  /**
   * Writes the files of a restore, keeping the last one and its directory open: into the files
   * the restore created for pieces with a file id, and, for a piece that is its whole file,
   * creating the file, writing it, giving it its metadata and moving it into place.
   */
  private static final class TargetFiles implements AutoCloseable {
    private final RestoreTarget target;
    private final Beneath tree;
    private final boolean asRoot = Dir.effectiveUid() == 0;
    private PathBytes openPath;
    private OpenFile open;
    /** The end of the last bytes written into {@link #open}. */
    private long openEnd;
    /** Files whose mtime the filesystem did not keep as given. */
    long clamped;

    TargetFiles(RestoreTarget target) {
      this.target = target;
      this.tree = new Beneath(target.openRoot());
    }

    void write(ShardReader.FileExtent piece, long offset, byte[] buf, int off, int len) {
      try {
        OpenFile f = openFor(piece);
        // The file was made empty or of its size, a hole: pages of zeros stay holes (sparse
        // files come back sparse), and a file that ends in them is given its size at the end.
        int at = 0;
        while (at < len) {
          int page = (int) Math.min(len - at, PAGE - ((offset + at) % PAGE));
          int start = at;
          while (at < len && !zeros(buf, off + at, page)) {
            at += page;
            page = (int) Math.min(len - at, PAGE);
          }
          if (at > start) {
            f.write(offset + start, buf, off + start, at - start);
            openEnd = Math.max(openEnd, offset + at);
          }
          while (at < len && zeros(buf, off + at, page)) {
            at += page;
            page = (int) Math.min(len - at, PAGE);
          }
        }
      } catch (IOException e) {
        throw BeamsaveException.io("cannot write", show(piece.path()), e);
      }
    }

    /** The page a hole is made of, at least, on the filesystems beamsave restores to. */
    private static final int PAGE = 4096;

    private static final byte[] ZERO_PAGE = new byte[PAGE];

    private static boolean zeros(byte[] b, int off, int len) {
      return len > 0 && java.util.Arrays.mismatch(b, off, off + len, ZERO_PAGE, 0, len) < 0;
    }

    /** Finishes the file of a piece that is all of it, now that it is written and checked. */
    void pieceDone(ShardReader.FileExtent piece) {
      ShardReader.Whole w = piece.whole();
      if (w == null) {
        return;
      }
      PathBytes path = piece.path();
      try {
        // A file of zero blocks only has had nothing written: it is made here.
        OpenFile f = openFor(piece);
        if (openEnd < w.size()) {
          // Zero blocks at its end were not written: they stay a hole (sparse files).
          f.truncate(w.size());
        }
        FileStat s = target.setMetadata(f, w.uid(), w.gid(), w.mode(),
            w.mtimeSeconds(), w.mtimeNanos(), asRoot);
        if (s.mtimeSeconds() != w.mtimeSeconds() || s.mtimeNanos() != w.mtimeNanos()) {
          clamped++;
        }
        closeFile();
        Dir dir = tree.dir(path.bytes(), Math.max(0, path.lastSlash()));
        dir.rename(target.temporaryName(path), path.fileName());
        FileStat there = dir.stat(path.fileName());
        if (!there.isRegularFile() || !there.sameFile(s)) {
          throw new BeamsaveException("refusing to finish " + show(path) + ": the file written"
              + " for it was replaced during the restore");
        }
      } catch (IOException e) {
        throw BeamsaveException.io("cannot restore", show(path), e);
      }
    }

    private OpenFile openFor(ShardReader.FileExtent piece) throws IOException {
      PathBytes path = piece.path();
      if (path.equals(openPath)) {
        return open;
      }
      closeFile();
      Dir dir = tree.dir(path.bytes(), Math.max(0, path.lastSlash()));
      byte[] temp = target.temporaryName(path);
      OpenFile f;
      if (piece.whole() != null) {
        f = createOrReopen(dir, temp, path, piece.whole().uid());
      } else {
        f = dir.openWrite(temp);
        FileStat s = f.stat();
        if (!s.isRegularFile() || s.inode() != piece.fileId()) {
          f.close();
          throw new BeamsaveException("refusing to write " + show(path) + ": the file created"
              + " for it was replaced during the restore");
        }
      }
      open = f;
      openPath = path;
      openEnd = 0;
      return f;
    }

    /**
     * Creates the temporary file of {@code path}. One an earlier run of this task left (a runner
     * may run a task again) is removed first if it is plainly that: a regular file with one link,
     * of this user or, as root, of the owner the file is restored to. Anything else by that name
     * (a hard link to a file elsewhere, someone else's file) is refused and left alone.
     */
    private OpenFile createOrReopen(Dir dir, byte[] temp, PathBytes path, int owner)
        throws IOException {
      try {
        return dir.create(temp, 0600);
      } catch (FileAlreadyExistsException exists) {
        FileStat s = dir.stat(temp);
        boolean ours = s.uid() == Dir.effectiveUid() || asRoot && s.uid() == owner;
        if (!s.isRegularFile() || s.links() != 1 || !ours) {
          throw new BeamsaveException("refusing to write " + show(path) + ": its temporary"
              + " file was made by someone else");
        }
        dir.delete(temp);
        return dir.create(temp, 0600);
      }
    }

    private String show(PathBytes path) {
      return target.path() + "/" + path;
    }

    private void closeFile() throws IOException {
      if (open != null) {
        open.close();
        open = null;
        openPath = null;
      }
    }

    @Override
    public void close() throws IOException {
      try {
        closeFile();
        tree.close();
      } finally {
        tree.root().close();
      }
    }
  }
}

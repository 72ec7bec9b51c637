package io.beamsave.transforms.read;

import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.image.block.DamagedDataException;
import io.beamsave.transforms.run.LiveProgress;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
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
 * <p>Counters: {@code bytesChecked}, {@code mtimesClamped}, {@code piecesDamaged}.
 */
public final class ReadShards extends PTransform<PCollection<ReadTask>, PCollection<Long>> {
  private final RestoreTarget target;
  private final S3Settings store;
  private final Map<String, ImageKey> keys;
  private final Map<String, String> tags;
  private final boolean skipDamaged;

  private ReadShards(RestoreTarget target, S3Settings store, Map<String, ImageKey> keys,
      Map<String, String> tags, boolean skipDamaged) {
    this.target = target;
    this.store = store;
    this.keys = Map.copyOf(keys);
    this.tags = Map.copyOf(tags);
    this.skipDamaged = skipDamaged;
  }

  /**
   * Checks the pieces of each task's image (a path, or {@code s3://} read with {@code store})
   * and writes nothing.
   */
  public static ReadShards verify(S3Settings store) {
    return new ReadShards(null, store, Map.of(), Map.of(), false);
  }

  /** Restores the pieces of each task's image into their files under {@code target}. */
  public static ReadShards restoreTo(RestoreTarget target, S3Settings store) {
    return new ReadShards(target, store, Map.of(), Map.of(), false);
  }

  /**
   * The same, reading the encrypted images among the tasks' with these keys, by location (as
   * {@link io.beamsave.transforms.read.ImageChain#keys} gives them).
   */
  public ReadShards withKeys(Map<String, ImageKey> imageKeys) {
    return new ReadShards(target, store, imageKeys, tags, skipDamaged);
  }

  /**
   * The same, each image read only if it still is the one the driver read ({@link
   * io.beamsave.transforms.read.ImageChain#tags}): one replaced meanwhile fails as replaced.
   */
  public ReadShards withTags(Map<String, String> imageTags) {
    return new ReadShards(target, store, keys, imageTags, skipDamaged);
  }

  /**
   * The same, a restore going on past a file whose bytes do not read back as saved ({@code
   * --skip-damaged}): what was written of it is removed, and it is recorded at the target's top
   * for the driver ({@link RestoreTarget#damageLogName}), which leaves it out.
   */
  public ReadShards withSkipDamaged(boolean skip) {
    return new ReadShards(target, store, keys, tags, skip);
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
    private final Counter piecesDamaged = StageMetrics.counter(StageMetrics.PIECES_DAMAGED);
    private final boolean skipDamaged;
    private final StageMetrics stage;

    /** A chain's images are read by the same workers. */
    private transient ChainReaders images;

    ReadShardFn(ReadShards spec) {
      this.target = spec.target;
      this.store = spec.store;
      this.keys = spec.keys;
      this.tags = spec.tags;
      this.skipDamaged = spec.skipDamaged && spec.target != null;
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

              @Override
              public boolean damaged(ShardReader.FileExtent piece,
                  DamagedDataException damage) throws IOException {
                if (!skipDamaged) {
                  return false;
                }
                files.damaged(piece, damage);
                piecesDamaged.inc();
                return true;
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
}

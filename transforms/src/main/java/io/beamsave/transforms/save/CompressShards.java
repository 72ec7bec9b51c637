package io.beamsave.transforms.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.CodecId;
import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.fs.SymlinkException;
import io.beamsave.transforms.image.block.BlockBuffer;
import io.beamsave.transforms.image.block.BlockEncoder;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.ExtentDigest;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.RangeDigest;
import io.beamsave.transforms.image.catalog.Ranges;
import io.beamsave.transforms.run.LiveProgress;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.shard.ShardPlanner;
import io.beamsave.transforms.sink.ImageSink;
import io.beamsave.transforms.walk.Unreadable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;

/**
 * Reads each shard's file pieces, cuts them into checksummed blocks of the chosen codec, and
 * hands the shard to the library's {@link ImageSink} as soon as it is complete; emits a {@link
 * ShardResult} (where it landed, its lengths and digests) keyed by library. Only these results,
 * never the bytes, go on through the pipeline, and every byte is written once.
 *
 * <p>Files are opened through directory handles from the library root, by their names' bytes,
 * without following a link. A file whose size, mtime or ctime, once read, differs from the
 * listing, that is no longer the listed inode, or that ends early, has changed during the save:
 * that fails the shard, naming the file, unless the spec allows changing files, in which case
 * the bytes read are kept (a short file padded with zeros) and the file is reported changed. A
 * file that cannot be opened or read fails the shard, naming the file and the cause, unless the
 * spec skips unreadable files: then the rest of its bytes are zeros and it is reported unreadable
 * (the catalog flags it, and restore leaves it out).
 *
 * <p>Counters: {@code bytesRead}, {@code bytesStaged}, {@code shardsWritten}, {@code
 * blocksStoredRaw}, {@code bytesStoredRaw}, {@code filesChanged}.
 */
public final class CompressShards
    extends PTransform<PCollection<ShardTask>, PCollection<KV<String, ShardResult>>> {
  private final SaveSpec spec;

  private CompressShards(SaveSpec spec) {
    this.spec = spec;
  }

  public static CompressShards of(SaveSpec spec) {
    return new CompressShards(spec);
  }

  @Override
  public PCollection<KV<String, ShardResult>> expand(PCollection<ShardTask> tasks) {
    return tasks
        .apply("Compress", ParDo.of(new CompressShardFn(spec)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), ShardResult.CODER));
  }

  static final class CompressShardFn extends DoFn<ShardTask, KV<String, ShardResult>> {
    private final SaveSpec spec;
    private final Counter bytesRead;
    private final Counter bytesStaged = StageMetrics.counter(StageMetrics.BYTES_STAGED);
    private final Counter shardsWritten = StageMetrics.counter(StageMetrics.SHARDS_WRITTEN);
    private final Counter blocksStoredRaw = StageMetrics.counter(StageMetrics.BLOCKS_STORED_RAW);
    private final Counter bytesStoredRaw = StageMetrics.counter(StageMetrics.BYTES_STORED_RAW);
    private final Counter filesChanged = StageMetrics.counter(StageMetrics.FILES_CHANGED);
    private final StageMetrics stage = StageMetrics.of("compress");

    private transient BlockEncoder encoder;
    private transient ExtentDigest digest;
    /** The range digests of the shard's pieces that record them, and the range being read. */
    private transient RangeDigest.Hasher rangeDigest;
    private transient java.io.ByteArrayOutputStream rangeDigests;
    private transient long rangeLeft;
    private transient long rangeEnd;
    private transient long rangeFileSize;
    private transient byte[] block;
    private transient BlockBuffer shardBytes;
    /** Per library, its root and the directories of the last file read, open. */
    private transient Map<String, Beneath> trees;
    private transient java.util.concurrent.atomic.LongAdder liveBytes;
    private transient java.util.concurrent.atomic.LongAdder liveFiles;

    CompressShardFn(SaveSpec spec) {
      this(spec, true);
    }

    /**
     * {@code planned}: whether the bytes read count against the bytes planned, which the
     * progress measures; {@link LateFiles} are read beyond the plan.
     */
    CompressShardFn(SaveSpec spec, boolean planned) {
      this.spec = spec;
      this.planned = planned;
      bytesRead = StageMetrics.counter(planned ? StageMetrics.BYTES_READ : LATE_BYTES_READ);
    }

    private static final String LATE_BYTES_READ = "lateBytesRead";
    private final boolean planned;

    @Setup
    public void setup() {
      encoder = new BlockEncoder(spec.codec(), spec.blockSize());
      digest = new ExtentDigest();
      rangeDigests = new java.io.ByteArrayOutputStream();
      block = new byte[spec.blockSize()];
      // A whole shard is held in memory until it is appended; sized for each task's shard when
      // it comes (a small library's one shard is far below the shard size).
      shardBytes = new BlockBuffer(1 << 16);
      trees = new HashMap<>();
    }

    @Teardown
    public void teardown() {
      if (trees != null) {
        for (Beneath t : trees.values()) {
          try {
            t.close();
            t.root().close();
          } catch (IOException ignored) {
            // Read-only handles: nothing to lose.
          }
        }
      }
      // A failed run's workers are torn down while others may still compress (the
      // DirectRunner): a codec context in use refuses to close, and is freed with its object.
      try {
        if (encoder != null) {
          encoder.close();
        }
        if (digest != null) {
          digest.close();
        }
      } catch (RuntimeException inUse) {
        // Nothing was left unwritten: the shard it was for fails or was written.
      }
    }

    @ProcessElement
    public void process(@Element ShardTask task, OutputReceiver<KV<String, ShardResult>> out,
        org.apache.beam.sdk.options.PipelineOptions options) throws IOException {
      stage.started();
      SaveSpec.Library lib = spec.library(task.library());
      out.output(KV.of(task.library(), compress(task, tree(lib), options.getJobName())));
      stage.finished();
    }

    /**
     * Reads {@code task}'s pieces beneath {@code tree}, hands the shard to its library's sink
     * and says what it made; for {@link LateFiles}, also outside a pipeline's step, between
     * {@link #setup} and {@link #teardown}.
     */
    ShardResult compress(ShardTask task, Beneath tree, String jobName) throws IOException {
      if (liveBytes == null) {
        liveBytes = planned ? LiveProgress.counter(jobName, StageMetrics.BYTES_READ)
            : new java.util.concurrent.atomic.LongAdder();
        liveFiles = LiveProgress.counter(jobName, LiveProgress.FILES_DONE);
      }
      SaveSpec.Library lib = spec.library(task.library());
      lib.sink().checkWritable();
      ShardWriter w = new ShardWriter();
      shardBytes.reset();
      w.sink = shardBytes;
      // Each copy of a shard (a task may run twice) is sealed under a key of its own.
      ImageKey imageKey = lib.sink().key();
      byte[] shardKey = imageKey == null ? null : ImageKey.newBlockKey();
      encoder.sealWith(shardKey);
      List<ShardTask.FileRange> pieces = task.pieces(spec);
      long raw = 0;
      for (ShardTask.FileRange p : pieces) {
        raw += p.length();
      }
      // Its raw size, plus one header per block (blocks never grow, a block that would is
      // stored raw).
      long blocks = (raw + spec.blockSize() - 1) / spec.blockSize();
      shardBytes.ensure(Math.toIntExact(raw + blocks * (ImageFormat.BLOCK_HEADER_SIZE
          + (imageKey != null ? BlockSealer.OVERHEAD : 0))));
      byte[] digests = new byte[Math.multiplyExact(pieces.size(), ImageFormat.DIGEST_SIZE)];
      int piece = 0;
      List<PathBytes> changed = new ArrayList<>();
      List<Unreadable> unreadable = new ArrayList<>();
      rangeDigests.reset();
      for (ShardTask.FileRange p : pieces) {
        digest.reset();
        startRanges(p);
        if (readPiece(tree, p, w, unreadable)) {
          changed.add(p.path());
        }
        System.arraycopy(digest.digest(), 0, digests, piece++ * ImageFormat.DIGEST_SIZE,
            ImageFormat.DIGEST_SIZE);
        if (p.fileOffset() + p.length() >= p.fileSize()) {
          liveFiles.increment();
        }
      }
      w.flushBlock();
      // A library without file data has one empty shard, which goes nowhere and is dropped.
      ImageSink.Copy copy = null;
      if (shardBytes.size() > 0) {
        try {
          copy = lib.sink().writeShard(task.shard(), shardBytes.array(), shardBytes.size());
        } catch (IOException e) {
          throw BeamsaveException.io("cannot write shard " + task.shard() + " of",
              lib.destination(), e);
        }
      }
      shardsWritten.inc();
      String stagedDigests = null;
      if (pieces.size() > ShardTask.INLINE_PIECES) {
        // Named for this attempt: a task run twice may have read other bytes, and the result
        // kept must find its own digests.
        stagedDigests = Staging.digestsName(task.library(), task.shard());
        Staging.write(spec, task.library(), stagedDigests, digests, digests.length);
        digests = new byte[0];
      }
      return new ShardResult(task.shard(), copy, w.raw, w.stored, w.lengths(), digests,
          stagedDigests, changed, unreadable,
          shardKey == null ? null : imageKey.wrap(shardKey, ImageKey.SHARD),
          rangeDigests.toByteArray());
    }

    /** Sets out to digest {@code p}'s ranges as it is read, if it is a piece that has them. */
    private void startRanges(ShardTask.FileRange p) {
      rangeLeft = 0;
      if (ShardPlanner.digestsRanges(p.fileSize(), p.fileOffset(), p.length())) {
        if (rangeDigest == null) {
          // Made on the first large file: a save of small files never loads it.
          rangeDigest = new RangeDigest.Hasher();
        }
        // A shard that failed part-way in this worker may have left a range begun.
        rangeDigest.reset();
        rangeFileSize = p.fileSize();
        rangeEnd = p.fileOffset();
        nextRange();
      }
    }

    private void nextRange() {
      long start = rangeEnd;
      rangeEnd = Math.min(start + (1L << Ranges.DEFAULT_SHIFT), rangeFileSize);
      rangeLeft = rangeEnd - start;
    }

    /** Digests {@code n} bytes of the piece at {@code off} of the block into its ranges. */
    private void digestRanges(int off, int n) {
      while (n > 0 && rangeLeft > 0) {
        int k = (int) Math.min(n, rangeLeft);
        rangeDigest.update(block, off, k);
        off += k;
        n -= k;
        rangeLeft -= k;
        if (rangeLeft == 0) {
          rangeDigests.writeBytes(rangeDigest.digest());
          if (rangeEnd < rangeFileSize) {
            nextRange();
          }
        }
      }
    }

    private Beneath tree(SaveSpec.Library lib) {
      Beneath t = trees.get(lib.name());
      if (t == null) {
        try {
          t = new Beneath(Dir.open(lib.readPath(), lib.rootPath()));
        } catch (IOException e) {
          throw BeamsaveException.io("cannot open library", lib.rootPath(), e);
        }
        trees.put(lib.name(), t);
      }
      return t;
    }

    /** Reads one piece into the block stream; returns whether the file changed meanwhile. */
    private static String shown(Beneath tree, ShardTask.FileRange p) {
      return tree.root().name() + "/" + p.path();
    }

    /**
     * Reads one piece into the block stream; returns whether the file changed meanwhile. A file
     * that cannot be read is added to {@code unreadable} when the spec skips such files.
     */
    private boolean readPiece(Beneath tree, ShardTask.FileRange p, ShardWriter w,
        List<Unreadable> unreadable) throws IOException {
      byte[] path = p.path().bytes();
      int slash = p.path().lastSlash();
      boolean changed = false;
      boolean unread = false;
      long left = p.length();
      OpenFile f = null;
      try {
        f = tree.dir(path, Math.max(slash, 0)).openRead(p.path().fileName());
      } catch (NoSuchFileException | NotDirectoryException | SymlinkException gone) {
        changed = true;
      } catch (IOException e) {
        unread = cannotRead(tree, p, e, unreadable);
      }
      if (f != null) {
        try (OpenFile in = f) {
          FileStat before = in.stat();
          changed = !sameAsListed(before, p);
          // What is there now is read if it is a file: with --allow-changing, a file replaced
          // since the listing (an editor's atomic save) keeps its new bytes, not zeros.
          long pos = p.fileOffset();
          long end = pos + left;
          // A file with fewer blocks than its size has holes: they are not read, but known.
          boolean sparse = before.blocks() * 512 < before.size();
          long dataEnd = sparse ? pos : end;
          while (left > 0 && before.isRegularFile()) {
            if (pos >= dataEnd) {
              long data = in.nextData(pos, end);
              if (data > pos) {
                pad(w, data - pos);
                left -= data - pos;
                pos = data;
                continue;
              }
              dataEnd = in.nextHole(pos, end);
            }
            int want = (int) Math.min(Math.min(block.length - w.fill, left), dataEnd - pos);
            int n = in.read(pos, block, w.fill, want);
            if (n == 0) {
              changed = true;
              break;
            }
            add(w, n);
            pos += n;
            left -= n;
          }
          // Comparing with the listing after the read also catches changes made during it.
          changed |= !sameAsListed(in.stat(), p);
        } catch (IOException e) {
          unread = cannotRead(tree, p, e, unreadable);
        }
      }
      if (unread) {
        // What was read stays (the planned bytes must all be there); restore leaves it out.
        changed = false;
        pad(w, left);
        return false;
      }
      if (changed) {
        filesChanged.inc();
        if (!spec.allowChanging()) {
          throw new BeamsaveException(
              "file changed while it was being saved: " + shown(tree, p)
                  + " (use --allow-changing to keep what was read)");
        }
        pad(w, left);
      }
      return changed;
    }

    /** Fails on {@code e}, naming the file; or, skipping unreadable files, records it. */
    private boolean cannotRead(Beneath tree, ShardTask.FileRange p, IOException e,
        List<Unreadable> unreadable) {
      if (!spec.skipUnreadable()) {
        throw BeamsaveException.io("cannot read", shown(tree, p), e);
      }
      unreadable.add(new Unreadable(p.path(), BeamsaveException.describe(e)));
      return true;
    }

    private void pad(ShardWriter w, long left) throws IOException {
      while (left > 0) {
        int n = (int) Math.min(block.length - w.fill, left);
        Arrays.fill(block, w.fill, w.fill + n, (byte) 0);
        add(w, n);
        left -= n;
      }
    }

    private void add(ShardWriter w, int n) throws IOException {
      digest.update(block, w.fill, n);
      digestRanges(w.fill, n);
      w.fill += n;
      w.raw += n;
      bytesRead.inc(n);
      liveBytes.add(n);
      if (w.fill == block.length) {
        w.flushBlock();
      }
    }


    /** The block being filled and what was written of the shard so far. */
    private final class ShardWriter {
      OutputStream sink;
      int fill;
      long raw;
      long stored;
      private int[] lengths = new int[16];
      private int count;

      void flushBlock() throws IOException {
        if (fill == 0) {
          return;
        }
        int len = encoder.write(block, fill, sink);
        if (encoder.lastCodec() == CodecId.STORED) {
          blocksStoredRaw.inc();
          if (spec.codec().id() != CodecId.STORED) {
            bytesStoredRaw.inc(fill);
          }
        }
        if (count == lengths.length) {
          lengths = Arrays.copyOf(lengths, count * 2);
        }
        lengths[count++] = len;
        stored += len;
        bytesStaged.inc(len);
        fill = 0;
      }

      int[] lengths() {
        return Arrays.copyOf(lengths, count);
      }
    }
  }

  /** Whether {@code s} is the file the listing saw, unchanged (as GNU tar checks it). */
  static boolean sameAsListed(FileStat s, ShardTask.FileRange p) {
    return s.isRegularFile()
        && s.inode() == p.inode()
        && s.size() == p.fileSize()
        && s.mtimeSeconds() == p.mtimeSeconds()
        && s.mtimeNanos() == p.mtimeNanos()
        && s.ctimeSeconds() == p.ctimeSeconds()
        && s.ctimeNanos() == p.ctimeNanos();
  }

  /** Whether {@code s} is the file {@code listed} describes, unchanged. */
  static boolean sameAsListed(FileStat s, Entry listed) {
    return sameAsListed(s, ShardTask.FileRange.of(listed, 0, listed.size()));
  }
}

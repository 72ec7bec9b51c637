package io.beamsave.transforms.io;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.store.ImageSources;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.PathBytes;
import java.io.IOException;
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
 * <p>A restore writes only into the files the caller created beforehand under their temporary
 * names ({@link RestoreTarget#temporaryName}), each reached through directory handles from the
 * target without following a link and checked to be the very file created (its inode), so that
 * nothing is written outside the target even if its directories are swapped for links
 * meanwhile. The caller renames them, and creates the image's symlinks, afterwards. Zero blocks
 * are skipped, leaving holes.
 *
 * <p>Counter: {@code bytesChecked}.
 */
public final class ReadShards extends PTransform<PCollection<ReadTask>, PCollection<Long>> {
  private final String image;
  private final int blockSize;
  private final RestoreTarget target;
  private final S3Settings store;

  private ReadShards(String image, int blockSize, RestoreTarget target, S3Settings store) {
    this.image = image;
    this.blockSize = blockSize;
    this.target = target;
    this.store = store;
  }

  /**
   * Checks the given pieces of {@code image} (a path, or {@code s3://} read with {@code store})
   * and writes nothing.
   */
  public static ReadShards verify(String image, int blockSize, S3Settings store) {
    return new ReadShards(image, blockSize, null, store);
  }

  /** Restores the given pieces of {@code image} into the pre-created files under {@code target}. */
  public static ReadShards restoreTo(
      String image, int blockSize, RestoreTarget target, S3Settings store) {
    return new ReadShards(image, blockSize, target, store);
  }

  @Override
  public PCollection<Long> expand(PCollection<ReadTask> tasks) {
    return tasks
        .apply(target == null ? "Verify" : "Restore", ParDo.of(new ReadShardFn(this)))
        .setCoder(VarLongCoder.of());
  }

  static final class ReadShardFn extends DoFn<ReadTask, Long> {
    private final String image;
    private final int blockSize;
    private final RestoreTarget target;
    private final S3Settings store;
    private final Counter bytesChecked = StageMetrics.counter(StageMetrics.BYTES_CHECKED);
    private final StageMetrics stage;

    private transient ShardReader reader;
    private transient ImageSource imageChannel;

    ReadShardFn(ReadShards spec) {
      this.image = spec.image;
      this.blockSize = spec.blockSize;
      this.target = spec.target;
      this.store = spec.store;
      this.stage = StageMetrics.of(target == null ? "verify" : "restore");
    }

    @Setup
    public void setup() throws IOException {
      reader = new ShardReader(blockSize);
      imageChannel = ImageSources.open(image, store);
    }

    @Teardown
    public void teardown() throws IOException {
      if (reader != null) {
        reader.close();
      }
      if (imageChannel != null) {
        imageChannel.close();
      }
    }

    @ProcessElement
    public void process(@Element ReadTask task, OutputReceiver<Long> out) throws IOException {
      stage.started();
      long[] checked = {0};
      try (TargetFiles files = target == null ? null : new TargetFiles(target)) {
        reader.read(
            imageChannel,
            image,
            task.shard(),
            task.info(),
            task.pieces(),
            (piece, fileOffset, buf, off, len, zero) -> {
              checked[0] += len;
              bytesChecked.inc(len);
              if (files != null && !zero) {
                files.write(piece, fileOffset, buf, off, len);
              }
            });
      }
      out.output(checked[0]);
      stage.finished();
    }
  }

  /** Writes into the files a restore created, keeping the last one and its directory open. */
  private static final class TargetFiles implements AutoCloseable {
    private final RestoreTarget target;
    private final Beneath tree;
    private PathBytes openPath;
    private OpenFile open;

    TargetFiles(RestoreTarget target) {
      this.target = target;
      this.tree = new Beneath(target.openRoot());
    }

    void write(ShardReader.Piece piece, long offset, byte[] buf, int off, int len) {
      PathBytes path = piece.path();
      String file = target.path() + "/" + path;
      try {
        if (!path.equals(openPath)) {
          closeFile();
          OpenFile f =
              tree.dir(path.bytes(), Math.max(0, path.lastSlash()))
                  .openWrite(target.temporaryName(path));
          FileStat s = f.stat();
          if (!s.isRegularFile() || s.inode() != piece.fileId()) {
            f.close();
            throw new BeamsaveException("refusing to write " + file + ": the file created for it"
                + " was replaced during the restore");
          }
          open = f;
          openPath = path;
        }
        open.write(offset, buf, off, len);
      } catch (IOException e) {
        throw BeamsaveException.io("cannot write", file, e);
      }
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

package io.beamsave.transforms.io;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.store.ImageSources;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 * <p>A restore writes only into regular files that already exist under the target, opened
 * without following links: the caller creates them (after checking every path) beforehand, and
 * creates the image's symlinks only afterwards. Zero blocks are skipped, leaving holes.
 *
 * <p>Counter: {@code bytesChecked}.
 */
public final class ReadShards extends PTransform<PCollection<ReadTask>, PCollection<Long>> {
  private final String image;
  private final int blockSize;
  private final String target;
  private final S3Settings store;

  private ReadShards(String image, int blockSize, String target, S3Settings store) {
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
  public static ReadShards restoreTo(String image, int blockSize, String target, S3Settings store) {
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
    private final String target;
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
      try (TargetFiles files = target == null ? null : new TargetFiles(Path.of(target))) {
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
                files.write(piece.path(), fileOffset, buf, off, len);
              }
            });
      }
      out.output(checked[0]);
      stage.finished();
    }
  }

  /** Writes into existing files under a root, keeping the last one open. */
  private static final class TargetFiles implements AutoCloseable {
    private final Path root;
    private String openPath;
    private FileChannel open;

    TargetFiles(Path root) {
      this.root = root;
    }

    void write(String path, long offset, byte[] buf, int off, int len) {
      Path file = root.resolve(path);
      try {
        if (!path.equals(openPath)) {
          close();
          open = FileChannel.open(file, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
          openPath = path;
        }
        ByteBuffer b = ByteBuffer.wrap(buf, off, len);
        long pos = offset;
        while (b.hasRemaining()) {
          pos += open.write(b, pos);
        }
      } catch (IOException e) {
        throw BeamsaveException.io("cannot write", file, e);
      }
    }

    @Override
    public void close() throws IOException {
      if (open != null) {
        open.close();
        open = null;
        openPath = null;
      }
    }
  }
}

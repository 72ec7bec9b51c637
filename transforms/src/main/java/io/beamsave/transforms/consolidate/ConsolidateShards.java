package io.beamsave.transforms.consolidate;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.crypt.BlockSealer;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.image.block.BlockBuffer;
import io.beamsave.transforms.image.block.BlockDecoder;
import io.beamsave.transforms.image.block.BlockEncoder;
import io.beamsave.transforms.image.catalog.ShardInfo;
import io.beamsave.transforms.read.ChainReaders;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.run.LiveProgress;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.save.CompressShards;
import io.beamsave.transforms.save.ShardResult;
import io.beamsave.transforms.sink.ImageSink;
import io.beamsave.transforms.sink.StoreImageSink;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import javax.crypto.spec.SecretKeySpec;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;

/**
 * Makes the shards of a consolidated image ({@link ConsolidateTask}) and hands each to the
 * image's {@link ImageSink}: a copy in the store asks the store to copy the source shard's
 * bytes into the image's upload; a copy reads the source shard's blocks, decodes each to check
 * it (its checksum, its codec's output, its raw length) and writes them as they were; a rewrite
 * reads its pieces through {@link ShardReader} (every block checksum and extent digest checked)
 * and compresses them into new blocks with the image's codec. Emits a {@link ShardResult} per
 * task, keyed by the image, as {@link CompressShards} does.
 *
 * <p>Counters: {@code bytesConsolidated} (raw bytes placed), {@code bytesFetched} (stored bytes
 * of the chain read by the workers), {@code shardsWritten}.
 */
public final class ConsolidateShards
    extends PTransform<PCollection<ConsolidateTask>, PCollection<KV<String, ShardResult>>> {
  /** The key of every result: one image is made. */
  static final String IMAGE = "image";

  private final ImageSink sink;
  private final Codec codec;
  private final int blockSize;
  private final S3Settings s3;
  private final Map<String, ImageKey> keys;
  private final Map<String, String> tags;

  private ConsolidateShards(ImageSink sink, Codec codec, int blockSize, S3Settings s3,
      Map<String, ImageKey> keys, Map<String, String> tags) {
    this.sink = sink;
    this.codec = codec;
    this.blockSize = blockSize;
    this.s3 = s3;
    this.keys = Map.copyOf(keys);
    this.tags = Map.copyOf(tags);
  }

  /**
   * Into {@code sink} (prepared), rewritten blocks of {@code blockSize} compressed with {@code
   * codec}, chain images in object storage read with {@code s3}.
   */
  public static ConsolidateShards into(ImageSink sink, Codec codec, int blockSize, S3Settings s3) {
    if (blockSize < ImageFormat.MIN_BLOCK_SIZE || blockSize > ImageFormat.MAX_BLOCK_SIZE) {
      throw new IllegalArgumentException("block size " + blockSize + " outside "
          + ImageFormat.MIN_BLOCK_SIZE + ".." + ImageFormat.MAX_BLOCK_SIZE);
    }
    return new ConsolidateShards(sink, codec, blockSize, s3, Map.of(), Map.of());
  }

  /** The same, the chain's encrypted images read with these keys, by location. */
  public ConsolidateShards withKeys(Map<String, ImageKey> imageKeys) {
    return new ConsolidateShards(sink, codec, blockSize, s3, imageKeys, tags);
  }

  /**
   * The same, each image of the chain read, and copied in the store, only if it still is the
   * one the driver opened ({@link io.beamsave.transforms.read.ImageChain#tags}).
   */
  public ConsolidateShards withTags(Map<String, String> imageTags) {
    return new ConsolidateShards(sink, codec, blockSize, s3, keys, imageTags);
  }

  @Override
  public PCollection<KV<String, ShardResult>> expand(PCollection<ConsolidateTask> tasks) {
    return tasks
        .apply("Make", ParDo.of(new ConsolidateShardFn(this)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), ShardResult.CODER));
  }

  static final class ConsolidateShardFn extends DoFn<ConsolidateTask, KV<String, ShardResult>> {
    private final ImageSink sink;
    private final Codec codec;
    private final int blockSize;
    private final S3Settings s3;
    private final Map<String, ImageKey> keys;
    private final Map<String, String> tags;
    private final Counter bytesConsolidated =
        StageMetrics.counter(StageMetrics.BYTES_CONSOLIDATED);
    private final Counter bytesFetched = StageMetrics.counter(StageMetrics.BYTES_FETCHED);
    private final Counter bytesFetchedToRewrite =
        StageMetrics.counter(StageMetrics.BYTES_FETCHED_TO_REWRITE);
    private final Counter shardsWritten = StageMetrics.counter(StageMetrics.SHARDS_WRITTEN);
    private final StageMetrics stage = StageMetrics.of("consolidate");

    private transient BlockEncoder encoder;
    private transient BlockDecoder decoder;
    private transient ChainReaders images;
    private transient BlockBuffer shard;
    private transient java.util.concurrent.atomic.LongAdder live;

    ConsolidateShardFn(ConsolidateShards spec) {
      this.sink = spec.sink;
      this.codec = spec.codec;
      this.blockSize = spec.blockSize;
      this.s3 = spec.s3;
      this.keys = spec.keys;
      this.tags = spec.tags;
    }

    @Setup
    public void setup() {
      encoder = new BlockEncoder(codec, blockSize);
      decoder = new BlockDecoder();
      images = new ChainReaders(s3, tags, Counted::new);
      shard = new BlockBuffer(1 << 20);
    }

    @Teardown
    public void teardown() throws IOException {
      if (encoder != null) {
        try {
          encoder.close();
          decoder.close();
        } catch (RuntimeException inUse) {
          // As CompressShards: torn down while another thread still works; freed with it.
        }
        images.close();
      }
    }

    private ImageSource source(String image) throws IOException {
      return images.source(image);
    }

    @ProcessElement
    public void process(@Element ConsolidateTask task, OutputReceiver<KV<String, ShardResult>> out,
        org.apache.beam.sdk.options.PipelineOptions options) throws IOException {
      stage.started();
      sink.checkWritable();
      if (live == null) {
        live = LiveProgress.counter(options.getJobName(), StageMetrics.BYTES_CONSOLIDATED);
      }
      long before = Counted.total();
      ShardResult result = switch (task.kind()) {
        case COPY_IN_STORE -> copyInStore(task);
        case COPY -> copy(task);
        case REWRITE -> rewrite(task);
      };
      long fetched = Counted.total() - before;
      bytesFetched.inc(fetched);
      if (task.kind() == ConsolidateTask.Kind.REWRITE) {
        bytesFetchedToRewrite.inc(fetched);
      }
      bytesConsolidated.inc(result.rawLength());
      live.add(result.rawLength());
      shardsWritten.inc();
      out.output(KV.of(IMAGE, result));
      stage.finished();
    }

    /**
     * The source shard copied by the store, once this worker has read it and checked it as
     * {@link #copy} does: the parts of an upload cannot be read back before it is completed,
     * and completing it makes the image visible. The copy is of the object with the ETag read
     * ({@code x-amz-copy-source-if-match}), so the bytes copied are the bytes checked. This
     * costs a download of the shard; the upload of it is what the store saves.
     */
    private ShardResult copyInStore(ConsolidateTask task) throws IOException {
      ReadTask from = task.source();
      ShardInfo info = from.info();
      ImageSource src = source(from.image());
      checkedCopy(task, src);
      ImageSink.Copy copy = ((StoreImageSink) sink).copyShard(task.shard(), from.image(),
          src.tag(), info.imageOffset(), info.storedLength());
      return result(task.shard(), copy, info.rawLength(), info.storedLength(),
          info.blockLengths(), task.sealedKey());
    }

    /** The source shard's blocks as they are, once every block and piece checked. */
    private ShardResult copy(ConsolidateTask task) throws IOException {
      ReadTask from = task.source();
      ShardInfo info = from.info();
      int pos = checkedCopy(task, source(from.image()));
      ImageSink.Copy copy = write(task.shard(), shard.array(), pos);
      return result(task.shard(), copy, info.rawLength(), pos, info.blockLengths(),
          task.sealedKey());
    }

    /**
     * Reads the task's source shard into {@link #shard}, decodes every block (its checksum, its
     * codec's output, its raw length) and checks the digest of every piece the new image keeps;
     * returns the shard's stored length.
     */
    private int checkedCopy(ConsolidateTask task, ImageSource src) throws IOException {
      ReadTask from = task.source();
      ShardInfo info = from.info();
      shard.reset();
      shard.ensure(Math.toIntExact(info.storedLength()));
      src.willRead(info.imageOffset(), info.storedLength());
      src.read(info.imageOffset(), shard.array(), 0, (int) info.storedLength());
      byte[] raw = new byte[from.blockSize()];
      byte[] block = new byte[ImageFormat.BLOCK_HEADER_SIZE + from.blockSize()
          + BlockSealer.OVERHEAD];
      SecretKeySpec frames = ShardReader.shardKey(keys.get(from.image()), from.image(),
          from.shard(), info);
      int[] lengths = info.blockLengths();
      int pos = 0;
      for (int k = 0; k < lengths.length; k++) {
        String where = from.image() + ": shard " + from.shard() + " block " + k
            + " (image offset " + (info.imageOffset() + pos) + ")";
        if (lengths[k] > block.length || lengths[k] > info.storedLength() - pos) {
          throw new BeamsaveException(where + ": lies outside the shard");
        }
        System.arraycopy(shard.array(), pos, block, 0, lengths[k]);
        int expected = (int) Math.min(from.blockSize(), info.rawLength() - (long) k * from.blockSize());
        if (frames != null) {
          decoder.decodeSealed(frames, k, block, lengths[k], raw, 0, expected, where);
        } else {
          decoder.decode(block, lengths[k], raw, expected, where);
        }
        pos += lengths[k];
      }
      images.reader(from.blockSize()).read(
          new HeldShard(src.name(), info.imageOffset(), shard.array(), pos), from.image(),
          keys.get(from.image()), from.shard(), info, from.pieces(),
          (piece, fileOffset, buf, off, len, zero) -> { });
      return pos;
    }

    /** The task's pieces, read and checked, compressed into new blocks. */
    private ShardResult rewrite(ConsolidateTask task) throws IOException {
      shard.reset();
      byte[] shardKey = sink.key() == null ? null : ImageKey.newBlockKey();
      encoder.sealWith(shardKey);
      byte[] block = new byte[blockSize];
      int[] fill = {0};
      long[] raw = {0};
      java.util.List<Integer> lengths = new java.util.ArrayList<>();
      ShardReader.Sink into = new ShardReader.Sink() {
        @Override
        public void write(ShardReader.FileExtent piece, long fileOffset, byte[] buf, int off, int len,
            boolean zero) throws IOException {
          while (len > 0) {
            int n = Math.min(len, block.length - fill[0]);
            System.arraycopy(buf, off, block, fill[0], n);
            fill[0] += n;
            off += n;
            len -= n;
            raw[0] += n;
            if (fill[0] == block.length) {
              lengths.add(encoder.write(block, fill[0], shard));
              fill[0] = 0;
            }
          }
        }
      };
      for (ReadTask r : task.reads()) {
        ShardReader reader = images.reader(r.blockSize());
        reader.read(source(r.image()), r.image(), keys.get(r.image()), r.shard(), r.info(),
            r.pieces(), into);
      }
      if (fill[0] > 0) {
        lengths.add(encoder.write(block, fill[0], shard));
      }
      int[] blocks = lengths.stream().mapToInt(Integer::intValue).toArray();
      ImageSink.Copy copy = write(task.shard(), shard.array(), shard.size());
      return result(task.shard(), copy, raw[0], shard.size(), blocks,
          shardKey == null ? null : sink.key().wrap(shardKey, ImageKey.SHARD));
    }

    private ImageSink.Copy write(int index, byte[] blocks, int len) {
      try {
        return sink.writeShard(index, blocks, len);
      } catch (IOException e) {
        throw BeamsaveException.io("cannot write shard " + index + " of", sink.location(), e);
      }
    }

    private static ShardResult result(
        int shard, ImageSink.Copy copy, long raw, long stored, int[] blocks, byte[] sealedKey) {
      return new ShardResult(shard, copy, raw, stored, blocks, new byte[0], null, List.of(),
          List.of(), sealedKey);
    }
  }

  /** A shard already read into memory, as the source its blocks lie in. */
  private record HeldShard(String name, long offset, byte[] bytes, int length)
      implements ImageSource {
    @Override
    public long size() {
      return offset + length;
    }

    @Override
    public void read(long pos, byte[] buf, int off, int len) throws IOException {
      if (pos < offset || pos - offset > length - len) {
        throw new io.beamsave.transforms.format.ImageException(name + ": a block lies outside"
            + " its shard at offset " + pos);
      }
      System.arraycopy(bytes, (int) (pos - offset), buf, off, len);
    }

    @Override
    public void close() {}
  }

  /** A source whose reads this thread counts, as bytes fetched by the task it runs. */
  private static final class Counted implements ImageSource {
    private static final ThreadLocal<long[]> READ = ThreadLocal.withInitial(() -> new long[1]);

    private final ImageSource in;

    Counted(ImageSource in) {
      this.in = in;
    }

    /** Bytes this thread has read from any source. */
    static long total() {
      return READ.get()[0];
    }

    @Override
    public String name() {
      return in.name();
    }

    @Override
    public long size() throws IOException {
      return in.size();
    }

    @Override
    public void read(long pos, byte[] buf, int off, int len) throws IOException {
      in.read(pos, buf, off, len);
      READ.get()[0] += len;
    }

    @Override
    public void willRead(long pos, long len) {
      in.willRead(pos, len);
    }

    @Override
    public String tag() {
      return in.tag();
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }
}

package io.beamsave.transforms.codec;

import java.util.Arrays;

/**
 * {@code auto[:MBPS]}: chooses per block how to compress, so that neither the cores nor the link
 * the image will cross wait for the other (docs/auto-codec.md explains the model).
 *
 * <ul>
 *   <li><b>Incompressible data is stored raw.</b> Before a block is compressed, a sample of it
 *       ({@value #SAMPLE} bytes in {@value #SAMPLES} pieces spread over the block) is compressed
 *       with zstd level 1; when that saves less than {@value #MIN_SAVING_PERCENT} %, the block
 *       skips the current level and goes through zstd level 1 only, which keeps what little
 *       does compress (a text file packed between archives) and is stored raw when nothing
 *       does. The trial costs a few percent of compressing the block.
 *   <li><b>The level follows the measured rates.</b> Each compressor keeps, for the levels of a
 *       ladder from lz4 through zstd 1..19, the measured seconds per raw byte and the measured
 *       ratio on the blocks it compressed. The cores turn raw bytes into image bytes at {@code
 *       cores / secondsPerByte}; the link drains raw bytes at {@code linkBytesPerSecond *
 *       ratio}. When the cores are more than {@value #CLIMB_ABOVE}x faster, they would wait for
 *       the link: the compressor climbs one level (smaller output, slower). When they are less
 *       than {@value #DESCEND_BELOW}x as fast, the link would soon wait: it steps down. The level
 *       settles where the cores stay just ahead of the link. A move to a neighbour already
 *       measured is made only if the model, max(seconds per byte / cores, 1 / (link × ratio)),
 *       says the neighbour is faster end to end (re-checked every {@value #REPROBE_BLOCKS}
 *       blocks, as data changes).
 *   <li><b>Without a link speed</b> (a local save: the disk is the only consumer), nothing waits
 *       on the output, so the fastest level that compresses (lz4) is kept.
 * </ul>
 *
 * <p>Blocks carry the id of the codec that actually produced them (lz4, zstd, or stored), so
 * readers need nothing special to decode an {@code auto} image.
 */
final class AutoCodec implements Codec {
  static final int SAMPLE = 32 << 10;
  /** The sample is taken in this many pieces spread over the block. */
  static final int SAMPLES = 4;
  static final int MIN_SAVING_PERCENT = 3;
  /**
   * The band the cores' rate is kept in, as a multiple of the link's: a little ahead of the link,
   * so that the link (the dearer resource once it is the bottleneck) never waits for data, and
   * wide enough that measurement noise does not flap the level.
   */
  static final double CLIMB_ABOVE = 1.5;
  static final double DESCEND_BELOW = 1.1;
  /** Blocks compressed at a level before its measurements count for a move. */
  static final int SETTLE_BLOCKS = 3;
  /** Blocks at a level after which a neighbour measured as no better is tried again. */
  static final int REPROBE_BLOCKS = 32;
  /** Index 0 is lz4; the rest are zstd levels, each markedly slower than the one before. */
  static final int[] ZSTD_LADDER = {0, 1, 3, 5, 7, 9, 12, 15, 17, 19};

  private final int linkMbps;

  /** {@code linkMbps} 0: no link, the output is not waited on. */
  AutoCodec(int linkMbps) {
    if (linkMbps < 0) {
      throw new IllegalArgumentException("auto: link speed must not be negative");
    }
    this.linkMbps = linkMbps;
  }

  /**
   * The id written when the image as a whole is described; every block records its own codec,
   * which is what readers use.
   */
  @Override
  public CodecId id() {
    return CodecId.ZSTD;
  }

  @Override
  public String spec() {
    return linkMbps == 0 ? "auto" : "auto:" + linkMbps;
  }

  @Override
  public Compressor newCompressor() {
    return new Adaptive(linkMbps * 1e6 / 8, Runtime.getRuntime().availableProcessors());
  }

  /** Blocks are decoded by their own codec id; see {@link Codecs.DecompressorSet}. */
  @Override
  public Decompressor newDecompressor() {
    return new ZstdCodec(Codecs.DEFAULT_ZSTD_LEVEL).newDecompressor();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AutoCodec a && a.linkMbps == linkMbps;
  }

  @Override
  public int hashCode() {
    return 31 * 7 + linkMbps;
  }

  /** The per-thread controller; see the class comment. */
  static final class Adaptive implements Compressor {
    private final double linkBytesPerSecond;
    private final int cores;
    private final Compressor[] byLevel = new Compressor[ZSTD_LADDER.length];
    private final double[] secondsPerByte = new double[ZSTD_LADDER.length];
    private final double[] ratio = new double[ZSTD_LADDER.length];
    private final Compressor trial = new ZstdCodec(1).newCompressor();
    private final byte[] trialOut = new byte[SAMPLE];
    private int level;
    private int blocksAtLevel;
    private CodecId last;

    Adaptive(double linkBytesPerSecond, int cores) {
      this.linkBytesPerSecond = linkBytesPerSecond;
      this.cores = Math.max(1, cores);
      // Start in the middle of the range that keeps up with common links; measurements move it.
      this.level = linkBytesPerSecond > 0 ? 2 : 0;
    }

    @Override
    public int compress(byte[] src, int so, int sl, byte[] dst, int dOff, int cap) {
      // lz4 gives up on incompressible input about as fast as the trial would.
      if (level > 0 && sl > 2 * SAMPLE && !worthCompressing(src, so, sl)) {
        // Mostly incompressible; the fastest zstd still catches the odd text file packed into
        // the same block, and gives up quickly on the rest. Not learnt from: it says nothing
        // about the current level.
        int n = compressor(1).compress(src, so, sl, dst, dOff, cap);
        last = n < 0 ? CodecId.STORED : CodecId.ZSTD;
        return n;
      }
      long t0 = System.nanoTime();
      int n = compressor(level).compress(src, so, sl, dst, dOff, cap);
      long took = System.nanoTime() - t0;
      last = level == 0 ? CodecId.LZ4 : CodecId.ZSTD;
      learn(sl, n < 0 ? sl : n, took);
      return n;
    }

    /** The codec of the last block: lz4, zstd, or stored when the trial rejected it. */
    @Override
    public CodecId lastCodec() {
      return last;
    }

    /** The spec of the current level, e.g. {@code zstd:9} (for tests and reports). */
    String levelSpec() {
      return level == 0 ? "lz4" : "zstd:" + ZSTD_LADDER[level];
    }

    /**
     * Blocks often hold several small files, some compressed and some not: the samples are
     * spread over the block, and it is stored raw only when together they do not shrink.
     */
    private boolean worthCompressing(byte[] src, int so, int sl) {
      int piece = SAMPLE / SAMPLES;
      long stored = 0;
      for (int i = 0; i < SAMPLES; i++) {
        int from = so + (int) ((long) (sl - piece) * (2 * i + 1) / (2 * SAMPLES));
        int n = trial.compress(src, from, piece, trialOut, 0, trialOut.length);
        stored += n < 0 ? piece : n;
      }
      return stored <= (long) SAMPLE * (100 - MIN_SAVING_PERCENT) / 100;
    }

    private Compressor compressor(int i) {
      if (byLevel[i] == null) {
        byLevel[i] = i == 0 ? new Lz4Codec().newCompressor()
            : new ZstdCodec(ZSTD_LADDER[i]).newCompressor();
      }
      return byLevel[i];
    }

    private void learn(int raw, int stored, long nanos) {
      double spb = nanos / 1e9 / raw;
      double r = (double) raw / Math.max(1, stored);
      // Weighted towards recent blocks: the data changes from file to file.
      secondsPerByte[level] = secondsPerByte[level] == 0 ? spb : 0.7 * secondsPerByte[level] + 0.3 * spb;
      ratio[level] = ratio[level] == 0 ? r : 0.7 * ratio[level] + 0.3 * r;
      if (++blocksAtLevel < SETTLE_BLOCKS) {
        return;
      }
      double coreRate = cores / secondsPerByte[level];
      double linkRate = linkBytesPerSecond <= 0 ? Double.POSITIVE_INFINITY
          : linkBytesPerSecond * ratio[level];
      int next = level;
      if (coreRate > linkRate * CLIMB_ABOVE && level + 1 < ZSTD_LADDER.length) {
        next = level + 1;
      } else if (coreRate < linkRate * DESCEND_BELOW && level > 0) {
        next = level - 1;
      }
      // A neighbour measured before and no faster end to end is not worth the move, unless the
      // level has stayed long enough for that measurement to be stale.
      if (next != level && secondsPerByte[next] > 0 && blocksAtLevel < REPROBE_BLOCKS
          && secondsPerRawByte(next) >= secondsPerRawByte(level)) {
        next = level;
      }
      if (next != level) {
        level = next;
        blocksAtLevel = 0;
      }
    }

    /**
     * The model's time per raw byte at a measured level, the save and the transfer overlapping:
     * whichever of the cores and the link is slower sets the pace.
     */
    private double secondsPerRawByte(int l) {
      double link = linkBytesPerSecond <= 0 ? 0 : 1 / (linkBytesPerSecond * ratio[l]);
      return Math.max(secondsPerByte[l] / cores, link);
    }

    @Override
    public void close() {
      trial.close();
      for (Compressor c : byLevel) {
        if (c != null) {
          c.close();
        }
      }
      Arrays.fill(byLevel, null);
    }
  }
}

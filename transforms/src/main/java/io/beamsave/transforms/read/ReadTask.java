package io.beamsave.transforms.read;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.ShardInfo;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The pieces of one shard that a verify or restore reads, sorted by their offset in the shard:
 * shard {@code shard} of the image at {@code image} (the image read, or one of its bases), whose
 * blocks hold {@code blockSize} raw bytes. {@code beside} are pieces other tasks read from the
 * blocks this one shares with them ({@link #split}), named with its own when a block is damaged.
 */
public record ReadTask(
    String image, int blockSize, int shard, ShardInfo info, List<ShardReader.FileExtent> pieces,
    List<ShardReader.FileExtent> beside)
    implements Serializable {

  public ReadTask(String image, int blockSize, int shard, ShardInfo info,
      List<ShardReader.FileExtent> pieces) {
    this(image, blockSize, shard, info, pieces, List.of());
  }

  public static final DataCoder<ReadTask> CODER =
      new DataCoder<>() {
        @Override
        public void write(ReadTask t, DataOutputStream out) throws IOException {
          out.writeUTF(t.image);
          out.writeInt(t.blockSize);
          out.writeInt(t.shard);
          out.writeLong(t.info.imageOffset());
          out.writeLong(t.info.storedLength());
          out.writeLong(t.info.rawLength());
          out.writeInt(t.info.blockLengths().length);
          for (int len : t.info.blockLengths()) {
            out.writeInt(len);
          }
          writeOptional(out, t.info.sealedKey());
          writePieces(out, t.pieces);
          writePieces(out, t.beside);
        }

        @Override
        public ReadTask read(DataInputStream in) throws IOException {
          String image = in.readUTF();
          int blockSize = in.readInt();
          int shard = in.readInt();
          long offset = in.readLong();
          long stored = in.readLong();
          long raw = in.readLong();
          int[] blocks = new int[in.readInt()];
          for (int i = 0; i < blocks.length; i++) {
            blocks[i] = in.readInt();
          }
          byte[] key = readOptional(in);
          List<ShardReader.FileExtent> pieces = readPieces(in);
          return new ReadTask(image, blockSize, shard,
              new ShardInfo(offset, stored, raw, blocks, key), pieces, readPieces(in));
        }
      };

  private static void writePieces(DataOutputStream out, List<ShardReader.FileExtent> pieces)
      throws IOException {
    out.writeInt(pieces.size());
    for (ShardReader.FileExtent p : pieces) {
      DataCoder.writeBytes(out, p.path());
      out.writeLong(p.fileId());
      out.writeLong(p.fileOffset());
      out.writeShort(p.extent().image());
      out.writeInt(p.extent().shard());
      out.writeLong(p.extent().offset());
      out.writeLong(p.extent().length());
      out.write(p.extent().digest());
      ShardReader.Whole w = p.whole();
      out.writeBoolean(w != null);
      if (w != null) {
        out.writeLong(w.size());
        out.writeInt(w.mode());
        out.writeInt(w.uid());
        out.writeInt(w.gid());
        out.writeLong(w.mtimeSeconds());
        out.writeInt(w.mtimeNanos());
      }
    }
  }

  private static List<ShardReader.FileExtent> readPieces(DataInputStream in) throws IOException {
    int n = in.readInt();
    List<ShardReader.FileExtent> pieces = new ArrayList<>(Math.min(n, 4096));
    for (int i = 0; i < n; i++) {
      PathBytes path = DataCoder.readBytes(in);
      long fileId = in.readLong();
      long fileOffset = in.readLong();
      int xImage = in.readUnsignedShort();
      int xShard = in.readInt();
      long xOffset = in.readLong();
      long xLength = in.readLong();
      byte[] digest = new byte[ImageFormat.DIGEST_SIZE];
      in.readFully(digest);
      ShardReader.Whole whole = in.readBoolean()
          ? new ShardReader.Whole(in.readLong(), in.readInt(), in.readInt(), in.readInt(),
              in.readLong(), in.readInt())
          : null;
      pieces.add(new ShardReader.FileExtent(
          path, fileOffset, new Extent(xImage, xShard, xOffset, xLength, digest), fileId, whole));
    }
    return pieces;
  }

  /**
   * One task per shard that holds any piece of the given files, in image and shard order; the
   * chain has opened every image they need ({@link ImageChain#resolve}).
   */
  public static List<ReadTask> forEntries(ImageChain chain, Iterable<Entry> entries) {
    return forEntries(chain, entries, null);
  }

  /**
   * Whether a restore's worker makes the file of {@code e} from start to end: a file that one
   * piece holds. The others (empty files, and files whose pieces lie in several shards, which
   * tasks write at once) are created before the pipeline and finished after it.
   */
  public static boolean madeByWorker(Entry e) {
    // Extended attributes are set by the restore's last pass, with the capability last.
    return e.isFile() && e.extents().size() == 1 && e.meta().xattrs().isEmpty();
  }

  /**
   * Like {@link #forEntries(ImageChain, Iterable)}, for a restore: each piece tagged with the id of
   * the file it is written into ({@code fileIds[i]} for the {@code i}th entry), or, for a file
   * {@link #madeByWorker}, with the file's size and metadata.
   */
  public static List<ReadTask> forEntries(
      ImageChain chain, Iterable<Entry> entries, long[] fileIds) {
    Map<Long, List<ShardReader.FileExtent>> byShard = new TreeMap<>();
    int i = 0;
    for (Entry e : entries) {
      long fileOffset = 0;
      long id = fileIds == null ? 0 : fileIds[i++];
      ShardReader.Whole whole = fileIds != null && madeByWorker(e) ? ShardReader.Whole.of(e) : null;
      for (Extent x : e.extents()) {
        byShard
            .computeIfAbsent(((long) x.image() << 32) | x.shard(), k -> new ArrayList<>())
            .add(new ShardReader.FileExtent(e.path(), fileOffset, x, whole == null ? id : 0, whole));
        fileOffset += x.length();
      }
    }
    List<ReadTask> tasks = new ArrayList<>(byShard.size());
    byShard.forEach(
        (key, pieces) -> {
          pieces.sort(Comparator.comparingLong(p -> p.extent().offset()));
          ImageChain.Member m = chain.member((int) (key >>> 32));
          if (m == null) {
            throw new IllegalStateException("base " + (key >>> 32) + " was not opened");
          }
          int shard = (int) (long) key;
          tasks.add(new ReadTask(m.location(), m.catalog().blockSize(), shard,
              m.catalog().shards().get(shard), pieces));
        });
    return tasks;
  }

  /**
   * This task as tasks of about {@code span} raw bytes of pieces each, for threads to read at
   * once. Two neighbours may share the block they are cut in, which both then decode: one
   * block per cut, against a batch of small files that would otherwise be one thread's.
   */
  public List<ReadTask> split(long span) {
    List<Integer> cuts = new ArrayList<>();
    int from = 0;
    for (int i = 1; i < pieces.size(); i++) {
      Extent first = pieces.get(from).extent();
      Extent last = pieces.get(i - 1).extent();
      if (last.offset() + last.length() - first.offset() >= span) {
        cuts.add(i);
        from = i;
      }
    }
    if (cuts.isEmpty()) {
      return List.of(this);
    }
    cuts.add(pieces.size());
    List<ReadTask> out = new ArrayList<>(cuts.size());
    from = 0;
    for (int to : cuts) {
      out.add(new ReadTask(image, blockSize, shard, info, List.copyOf(pieces.subList(from, to)),
          beside(from, to)));
      from = to;
    }
    return out;
  }

  /** The pieces outside {@code [from, to)} in the blocks its first and last pieces touch. */
  private List<ShardReader.FileExtent> beside(int from, int to) {
    long firstBlock = pieces.get(from).extent().offset() / blockSize;
    Extent last = pieces.get(to - 1).extent();
    long lastBlock = (last.offset() + last.length() - 1) / blockSize;
    List<ShardReader.FileExtent> out = new ArrayList<>();
    for (int j = from - 1; j >= 0; j--) {
      Extent x = pieces.get(j).extent();
      if ((x.offset() + x.length() - 1) / blockSize < firstBlock) {
        break;
      }
      out.add(0, pieces.get(j));
    }
    for (int j = to; j < pieces.size(); j++) {
      if (pieces.get(j).extent().offset() / blockSize > lastBlock) {
        break;
      }
      out.add(pieces.get(j));
    }
    return List.copyOf(out);
  }
}

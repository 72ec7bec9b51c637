package io.beamsave.transforms.read;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.image.ShardInfo;
import io.beamsave.transforms.image.ShardReader;
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
 * blocks hold {@code blockSize} raw bytes.
 */
public record ReadTask(
    String image, int blockSize, int shard, ShardInfo info, List<ShardReader.FileExtent> pieces)
    implements Serializable {

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
          out.writeInt(t.pieces.size());
          for (ShardReader.FileExtent p : t.pieces) {
            writeBytes(out, p.path());
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
          int n = in.readInt();
          List<ShardReader.FileExtent> pieces = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            PathBytes path = readBytes(in);
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
            pieces.add(
                new ShardReader.FileExtent(
                    path, fileOffset, new Extent(xImage, xShard, xOffset, xLength, digest), fileId,
                    whole));
          }
          return new ReadTask(image, blockSize, shard,
              new ShardInfo(offset, stored, raw, blocks, key), pieces);
        }
      };

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
    return e.isFile() && e.extents().size() == 1;
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
}

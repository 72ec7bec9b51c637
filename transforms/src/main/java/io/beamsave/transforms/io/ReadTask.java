package io.beamsave.transforms.io;

import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.image.ImageFormat;
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

/** The pieces of one shard that a verify or restore reads, sorted by their offset in the shard. */
public record ReadTask(int shard, ShardInfo info, List<ShardReader.Piece> pieces)
    implements Serializable {

  public static final DataCoder<ReadTask> CODER =
      new DataCoder<>() {
        @Override
        void write(ReadTask t, DataOutputStream out) throws IOException {
          out.writeInt(t.shard);
          out.writeLong(t.info.imageOffset());
          out.writeLong(t.info.storedLength());
          out.writeLong(t.info.rawLength());
          out.writeInt(t.info.blockLengths().length);
          for (int len : t.info.blockLengths()) {
            out.writeInt(len);
          }
          out.writeInt(t.pieces.size());
          for (ShardReader.Piece p : t.pieces) {
            writeBytes(out, p.path());
            out.writeLong(p.fileId());
            out.writeLong(p.fileOffset());
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
        ReadTask read(DataInputStream in) throws IOException {
          int shard = in.readInt();
          long offset = in.readLong();
          long stored = in.readLong();
          long raw = in.readLong();
          int[] blocks = new int[in.readInt()];
          for (int i = 0; i < blocks.length; i++) {
            blocks[i] = in.readInt();
          }
          int n = in.readInt();
          List<ShardReader.Piece> pieces = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            PathBytes path = readBytes(in);
            long fileId = in.readLong();
            long fileOffset = in.readLong();
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
                new ShardReader.Piece(
                    path, fileOffset, new Extent(xShard, xOffset, xLength, digest), fileId,
                    whole));
          }
          return new ReadTask(shard, new ShardInfo(offset, stored, raw, blocks), pieces);
        }
      };

  /** One task per shard that holds any piece of the given files, in shard order. */
  public static List<ReadTask> forEntries(Catalog catalog, Iterable<Entry> entries) {
    return forEntries(catalog, entries, null);
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
   * Like {@link #forEntries(Catalog, Iterable)}, for a restore: each piece tagged with the id of
   * the file it is written into ({@code fileIds[i]} for the {@code i}th entry), or, for a file
   * {@link #madeByWorker}, with the file's size and metadata.
   */
  public static List<ReadTask> forEntries(
      Catalog catalog, Iterable<Entry> entries, long[] fileIds) {
    Map<Integer, List<ShardReader.Piece>> byShard = new TreeMap<>();
    int i = 0;
    for (Entry e : entries) {
      long fileOffset = 0;
      long id = fileIds == null ? 0 : fileIds[i++];
      ShardReader.Whole whole = fileIds != null && madeByWorker(e) ? ShardReader.Whole.of(e) : null;
      for (Extent x : e.extents()) {
        byShard
            .computeIfAbsent(x.shard(), k -> new ArrayList<>())
            .add(new ShardReader.Piece(e.path(), fileOffset, x, whole == null ? id : 0, whole));
        fileOffset += x.length();
      }
    }
    List<ReadTask> tasks = new ArrayList<>(byShard.size());
    byShard.forEach(
        (shard, pieces) -> {
          pieces.sort(Comparator.comparingLong(p -> p.extent().offset()));
          tasks.add(new ReadTask(shard, catalog.shards().get(shard), pieces));
        });
    return tasks;
  }
}

package io.beamsave.transforms.save;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.PathBytes;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The work of compressing one shard: the file pieces that make up its raw bytes, in order, each
 * with what the listing saw of its file (size, mtime, ctime, inode) so that a change during the
 * save is noticed.
 */
public record ShardTask(String library, int shard, List<FileRange> pieces) {

  /**
   * {@code length} bytes of the library's file at {@code path} (relative), from {@code
   * fileOffset}, to read into the shard; once compressed, they are an {@code Extent} of it.
   */
  public record FileRange(
      PathBytes path,
      long fileOffset,
      long length,
      long fileSize,
      long mtimeSeconds,
      int mtimeNanos,
      long ctimeSeconds,
      int ctimeNanos,
      long inode) {

    /** The piece of {@code e} (as listed) at {@code fileOffset}. */
    public static FileRange of(Entry e, long fileOffset, long length) {
      return new FileRange(e.path(), fileOffset, length, e.size(), e.mtimeSeconds(), e.mtimeNanos(),
          e.ctimeSeconds(), e.ctimeNanos(), e.inode());
    }
  }

  public long rawBytes() {
    long n = 0;
    for (FileRange p : pieces) {
      n += p.length;
    }
    return n;
  }

  public static final DataCoder<ShardTask> CODER =
      new DataCoder<>() {
        @Override
        public void write(ShardTask t, DataOutputStream out) throws IOException {
          writeString(out, t.library);
          out.writeInt(t.shard);
          out.writeInt(t.pieces.size());
          for (FileRange p : t.pieces) {
            writeBytes(out, p.path);
            out.writeLong(p.fileOffset);
            out.writeLong(p.length);
            out.writeLong(p.fileSize);
            out.writeLong(p.mtimeSeconds);
            out.writeInt(p.mtimeNanos);
            out.writeLong(p.ctimeSeconds);
            out.writeInt(p.ctimeNanos);
            out.writeLong(p.inode);
          }
        }

        @Override
        public ShardTask read(DataInputStream in) throws IOException {
          String library = readString(in);
          int shard = in.readInt();
          int n = in.readInt();
          List<FileRange> pieces = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            pieces.add(
                new FileRange(
                    readBytes(in),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readInt(),
                    in.readLong(),
                    in.readInt(),
                    in.readLong()));
          }
          return new ShardTask(library, shard, pieces);
        }
      };
}

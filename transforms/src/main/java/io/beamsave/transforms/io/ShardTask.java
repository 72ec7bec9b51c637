package io.beamsave.transforms.io;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The work of compressing one shard: the file pieces that make up its raw bytes, in order, each
 * with the size and mtime the listing saw so a change during the save is noticed.
 */
public record ShardTask(String library, int shard, List<Piece> pieces) {

  /** {@code length} bytes of the file at {@code path} (relative), from {@code fileOffset}. */
  public record Piece(
      String path, long fileOffset, long length, long fileSize, long mtimeSeconds, int mtimeNanos) {}

  public long rawBytes() {
    long n = 0;
    for (Piece p : pieces) {
      n += p.length;
    }
    return n;
  }

  public static final DataCoder<ShardTask> CODER =
      new DataCoder<>() {
        @Override
        void write(ShardTask t, DataOutputStream out) throws IOException {
          writeString(out, t.library);
          out.writeInt(t.shard);
          out.writeInt(t.pieces.size());
          for (Piece p : t.pieces) {
            writeString(out, p.path);
            out.writeLong(p.fileOffset);
            out.writeLong(p.length);
            out.writeLong(p.fileSize);
            out.writeLong(p.mtimeSeconds);
            out.writeInt(p.mtimeNanos);
          }
        }

        @Override
        ShardTask read(DataInputStream in) throws IOException {
          String library = readString(in);
          int shard = in.readInt();
          int n = in.readInt();
          List<Piece> pieces = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            pieces.add(
                new Piece(
                    readString(in),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readInt()));
          }
          return new ShardTask(library, shard, pieces);
        }
      };
}

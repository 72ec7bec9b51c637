package io.beamsave.transforms.save;

import static io.beamsave.transforms.beam.DataCoder.readBytes;
import static io.beamsave.transforms.beam.DataCoder.writeBytes;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The work of compressing one shard: the file pieces that make up its raw bytes, in order, each
 * with what the listing saw of its file (size, mtime, ctime, inode) so that a change during the
 * save is noticed. A shard of many pieces (small files) has them in the run's staging instead,
 * under {@code staged}, and its worker reads them from there: the task that travels through the
 * pipeline stays small, and no JVM holds every shard's pieces at once.
 */
public record ShardTask(String library, int shard, List<FileRange> pieces, String staged) {

  /** Shards of more pieces than this have them staged. */
  static final int INLINE_PIECES = 1000;

  public ShardTask(String library, int shard, List<FileRange> pieces) {
    this(library, shard, pieces, null);
  }

  /** The pieces, read from staging if they are there. */
  public List<FileRange> pieces(SaveSpec spec) throws IOException {
    if (staged == null) {
      return pieces;
    }
    return readPieces(new DataInputStream(new java.io.ByteArrayInputStream(
        Staging.read(spec, library, staged))));
  }

  /** Writes {@code pieces} as what {@link #readPieces} reads. */
  static void writePieces(List<FileRange> pieces, DataOutputStream out) throws IOException {
    out.writeInt(pieces.size());
    for (FileRange p : pieces) {
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

  static List<FileRange> readPieces(DataInputStream in) throws IOException {
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
    return pieces;
  }

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

  /** The raw bytes of the pieces held inline. */
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
          out.writeBoolean(t.staged != null);
          if (t.staged != null) {
            writeString(out, t.staged);
          } else {
            writePieces(t.pieces, out);
          }
        }

        @Override
        public ShardTask read(DataInputStream in) throws IOException {
          String library = readString(in);
          int shard = in.readInt();
          if (in.readBoolean()) {
            return new ShardTask(library, shard, List.of(), readString(in));
          }
          return new ShardTask(library, shard, readPieces(in), null);
        }
      };
}

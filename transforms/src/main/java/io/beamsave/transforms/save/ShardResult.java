package io.beamsave.transforms.save;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.sink.ImageSink;
import io.beamsave.transforms.walk.Unreadable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What compressing a shard produced: where the sink put this copy (as {@link
 * ImageSink#writeShard} returned it; null for a library without file data), its raw and stored
 * lengths, each block's stored length, one digest per piece (in the task's order), the files
 * seen changing while being read, and those that could not be read (when the save skips them).
 * In an encrypted image, {@code sealedKey} is the key this copy is sealed under, wrapped by the
 * image's key: never the key itself, which would cross the shuffle in the clear. {@code
 * rangeDigests} are the SHA-256 of each range of the pieces that record their {@link
 * io.beamsave.transforms.image.catalog.Ranges} ({@link
 * io.beamsave.transforms.shard.ShardPlanner#digestsRanges}), in the pieces' order.
 */
public record ShardResult(
    int shard,
    ImageSink.Copy copy,
    long rawLength,
    long storedLength,
    int[] blockLengths,
    byte[] digests,
    String stagedDigests,
    List<PathBytes> changedPaths,
    List<Unreadable> unreadable,
    byte[] sealedKey,
    byte[] rangeDigests) {

  public ShardResult {
    rangeDigests = rangeDigests == null ? new byte[0] : rangeDigests;
  }

  /** A result without range digests. */
  public ShardResult(int shard, ImageSink.Copy copy, long rawLength, long storedLength,
      int[] blockLengths, byte[] digests, String stagedDigests, List<PathBytes> changedPaths,
      List<Unreadable> unreadable, byte[] sealedKey) {
    this(shard, copy, rawLength, storedLength, blockLengths, digests, stagedDigests,
        changedPaths, unreadable, sealedKey, null);
  }

  /** The result of a shard of an image that is not encrypted. */
  public ShardResult(int shard, ImageSink.Copy copy, long rawLength, long storedLength,
      int[] blockLengths, byte[] digests, List<PathBytes> changedPaths,
      List<Unreadable> unreadable) {
    this(shard, copy, rawLength, storedLength, blockLengths, digests, null, changedPaths,
        unreadable, null);
  }

  /**
   * The digests of the shard's pieces, in the order of its task's pieces, {@link
   * ImageFormat#DIGEST_SIZE} bytes each: carried here, or read from staging for a shard of many
   * pieces, whose result then stays small through the shuffle to assembly.
   */
  public byte[] digests(SaveSpec spec, String library) {
    return stagedDigests == null ? digests : Staging.read(spec, library, stagedDigests);
  }

  /** This copy as the sink is told of it when the image is finished. */
  public ImageSink.WrittenShard written() {
    return new ImageSink.WrittenShard(shard, copy, storedLength, rawLength, blockLengths,
        sealedKey);
  }

  /** Which kind of {@link ImageSink.Copy} follows in the encoding: explicit bytes. */
  private static final byte IN_FILE = 0;
  private static final byte STAGED = 1;
  private static final byte PART = 2;
  private static final byte IMAGE_COMPLETE = 3;

  private static void writeCopy(DataOutputStream out, ImageSink.Copy copy) throws IOException {
    if (copy instanceof ImageSink.Copy.InFile in) {
      out.writeByte(IN_FILE);
      out.writeLong(in.offset());
    } else if (copy instanceof ImageSink.Copy.Staged staged) {
      out.writeByte(STAGED);
      out.writeLong(staged.id());
    } else if (copy instanceof ImageSink.Copy.Part part) {
      out.writeByte(PART);
      out.writeUTF(part.etag());
    } else if (copy instanceof ImageSink.Copy.ImageComplete) {
      out.writeByte(IMAGE_COMPLETE);
    } else {
      throw new IllegalArgumentException("no encoding for shard copy " + copy);
    }
  }

  private static ImageSink.Copy readCopy(DataInputStream in) throws IOException {
    byte kind = in.readByte();
    return switch (kind) {
      case IN_FILE -> new ImageSink.Copy.InFile(in.readLong());
      case STAGED -> new ImageSink.Copy.Staged(in.readLong());
      case PART -> new ImageSink.Copy.Part(in.readUTF());
      case IMAGE_COMPLETE -> new ImageSink.Copy.ImageComplete();
      default -> throw new IOException("unknown kind of shard copy " + kind);
    };
  }

  public static final DataCoder<ShardResult> CODER =
      new DataCoder<>() {
        @Override
        public void write(ShardResult r, DataOutputStream out) throws IOException {
          out.writeInt(r.shard);
          out.writeBoolean(r.copy != null);
          if (r.copy != null) {
            writeCopy(out, r.copy);
          }
          out.writeLong(r.rawLength);
          out.writeLong(r.storedLength);
          out.writeInt(r.blockLengths.length);
          for (int len : r.blockLengths) {
            out.writeInt(len);
          }
          out.writeInt(r.digests.length);
          out.write(r.digests);
          out.writeBoolean(r.stagedDigests != null);
          if (r.stagedDigests != null) {
            out.writeUTF(r.stagedDigests);
          }
          out.writeInt(r.changedPaths.size());
          for (PathBytes p : r.changedPaths) {
            writeBytes(out, p);
          }
          Unreadable.writeAll(out, r.unreadable);
          writeOptional(out, r.sealedKey);
          out.writeInt(r.rangeDigests.length);
          out.write(r.rangeDigests);
        }

        @Override
        public ShardResult read(DataInputStream in) throws IOException {
          int shard = in.readInt();
          ImageSink.Copy copy = in.readBoolean() ? readCopy(in) : null;
          long raw = in.readLong();
          long stored = in.readLong();
          int[] blocks = new int[in.readInt()];
          for (int i = 0; i < blocks.length; i++) {
            blocks[i] = in.readInt();
          }
          byte[] digests = new byte[in.readInt()];
          in.readFully(digests);
          String stagedDigests = in.readBoolean() ? in.readUTF() : null;
          int c = in.readInt();
          List<PathBytes> changed = new ArrayList<>(c);
          for (int i = 0; i < c; i++) {
            changed.add(readBytes(in));
          }
          List<Unreadable> unreadable = Unreadable.readAll(in);
          byte[] sealedKey = readOptional(in);
          byte[] ranges = new byte[in.readInt()];
          in.readFully(ranges);
          return new ShardResult(shard, copy, raw, stored, blocks, digests, stagedDigests,
              changed, unreadable, sealedKey, ranges);
        }
      };
}

package io.beamsave.transforms.consolidate;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.read.ReadTask;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * One shard of a consolidated image and how it is made, from the shards of a chain's images
 * that {@code reads} name ({@link ConsolidatePlan}):
 *
 * <ul>
 *   <li>{@link Kind#COPY_IN_STORE}: the one source shard's blocks, copied as they are by the
 *       object store itself (a ranged part copy), so they never cross the network;
 *   <li>{@link Kind#COPY}: the one source shard's blocks, read, checked and written as they are;
 *   <li>{@link Kind#REWRITE}: the pieces the reads name, read (every block checksum and extent
 *       digest checked), one after another in the order given, and compressed into new blocks.
 * </ul>
 *
 * <p>A copy into an encrypted image carries its frames' key wrapped for the new image ({@code
 * sealedKey}); the frames themselves are copied unchanged.
 */
public record ConsolidateTask(Kind kind, int shard, List<ReadTask> reads, byte[] sealedKey)
    implements Serializable {

  public ConsolidateTask(Kind kind, int shard, List<ReadTask> reads) {
    this(kind, shard, reads, null);
  }

  public enum Kind {
    COPY_IN_STORE,
    COPY,
    REWRITE
  }

  /** The source shard of a copy. */
  public ReadTask source() {
    return reads.get(0);
  }

  /** Raw bytes this task puts into its shard. */
  public long rawBytes() {
    if (kind != Kind.REWRITE) {
      return source().info().rawLength();
    }
    long n = 0;
    for (ReadTask r : reads) {
      for (var p : r.pieces()) {
        n += p.extent().length();
      }
    }
    return n;
  }

  public static final DataCoder<ConsolidateTask> CODER =
      new DataCoder<>() {
        @Override
        public void write(ConsolidateTask t, DataOutputStream out) throws IOException {
          out.writeByte(t.kind.ordinal());
          out.writeInt(t.shard);
          out.writeInt(t.reads.size());
          for (ReadTask r : t.reads) {
            ReadTask.CODER.write(r, out);
          }
          writeOptional(out, t.sealedKey);
        }

        @Override
        public ConsolidateTask read(DataInputStream in) throws IOException {
          Kind kind = Kind.values()[in.readUnsignedByte()];
          int shard = in.readInt();
          int n = in.readInt();
          List<ReadTask> reads = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            reads.add(ReadTask.CODER.read(in));
          }
          return new ConsolidateTask(kind, shard, reads, readOptional(in));
        }
      };
}

package io.beamsave.transforms.io;

import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.EntryType;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The entries of one library, as {@link ListLibrary} found them. A whole library travels as
 * one element: per-element overhead, not bytes, dominates on the DirectRunner, and planning
 * needs every entry at once anyway.
 */
public record Listing(List<Entry> entries) {

  public static final DataCoder<Listing> CODER =
      new DataCoder<>() {
        @Override
        void write(Listing b, DataOutputStream out) throws IOException {
          out.writeInt(b.entries.size());
          for (Entry e : b.entries) {
            writeString(out, e.path());
            out.writeByte(e.type().code());
            out.writeByte(e.flags());
            out.writeInt(e.mode());
            out.writeInt(e.uid());
            out.writeInt(e.gid());
            out.writeLong(e.mtimeSeconds());
            out.writeInt(e.mtimeNanos());
            out.writeLong(e.size());
            writeString(out, e.linkTarget());
          }
        }

        @Override
        Listing read(DataInputStream in) throws IOException {
          int n = in.readInt();
          List<Entry> entries = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            String path = readString(in);
            EntryType type = EntryType.fromCode(in.readByte());
            entries.add(
                new Entry(
                    path,
                    type,
                    in.readByte(),
                    in.readInt(),
                    in.readInt(),
                    in.readInt(),
                    in.readLong(),
                    in.readInt(),
                    in.readLong(),
                    readString(in),
                    List.of()));
          }
          return new Listing(entries);
        }
      };
}

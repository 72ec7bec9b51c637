package io.beamsave.transforms.io;

import io.beamsave.transforms.image.CatalogCodec;
import io.beamsave.transforms.image.Entry;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The library root and the entries of one library, as {@link ListLibrary} found them. A whole
 * library travels as one element: per-element overhead, not bytes, dominates on the
 * DirectRunner, and planning needs every entry at once anyway.
 */
public record Listing(Entry root, List<Entry> entries) {

  public static final DataCoder<Listing> CODER =
      new DataCoder<>() {
        @Override
        void write(Listing b, DataOutputStream out) throws IOException {
          CatalogCodec.writeEntryMetadata(out, b.root);
          out.writeInt(b.entries.size());
          for (Entry e : b.entries) {
            CatalogCodec.writeEntryMetadata(out, e);
          }
        }

        @Override
        Listing read(DataInputStream in) throws IOException {
          Entry root = CatalogCodec.readEntryMetadata(in);
          int n = in.readInt();
          List<Entry> entries = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            entries.add(CatalogCodec.readEntryMetadata(in));
          }
          return new Listing(root, entries);
        }
      };
}

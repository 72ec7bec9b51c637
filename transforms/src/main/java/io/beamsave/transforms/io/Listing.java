package io.beamsave.transforms.io;

import io.beamsave.transforms.image.CatalogCodec;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.PathBytes;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The library root and the entries of one library, as {@link ListLibrary} found them, with what
 * the walk could not read and skipped ({@code --skip-unreadable}) and the paths {@code
 * --files-from} listed that the library does not hold. A whole library travels as one element:
 * per-element overhead, not bytes, dominates on the DirectRunner, and planning needs every entry
 * at once anyway.
 */
public record Listing(
    Entry root, List<Entry> entries, List<Unreadable> unreadable, List<PathBytes> missing) {

  public Listing(Entry root, List<Entry> entries) {
    this(root, entries, List.of(), List.of());
  }

  /** The same listing with {@code newEntries} (planned, say) instead. */
  public Listing withEntries(List<Entry> newEntries) {
    return new Listing(root, newEntries, unreadable, missing);
  }

  public static final DataCoder<Listing> CODER =
      new DataCoder<>() {
        @Override
        void write(Listing b, DataOutputStream out) throws IOException {
          CatalogCodec.writeEntryMetadata(out, b.root);
          out.writeInt(b.entries.size());
          for (Entry e : b.entries) {
            CatalogCodec.writeEntryMetadata(out, e);
          }
          Unreadable.writeAll(out, b.unreadable);
          Unreadable.writePaths(out, b.missing);
        }

        @Override
        Listing read(DataInputStream in) throws IOException {
          Entry root = CatalogCodec.readEntryMetadata(in);
          int n = in.readInt();
          List<Entry> entries = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            entries.add(CatalogCodec.readEntryMetadata(in));
          }
          return new Listing(root, entries, Unreadable.readAll(in), Unreadable.readPaths(in));
        }
      };
}

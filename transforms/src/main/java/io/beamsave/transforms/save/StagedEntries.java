package io.beamsave.transforms.save;

import io.beamsave.transforms.image.block.BlockBuffer;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.walk.Listing;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.Locale;
import java.util.NoSuchElementException;

/**
 * A library's entries in staging, in chunks of a few MiB written as they fill: the walk and the
 * plan hand entries on through these, so that no step holds a library's entries at once, and a
 * reader takes them back one chunk at a time. Each chunk is a staged object of its own (sealed on
 * its own when the image is encrypted), named by the stream's stem and its number, and holds
 * whole entries ({@link Listing#writeEntry}); how many chunks and entries a stream has travels
 * with it ({@link StagedListing}), so a chunk lost or left over from an earlier attempt is
 * noticed, not read.
 */
final class StagedEntries {
  /** About how many bytes a chunk holds: large enough for few objects, small to hold. */
  static final int CHUNK_BYTES = 4 << 20;

  private StagedEntries() {}

  static String chunkName(String stem, int chunk) {
    return stem + String.format(Locale.ROOT, "-%06d", chunk);
  }

  /** Writes a stream of entries to staging, a chunk whenever one fills. */
  static final class Writer {
    private final SaveSpec spec;
    private final String library;
    private final String stem;
    private final BlockBuffer buffer = new BlockBuffer(CHUNK_BYTES + (64 << 10));
    private final DataOutputStream data = new DataOutputStream(buffer);
    private int chunks;
    private long entries;

    Writer(SaveSpec spec, String library, String stem) {
      this.spec = spec;
      this.library = library;
      this.stem = stem;
    }

    void add(Entry e) throws IOException {
      Listing.writeEntry(e, data);
      entries++;
      if (buffer.size() >= CHUNK_BYTES) {
        flush();
      }
    }

    private void flush() throws IOException {
      data.flush();
      Staging.write(spec, library, chunkName(stem, chunks), buffer.array(), buffer.size());
      chunks++;
      buffer.reset();
    }

    /** Writes what is left; returns the stream's chunk count. */
    int finish() throws IOException {
      if (buffer.size() > 0) {
        flush();
      }
      return chunks;
    }

    long entries() {
      return entries;
    }

    String stem() {
      return stem;
    }
  }

  /**
   * The {@code entries} entries of the stream {@code stem} of {@code library}, in {@code chunks}
   * chunks, read one chunk at a time.
   */
  static Iterator<Entry> read(SaveSpec spec, String library, String stem, int chunks,
      long entries) {
    return new Iterator<>() {
      private int chunk;
      private long read;
      private DataInputStream in;
      private int left;

      @Override
      public boolean hasNext() {
        return read < entries;
      }

      @Override
      public Entry next() {
        if (read >= entries) {
          throw new NoSuchElementException();
        }
        try {
          while (in == null || left == 0) {
            if (chunk >= chunks) {
              throw new IllegalStateException(spec.stagingStore().where(stem) + ": its "
                  + chunks + " chunks hold fewer than the " + entries + " entries staged");
            }
            byte[] bytes = Staging.read(spec, library, chunkName(stem, chunk++));
            in = new DataInputStream(new ChunkInput(bytes));
            left = bytes.length;
          }
          Entry e = Listing.readEntry(in);
          left = in.available();
          read++;
          return e;
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    };
  }

  /**
   * A chunk's bytes as a stream, without {@link java.io.ByteArrayInputStream}'s lock: one
   * thread reads a chunk, a field at a time, and the lock (a compare-and-swap a byte) was the
   * top of a profile of the save of a million files.
   */
  private static final class ChunkInput extends java.io.InputStream {
    private final byte[] bytes;
    private int pos;

    ChunkInput(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public int read() {
      return pos < bytes.length ? bytes[pos++] & 0xff : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      java.util.Objects.checkFromIndexSize(off, len, b.length);
      if (len == 0) {
        return 0;
      }
      int n = Math.min(len, bytes.length - pos);
      if (n <= 0) {
        return -1;
      }
      System.arraycopy(bytes, pos, b, off, n);
      pos += n;
      return n;
    }

    @Override
    public int available() {
      return bytes.length - pos;
    }
  }
}

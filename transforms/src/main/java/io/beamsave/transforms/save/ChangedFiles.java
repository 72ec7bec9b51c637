package io.beamsave.transforms.save;

import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.CatalogWalk;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.RangeDigest;
import io.beamsave.transforms.image.catalog.Ranges;
import io.beamsave.transforms.shard.IncrementalPlan;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An incremental save's plan of a library's files against its base, where the files' bytes are
 * read: a file changed since its base is read to reference the ranges the base holds of it
 * ({@link IncrementalPlan.Merge#planRanges}), at its own path as the walk meets it, and a large
 * file at a new path afterwards, against the base file it was before a rename (log rotation,
 * a moved disk image): the base's file of the same inode, or whose first range is its first
 * range. A base file's bytes are referenced by one file of the image at most: two files that
 * referenced the same bytes would be refused by every reader ({@code ExtentOverlaps}), so a
 * base file whose bytes a file at its own path took is no rename's. Not thread-safe.
 */
final class ChangedFiles {
  private final IncrementalPlan.Merge merge;
  private final Beneath tree;
  /** The base's large files, by inode and by their first range's digest. */
  private final Map<Long, PathBytes> byInode = new HashMap<>();
  private final Map<ByteBuffer, PathBytes> byFirstRange = new HashMap<>();
  /** The base files whose bytes a planned file references. */
  private final Set<PathBytes> taken = new HashSet<>();
  /** Large files at paths the base does not have. */
  private final List<Entry> newcomers = new ArrayList<>();

  ChangedFiles(IncrementalPlan.Merge merge, Beneath tree) {
    this.merge = merge;
    this.tree = tree;
  }

  /** Notes {@code old}, an entry of the base, as where a renamed file may have been. */
  void sawBase(Entry old) {
    if (old.isFile() && old.flags() == 0 && old.ranges().shift() == Ranges.DEFAULT_SHIFT
        && !old.ranges().isNone()) {
      byInode.putIfAbsent(old.inode(), old.path());
      // A copy: the whole digests of every large base file would stay on the heap otherwise.
      byFirstRange.putIfAbsent(ByteBuffer.wrap(
          java.util.Arrays.copyOf(old.ranges().digests(), Ranges.DIGEST_SIZE)), old.path());
    }
  }

  /**
   * {@code now} planned against {@code old}, the base's entry at its path (null if none):
   * referenced whole if unchanged; if changed, read and its unchanged ranges referenced.
   */
  Entry plan(Entry now, Entry old) throws IOException {
    Entry planned = merge.plan(now, old);
    if (planned == now && IncrementalPlan.comparesRanges(now, old)) {
      planned = compare(now, old);
    }
    if (old != null && planned != now) {
      taken.add(old.path());
    }
    if (old == null && now.isFile() && now.flags() == 0
        && Ranges.recordedFor(now.size(), Ranges.DEFAULT_SHIFT)) {
      newcomers.add(now);
    }
    return planned;
  }

  /**
   * The large files at new paths whose bytes are, in part or whole, a base file's that no
   * other file took, planned against it; by path. Reads the base's entries it needs from {@code
   * base}, and each newcomer without a base file of its inode's first range.
   */
  Map<PathBytes, Entry> renamed(CatalogWalk base) throws IOException {
    Map<PathBytes, Entry> out = new HashMap<>();
    for (Entry now : newcomers) {
      PathBytes from = byInode.get(now.inode());
      if ((from == null || taken.contains(from)) && !byFirstRange.isEmpty()) {
        byte[] first = firstRange(now);
        from = first == null ? null : byFirstRange.get(ByteBuffer.wrap(first));
      }
      if (from == null || taken.contains(from)) {
        continue;
      }
      Entry old = base.find(from);
      if (old == null || !IncrementalPlan.comparesRanges(now, old)) {
        continue;
      }
      Entry planned = compare(now, old);
      if (planned != now) {
        taken.add(from);
        out.put(now.path(), planned);
      }
    }
    return out;
  }

  /** The raw bytes of {@code e} that a base holds. */
  static long referenced(Entry e) {
    long n = 0;
    for (Extent x : e.extents()) {
      n += x.isReference() ? x.length() : 0;
    }
    return n;
  }

  /** {@code now} compared range by range with {@code old}; as it is if that cannot be done. */
  private Entry compare(Entry now, Entry old) throws IOException {
    Entry[] planned = {now};
    boolean asListed = read(now, in -> planned[0] = merge.planRanges(now, old,
        (offset, buf, length) -> readFully(in, offset, buf, length)));
    // Changed while it was compared: stored whole, and its worker notices the change.
    return asListed && planned[0] != now ? merge.keep(planned[0]) : now;
  }

  /** The digest of {@code now}'s first range, or null if it cannot be read as listed. */
  private byte[] firstRange(Entry now) throws IOException {
    byte[][] digest = {null};
    boolean asListed = read(now, in -> {
      byte[] buf = new byte[1 << Ranges.DEFAULT_SHIFT];
      if (readFully(in, 0, buf, buf.length)) {
        digest[0] = sha256(buf);
      }
    });
    return asListed ? digest[0] : null;
  }

  private interface Reading {
    void read(OpenFile in) throws IOException;
  }

  /**
   * Opens {@code now} beneath the library's root and hands it to {@code reading} if it is the
   * file listed; whether it still was once read. Gone, unreadable or changed, what {@code
   * reading} found is not to be used (the shard's worker says what happened).
   */
  private boolean read(Entry now, Reading reading) {
    byte[] path = now.path().bytes();
    OpenFile f;
    try {
      f = tree.dir(path, Math.max(now.path().lastSlash(), 0)).openRead(now.path().fileName());
    } catch (IOException gone) {
      return false;
    }
    try (OpenFile in = f) {
      if (!CompressShards.sameAsListed(in.stat(), now)) {
        return false;
      }
      reading.read(in);
      return CompressShards.sameAsListed(in.stat(), now);
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean readFully(OpenFile in, long offset, byte[] buf, int length)
      throws IOException {
    for (int done = 0; done < length; ) {
      int n = in.read(offset + done, buf, done, length - done);
      if (n <= 0) {
        return false;
      }
      done += n;
    }
    return true;
  }

  private static byte[] sha256(byte[] b) {
    RangeDigest.Hasher h = new RangeDigest.Hasher();
    h.update(b, 0, b.length);
    return h.digest();
  }
}

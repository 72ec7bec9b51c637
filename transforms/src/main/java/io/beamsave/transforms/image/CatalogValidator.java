package io.beamsave.transforms.image;

import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The consistency checks {@link CatalogReader} runs on a decoded catalog before it returns it:
 * the shard layout, the tree (paths clean, unique, inside directories), and the extents (inside
 * their shard, covering their file, never sharing a byte of a shard or of a base's). Each failure
 * is an {@link ImageException} naming the image and what is wrong. Static methods only.
 */
final class CatalogValidator {
  private CatalogValidator() {}

  /** Shards lie, in any order, between the header and the catalog, and never overlap. */
  static void checkLayout(String image, List<ShardInfo> shards, long dataStart,
      long catalogOffset) throws ImageException {
    Integer[] order = new Integer[shards.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, Comparator.comparingLong(i -> shards.get(i).imageOffset()));
    long end = dataStart;
    for (int i : order) {
      ShardInfo s = shards.get(i);
      if (s.imageOffset() < end || s.storedLength() > catalogOffset - s.imageOffset()) {
        throw new ImageException(
            image + ": catalog: shard " + i + " at " + s.imageOffset() + " overlaps another"
                + " shard, the header or the catalog");
      }
      end = s.imageOffset() + s.storedLength();
    }
  }

  /** Paths are clean, unique, and each lies inside a directory entry. */
  static void checkTree(String image, List<Entry> entries) throws ImageException {
    Map<PathBytes, EntryType> types = new HashMap<>(entries.size() * 2);
    for (Entry e : entries) {
      String problem = CatalogPaths.problem(e.path());
      if (problem != null) {
        throw new ImageException(image + ": catalog: unsafe path '" + e.path() + "': " + problem);
      }
      if (types.put(e.path(), e.type()) != null) {
        throw new ImageException(image + ": catalog: duplicate path '" + e.path() + "'");
      }
      if (CatalogPaths.depth(e.path()) > ImageFormat.MAX_DEPTH) {
        throw new ImageException(image + ": catalog: '" + e.path() + "' nests deeper than "
            + ImageFormat.MAX_DEPTH + " directories");
      }
    }
    for (Entry e : entries) {
      PathBytes parent = e.path().parent();
      if (parent != null && types.get(parent) != EntryType.DIRECTORY) {
        throw new ImageException(
            image + ": catalog: '" + e.path() + "' is not inside a directory entry");
      }
    }
  }

  /**
   * Each file's extents name existing shards, lie inside them and cover the file exactly; no
   * two extents share a byte of a shard. Overlapping extents would have two files decode the
   * same bytes (a crafted image's way to make readers seek backwards); none a writer makes.
   */
  static void checkExtents(String image, List<Entry> entries, List<ShardInfo> shards)
      throws ImageException {
    int[] counts = new int[shards.size()];
    for (Entry e : entries) {
      checkFile(image, e, shards);
      for (Extent x : e.extents()) {
        if (!x.isReference()) {
          counts[x.shard()]++;
        }
      }
    }
    // Per shard, the extents' offsets, lengths and files; a writer's come sorted by offset.
    long[][] offsets = new long[shards.size()][];
    long[][] lengths = new long[shards.size()][];
    int[][] owners = new int[shards.size()][];
    int[] fill = new int[shards.size()];
    boolean[] unsorted = new boolean[shards.size()];
    for (int s = 0; s < counts.length; s++) {
      offsets[s] = new long[counts[s]];
      lengths[s] = new long[counts[s]];
      owners[s] = new int[counts[s]];
    }
    for (int i = 0; i < entries.size(); i++) {
      for (Extent x : entries.get(i).extents()) {
        if (x.isReference()) {
          continue;
        }
        int s = x.shard();
        int k = fill[s]++;
        unsorted[s] |= k > 0 && offsets[s][k - 1] > x.offset();
        offsets[s][k] = x.offset();
        lengths[s][k] = x.length();
        owners[s][k] = i;
      }
    }
    for (int s = 0; s < shards.size(); s++) {
      Integer[] order = new Integer[offsets[s].length];
      for (int k = 0; k < order.length; k++) {
        order[k] = k;
      }
      if (unsorted[s]) {
        long[] off = offsets[s];
        Arrays.sort(order, Comparator.comparingLong(k -> off[k]));
      }
      long end = 0;
      int last = -1;
      for (int k : order) {
        if (offsets[s][k] < end) {
          throw new ImageException(image + ": catalog: file " + entries.get(owners[s][k]).path()
              + " overlaps file " + entries.get(last).path() + " in shard " + s);
        }
        end = offsets[s][k] + lengths[s][k];
        last = owners[s][k];
      }
    }
    checkReferences(image, entries);
  }

  /**
   * A file's extents name existing shards of this image (or a base), lie inside them and cover
   * the file exactly; nothing for an entry that is not a file.
   */
  static void checkFile(String image, Entry e, List<ShardInfo> shards) throws ImageException {
    if (!e.isFile()) {
      return;
    }
    long covered = 0;
    for (Extent x : e.extents()) {
      if (x.isReference()) {
        // Checked against the base's shard table when the base is opened (ImageChain).
        if (x.shard() < 0 || x.length() <= 0 || x.offset() > Long.MAX_VALUE - x.length()
            || covered > e.size() - x.length()) {
          throw new ImageException(image + ": catalog: file " + e.path()
              + " has an invalid extent in base " + x.image());
        }
        covered += x.length();
        continue;
      }
      if (x.shard() < 0 || x.shard() >= shards.size()) {
        throw new ImageException(
            image + ": catalog: file " + e.path() + " names missing shard " + x.shard());
      }
      ShardInfo s = shards.get(x.shard());
      if (x.length() <= 0 || x.offset() > s.rawLength() - x.length()) {
        throw new ImageException(
            image + ": catalog: file " + e.path() + " has an extent outside shard " + x.shard());
      }
      if (covered > e.size() - x.length()) {
        throw new ImageException(
            image + ": catalog: file " + e.path() + " extents exceed its size " + e.size());
      }
      covered += x.length();
    }
    if (covered != e.size()) {
      throw new ImageException(image + ": catalog: file " + e.path() + " extents cover "
          + covered + " of " + e.size() + " bytes");
    }
  }

  /**
   * No two references share a byte of a base's shard: an incremental image that had two files
   * point at the same bytes would pass every check of its own and fail in its (intact) base,
   * after a restore had written files. Refused here, naming the image that is wrong.
   */
  private static void checkReferences(String image, List<Entry> entries) throws ImageException {
    Map<Long, long[]> last = new HashMap<>();
    boolean sorted = true;
    int refs = 0;
    for (int i = 0; i < entries.size() && sorted; i++) {
      for (Extent x : entries.get(i).extents()) {
        if (!x.isReference()) {
          continue;
        }
        refs++;
        long key = ((long) x.image() << 32) | (x.shard() & 0xffffffffL);
        long[] prev = last.get(key);
        if (prev != null && x.offset() < prev[0]) {
          sorted = false;
          break;
        }
        if (prev != null && x.offset() < prev[1]) {
          throw new ImageException(image + ": catalog: file " + entries.get(i).path()
              + " references bytes of base " + x.image() + " (shard " + x.shard()
              + ") that file " + entries.get((int) prev[2]).path() + " references too;"
              + " no image is saved so");
        }
        last.put(key, new long[] {x.offset(), x.offset() + x.length(), i});
      }
    }
    if (sorted || refs == 0) {
      return;
    }
    // Not in a writer's order: sort every reference by base, shard and offset, then look again.
    long[][] all = new long[refs][];
    int n = 0;
    for (int i = 0; i < entries.size(); i++) {
      for (Extent x : entries.get(i).extents()) {
        if (x.isReference()) {
          all[n++] = new long[] {((long) x.image() << 32) | (x.shard() & 0xffffffffL),
              x.offset(), x.offset() + x.length(), i};
        }
      }
    }
    Arrays.sort(all, Comparator.<long[]>comparingLong(r -> r[0]).thenComparingLong(r -> r[1]));
    for (int k = 1; k < n; k++) {
      if (all[k][0] == all[k - 1][0] && all[k][1] < all[k - 1][2]) {
        throw new ImageException(image + ": catalog: file " + entries.get((int) all[k][3]).path()
            + " references bytes of base " + (all[k][0] >>> 32) + " (shard "
            + (int) all[k][0] + ") that file " + entries.get((int) all[k - 1][3]).path()
            + " references too; no image is saved so");
      }
    }
  }
}

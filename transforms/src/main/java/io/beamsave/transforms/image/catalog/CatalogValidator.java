package io.beamsave.transforms.image.catalog;

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
   * two extents share a byte of a shard or of a base's ({@link ExtentOverlaps}).
   */
  static void checkExtents(String image, List<Entry> entries, List<ShardInfo> shards)
      throws ImageException {
    ExtentOverlaps overlaps = new ExtentOverlaps(image);
    for (Entry e : entries) {
      checkFile(image, e, shards);
      overlaps.add(e);
    }
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
}

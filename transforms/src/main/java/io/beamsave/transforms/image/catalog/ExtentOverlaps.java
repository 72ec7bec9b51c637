package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.format.ImageException;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Refuses two extents that share a byte, of one of the image's shards or of a base's, over
 * entries met one at a time: the whole catalog's check, and a paged catalog's across its pages.
 * Overlapping extents would have two files decode the same bytes (a crafted image's way to make
 * readers seek backwards); two references to the same bytes of a base would pass every check of
 * the image and fail in its intact base, after a restore had written files. A writer's extents
 * come sorted and back to back, so what is held is a run per stretch of bytes in use: a few per
 * shard for an image of any number of files, and never more than the catalog's own extents.
 */
public final class ExtentOverlaps {
  private final String image;
  /** By image and shard, the runs of bytes in use: start, then end and the run's last file. */
  private final Map<Long, TreeMap<Long, Run>> runs = new HashMap<>();

  private record Run(long end, PathBytes last) {}

  /** {@code image} names the image in errors. */
  public ExtentOverlaps(String image) {
    this.image = image;
  }

  /** Adds the extents of {@code e}; throws if one shares a byte with an extent added before. */
  public void add(Entry e) throws ImageException {
    for (Extent x : e.extents()) {
      long key = ((long) x.image() << 32) | (x.shard() & 0xffffffffL);
      TreeMap<Long, Run> in = runs.computeIfAbsent(key, k -> new TreeMap<>());
      long start = x.offset();
      long end = x.offset() + x.length();
      Map.Entry<Long, Run> before = in.floorEntry(start);
      Map.Entry<Long, Run> after = in.higherEntry(start);
      PathBytes other = before != null && before.getValue().end() > start
          ? before.getValue().last()
          : after != null && after.getKey() < end ? after.getValue().last() : null;
      if (other != null) {
        throw new ImageException(image + ": catalog: file " + e.path() + (x.isReference()
            ? " references bytes of base " + x.image() + " (shard " + x.shard() + ") that file "
                + other + " references too; no image is saved so"
            : " overlaps file " + other + " in shard " + x.shard()));
      }
      if (before != null && before.getValue().end() == start) {
        start = before.getKey();
        in.remove(start);
      }
      if (after != null && after.getKey() == end) {
        end = after.getValue().end();
        in.remove(after.getKey());
      }
      in.put(start, new Run(end, e.path()));
    }
  }
}

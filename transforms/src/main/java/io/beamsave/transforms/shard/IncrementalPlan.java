package io.beamsave.transforms.shard;

import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.image.PathBytes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Against a base image, finds a library's unchanged files and points them at the bytes the base
 * already holds (the SAVCHGOBJ idea), so that only the rest is read and stored. A file is
 * unchanged when it is a file in both, and its size, permission bits, mtime, ctime (to the
 * nanosecond) and inode are the base's, and the base saved it whole (not changing, not
 * unreadable). ctime moves on every write, rename, link count or ownership change, so a file
 * rewritten with its old mtime put back is still seen as changed.
 *
 * <p>The new image's bases are the direct base (index 1) followed by the base's own bases (index
 * {@code k + 1} for the base's {@code k}): references are flattened, so an unchanged file points
 * at the image that holds its bytes, however old, and a read opens each image of a chain once.
 */
public final class IncrementalPlan {
  private IncrementalPlan() {}

  /**
   * The entries, unchanged files with their reference extents set, and the new image's bases:
   * those a file points into, and the direct base.
   */
  public record Result(List<Entry> entries, List<Catalog.Base> bases, int depth,
      long referencedBytes) {}

  /**
   * @param base the base's catalog, read and checked
   * @param baseLocation where the base is, as the new catalog records it
   */
  public static Result against(List<Entry> entries, Catalog base, String baseLocation) {
    Map<PathBytes, Entry> before = new HashMap<>(base.entries().size() * 2);
    for (Entry e : base.entries()) {
      if (e.isFile()) {
        before.put(e.path(), e);
      }
    }
    List<Catalog.Base> bases = new ArrayList<>(1 + base.bases().size());
    bases.add(base.asBase(baseLocation));
    bases.addAll(base.bases());
    List<Entry> out = new ArrayList<>(entries.size());
    long referenced = 0;
    for (Entry e : entries) {
      Entry old = e.isFile() ? before.get(e.path()) : null;
      if (old == null || e.size() == 0 || !unchanged(e, old)) {
        out.add(e);
        continue;
      }
      List<Extent> refs = new ArrayList<>(old.extents().size());
      for (Extent x : old.extents()) {
        // The base's own shards are base 1 here; its base k is base k + 1.
        refs.add(x.inImage(x.image() + 1));
      }
      out.add(e.withExtents(refs));
      referenced += e.size();
    }
    return compact(out, bases, base.depth() + 1, referenced);
  }

  static boolean unchanged(Entry now, Entry old) {
    return old.flags() == 0 && now.flags() == 0
        && now.size() == old.size()
        && now.mode() == old.mode()
        && now.mtimeSeconds() == old.mtimeSeconds() && now.mtimeNanos() == old.mtimeNanos()
        && now.ctimeSeconds() == old.ctimeSeconds() && now.ctimeNanos() == old.ctimeNanos()
        && now.inode() == old.inode()
        && !old.extents().isEmpty();
  }

  /**
   * The bases {@code entries} reference, keeping the direct base (index 1) even when nothing is
   * left in it (it is the image's parent, which retention and {@code images} follow), and the
   * entries with their references renumbered to match.
   */
  static Result compact(List<Entry> entries, List<Catalog.Base> bases, int depth,
      long referencedBytes) {
    boolean[] used = new boolean[bases.size() + 1];
    used[1] = !bases.isEmpty();
    for (Entry e : entries) {
      for (Extent x : e.extents()) {
        used[x.image()] |= x.isReference();
      }
    }
    int[] renumber = new int[used.length];
    List<Catalog.Base> kept = new ArrayList<>();
    for (int i = 1; i < used.length; i++) {
      if (used[i]) {
        kept.add(bases.get(i - 1));
        renumber[i] = kept.size();
      }
    }
    if (kept.size() == bases.size()) {
      return new Result(entries, bases, depth, referencedBytes);
    }
    List<Entry> out = new ArrayList<>(entries.size());
    for (Entry e : entries) {
      if (e.extents().stream().noneMatch(Extent::isReference)) {
        out.add(e);
        continue;
      }
      out.add(e.withExtents(e.extents().stream()
          .map(x -> x.isReference() ? x.inImage(renumber[x.image()]) : x).toList()));
    }
    return new Result(out, kept, depth, referencedBytes);
  }
}

package io.beamsave.transforms.shard;

import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
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
   * Plans entries against one base one at a time, as a walk in path order meets them beside
   * the base's entries at the same paths (read page by page), so that a base of any size costs
   * a page of memory. Afterwards, {@link #renumbering} says how the references must be
   * renumbered if some of the base's own bases are no longer referenced.
   */
  public static final class Merge {
    private final List<Catalog.Base> bases;
    private final int depth;
    private final boolean[] used;
    private long referencedBytes;

    /**
     * @param base the base's catalog (its entries are not needed), read and checked
     * @param baseLocation where the base is, as the new catalog records it
     */
    public Merge(Catalog base, String baseLocation) {
      bases = new ArrayList<>(1 + base.bases().size());
      bases.add(base.asBase(baseLocation));
      bases.addAll(base.bases());
      depth = base.depth() + 1;
      used = new boolean[bases.size() + 1];
      used[1] = true; // The direct base is kept even when nothing is left in it.
    }

    /** {@code now} as the new image records it, given {@code old}, the base's entry there. */
    public Entry plan(Entry now, Entry old) {
      if (old == null || !now.isFile() || !old.isFile() || now.size() == 0
          || !unchanged(now, old)) {
        return now;
      }
      List<Extent> refs = new ArrayList<>(old.extents().size());
      for (Extent x : old.extents()) {
        // The base's own shards are base 1 here; its base k is base k + 1.
        Extent r = x.inImage(x.image() + 1);
        used[r.image()] = true;
        refs.add(r);
      }
      referencedBytes += now.size();
      return now.withExtents(refs);
    }

    public long referencedBytes() {
      return referencedBytes;
    }

    public int depth() {
      return depth;
    }

    /** The new image's bases: those referenced, and the direct base. */
    public List<Catalog.Base> bases() {
      List<Catalog.Base> kept = new ArrayList<>();
      for (int i = 1; i < used.length; i++) {
        if (used[i]) {
          kept.add(bases.get(i - 1));
        }
      }
      return kept;
    }

    /**
     * For each base index the planned entries use, the index it has among {@link #bases}; null
     * when every base is kept, so that nothing need be renumbered.
     */
    public int[] renumbering() {
      int[] renumber = new int[used.length];
      int kept = 0;
      for (int i = 1; i < used.length; i++) {
        if (used[i]) {
          renumber[i] = ++kept;
        }
      }
      return kept == bases.size() ? null : renumber;
    }
  }

  /** {@code e} with its references renumbered by {@code renumber} ({@link Merge#renumbering}). */
  public static Entry renumbered(Entry e, int[] renumber) {
    if (renumber == null || e.extents().stream().noneMatch(Extent::isReference)) {
      return e;
    }
    return e.withExtents(e.extents().stream()
        .map(x -> x.isReference() ? x.inImage(renumber[x.image()]) : x).toList());
  }

  /**
   * Plans {@code entries}, held in memory, against {@code base}'s: what {@link Merge} does one
   * entry at a time.
   *
   * @param base the base's catalog, read and checked
   * @param baseLocation where the base is, as the new catalog records it
   */
  public static Result against(List<Entry> entries, Catalog base, String baseLocation) {
    Map<PathBytes, Entry> before = new HashMap<>(base.entries().size() * 2);
    for (Entry e : base.entries()) {
      before.put(e.path(), e);
    }
    Merge merge = new Merge(base, baseLocation);
    List<Entry> planned = new ArrayList<>(entries.size());
    for (Entry e : entries) {
      planned.add(merge.plan(e, before.get(e.path())));
    }
    int[] renumber = merge.renumbering();
    List<Entry> out = renumber == null ? planned
        : planned.stream().map(e -> renumbered(e, renumber)).toList();
    return new Result(out, merge.bases(), merge.depth(), merge.referencedBytes());
  }

  /**
   * Whether a file found now is the one {@code old} describes, which an incremental save
   * references in its base.
   */
  public static boolean unchanged(Entry now, Entry old) {
    return old.flags() == 0 && now.flags() == 0
        && now.size() == old.size()
        && now.mode() == old.mode()
        && now.mtimeSeconds() == old.mtimeSeconds() && now.mtimeNanos() == old.mtimeNanos()
        && now.ctimeSeconds() == old.ctimeSeconds() && now.ctimeNanos() == old.ctimeNanos()
        && now.inode() == old.inode()
        && !old.extents().isEmpty();
  }
}

package io.beamsave.transforms.shard;

import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.ExtentDigest;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.RangeDigest;
import io.beamsave.transforms.image.catalog.Ranges;
import java.io.IOException;
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
    /** The most threads that compare one file's ranges, and the fewest ranges each takes. */
    private static final int COMPARERS = Math.min(4, Runtime.getRuntime().availableProcessors());

    private static final int RANGES_A_PART = 32;
    private final List<Catalog.Base> bases;
    private final int depth;
    private final boolean[] used;
    private long referencedBytes;
    private long comparedBytes;

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
      return now.withExtents(refs).withRanges(old.ranges());
    }

    /**
     * {@code now}, a file changed since {@code old} (the base's record of it, or of the file it
     * was renamed from) whose ranges {@link #comparesRanges} says are worth comparing, with the
     * ranges whose bytes are the base's referenced there and the rest {@link
     * ShardPlanner#toPlace to be stored}; {@code now} as it is if {@code file} changed while it
     * was read or no range is the same. What it references counts only once {@link #keep}
     * takes it: the caller checks first that the file was the one listed all along.
     */
    public Entry planRanges(Entry now, Entry old, FileBytes file) throws IOException {
      int shift = old.ranges().shift();
      int count = Math.toIntExact(Ranges.countFor(now.size(), shift));
      byte[] digests = new byte[count * Ranges.DIGEST_SIZE];
      comparedBytes += now.size();
      // A large file is compared in parts, one a core: reading and hashing take a core each
      // (SHA-256 runs at about 1.6 GB/s, a read from the page cache at 4). A reference that
      // spans parts is cut in two there.
      int parts = Math.max(1, Math.min(Math.min(COMPARERS, count / RANGES_A_PART), count));
      List<java.util.concurrent.CompletableFuture<List<Extent>>> done = new ArrayList<>();
      for (int p = 1; p < parts; p++) {
        int from = (int) ((long) count * p / parts);
        int to = (int) ((long) count * (p + 1) / parts);
        done.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
          try {
            return comparePart(now, old, file, from, to, digests);
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }, r -> {
          Thread t = new Thread(r, "compare-ranges");
          t.setDaemon(true);
          t.start();
        }));
      }
      List<List<Extent>> all = new ArrayList<>();
      Throwable failed = null;
      try {
        all.add(comparePart(now, old, file, 0, (int) ((long) count / parts), digests));
      } catch (IOException | RuntimeException e) {
        failed = e;
      }
      // Every part is waited for, failed or not: the file is closed once this returns.
      for (var d : done) {
        try {
          all.add(d.join());
        } catch (java.util.concurrent.CompletionException e) {
          Throwable cause = e.getCause() instanceof java.io.UncheckedIOException io
              ? io.getCause() : e.getCause();
          failed = failed == null ? cause : failed;
        }
      }
      if (failed instanceof IOException io) {
        throw io;
      }
      if (failed instanceof RuntimeException r) {
        throw r;
      }
      if (failed instanceof Error err) {
        throw err;
      }
      List<Extent> out = new ArrayList<>();
      boolean referenced = false;
      for (List<Extent> part : all) {
        if (part == null) {
          return now;
        }
        for (Extent x : part) {
          Extent last = out.isEmpty() ? null : out.get(out.size() - 1);
          if (last != null && ShardPlanner.isToPlace(last) && ShardPlanner.isToPlace(x)) {
            out.set(out.size() - 1, ShardPlanner.toPlace(last.length() + x.length()));
          } else {
            out.add(x);
          }
          referenced |= x.isReference();
        }
      }
      return referenced ? now.withExtents(out).withRanges(new Ranges(shift, digests)) : now;
    }

    /** {@code planned}, from {@link #planRanges}, taken: the bases it references are kept. */
    public Entry keep(Entry planned) {
      for (Extent x : planned.extents()) {
        if (x.isReference()) {
          used[x.image()] = true;
          referencedBytes += x.length();
        }
      }
      return planned;
    }

    /**
     * Ranges {@code from} to {@code to} of {@code now} compared with {@code old}'s: their
     * extents in file order, references and bytes to store; null if the file could not be read
     * as listed. Each range's digest goes into {@code digests}, at its place.
     */
    private static List<Extent> comparePart(Entry now, Entry old, FileBytes file, int from,
        int to, byte[] digests) throws IOException {
      Ranges before = old.ranges();
      int shift = before.shift();
      long range = 1L << shift;
      byte[] buf = new byte[(int) Math.min(range, now.size())];
      RangeDigest.Hasher sha = new RangeDigest.Hasher();
      List<Extent> out = new ArrayList<>();
      BaseBytes base = new BaseBytes(old.extents());
      long ownLength = 0;
      try (ExtentDigest xx = new ExtentDigest()) {
        Extent run = null;
        for (int k = from; k < to; k++) {
          long offset = (long) k << shift;
          int length = (int) Math.min(range, now.size() - offset);
          if (!file.read(offset, buf, length)) {
            return null;
          }
          sha.update(buf, 0, length);
          byte[] d = sha.digest();
          System.arraycopy(d, 0, digests, k * Ranges.DIGEST_SIZE, Ranges.DIGEST_SIZE);
          boolean same = k < before.count() && length == Math.min(range, old.size() - offset)
              && before.rangeIs(k, d);
          if (!same) {
            run = finish(run, xx, out);
            ownLength += length;
            continue;
          }
          if (ownLength > 0) {
            out.add(ShardPlanner.toPlace(ownLength));
            ownLength = 0;
          }
          for (int at = 0; at < length; ) {
            Extent b = base.at(offset + at);
            long into = offset + at - base.start();
            int take = (int) Math.min(length - at, b.length() - into);
            int image = b.image() + 1;
            long where = b.offset() + into;
            if (run == null || run.image() != image || run.shard() != b.shard()
                || run.offset() + run.length() != where) {
              run = finish(run, xx, out);
              run = new Extent(image, b.shard(), where, 0, null);
            }
            run = new Extent(image, b.shard(), run.offset(), run.length() + take, null);
            xx.update(buf, at, take);
            at += take;
          }
        }
        finish(run, xx, out);
      }
      if (ownLength > 0) {
        out.add(ShardPlanner.toPlace(ownLength));
      }
      return out;
    }

    /** Adds {@code run}, the reference being made, with its digest; none now. */
    private static Extent finish(Extent run, ExtentDigest xx, List<Extent> out) {
      if (run != null) {
        out.add(run.withDigest(xx.digest()));
        xx.reset();
      }
      return null;
    }

    public long referencedBytes() {
      return referencedBytes;
    }

    /** The bytes of changed files read to compare their ranges with the base's. */
    public long comparedBytes() {
      return comparedBytes;
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

  /**
   * Whether {@code now}, a file found changed since {@code old}, is compared with it range by
   * range: both record their ranges (at the size a save cuts them), and the base saved it whole.
   */
  public static boolean comparesRanges(Entry now, Entry old) {
    return old != null && now.isFile() && old.isFile() && old.flags() == 0
        && now.flags() == 0
        && Ranges.recordedFor(now.size(), Ranges.DEFAULT_SHIFT)
        && old.ranges().shift() == Ranges.DEFAULT_SHIFT && !old.ranges().isNone();
  }

  /** A file's bytes, as a changed file is read to compare its ranges with its base's. */
  public interface FileBytes {
    /**
     * Reads {@code length} bytes at {@code offset} into {@code buf}; false if the file is no
     * longer the one listed (changed, shorter, gone), and so is stored whole.
     */
    boolean read(long offset, byte[] buf, int length) throws IOException;
  }

  /** A base file's extents, found by file offset, in increasing order of asking. */
  private static final class BaseBytes {
    private final List<Extent> extents;
    private int index;
    private long start;

    BaseBytes(List<Extent> extents) {
      this.extents = extents;
    }

    /** The extent holding the file's byte at {@code offset}; {@link #start} is where it begins. */
    Extent at(long offset) {
      while (start + extents.get(index).length() <= offset) {
        start += extents.get(index).length();
        index++;
      }
      return extents.get(index);
    }

    long start() {
      return start;
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

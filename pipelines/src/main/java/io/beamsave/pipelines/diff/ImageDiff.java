package io.beamsave.pipelines.diff;

import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.CatalogCursor;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.Meta;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.image.catalog.Ranges;
import io.beamsave.transforms.read.FileReads;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ImageSources;
import java.io.IOException;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What changed from one image's tree to another's, from their catalogs, walked side by side in
 * path order a page at a time. A file's content is the same when its bytes are the same pieces
 * of the same image (an incremental image's unchanged file and the file in its base), or when
 * its pieces have the same lengths and digests; only where neither answers (pieces cut
 * elsewhere, by another shard size) are the bytes read, and compared.
 */
public final class ImageDiff {
  /** What happened to a path. */
  public enum Change {
    ADDED("+"),
    REMOVED("-"),
    /** The bytes of a file, a link's target or a device's number. */
    CONTENT("M"),
    /** Only mode, owner, mtime or extended attributes. */
    METADATA("U"),
    /** Another kind of entry at the same path. */
    TYPE("T");

    private final String marker;

    Change(String marker) {
      this.marker = marker;
    }

    /** As {@code restic diff} marks it. */
    public String marker() {
      return marker;
    }
  }

  /** One path's change; {@code before} null when added, {@code after} when removed. */
  public record Difference(Change change, Entry before, Entry after) {
    public Entry entry() {
      return after != null ? after : before;
    }

    /**
     * For a file changed in content whose images both record its {@link Ranges} (format 13
     * on): the bytes of the ranges that differ, or that it gained or lost; -1 otherwise.
     */
    public long changedBytes() {
      if (change != Change.CONTENT || !comparableRanges(before, after)) {
        return -1;
      }
      Ranges p = before.ranges();
      Ranges q = after.ranges();
      long range = p.rangeSize();
      long changed = 0;
      for (int k = 0; k < Math.max(p.count(), q.count()); k++) {
        long start = (long) k * range;
        long inP = Math.max(0, Math.min(range, before.size() - start));
        long inQ = Math.max(0, Math.min(range, after.size() - start));
        if (k >= p.count() || k >= q.count() || inP != inQ || !p.sameRange(k, q, k)) {
          changed += Math.max(inP, inQ);
        }
      }
      return changed;
    }
  }

  /** Whether both are files whose ranges were recorded alike, and so compare range by range. */
  static boolean comparableRanges(Entry x, Entry y) {
    return x != null && y != null && x.isFile() && y.isFile() && !x.ranges().isNone()
        && !y.ranges().isNone() && x.ranges().shift() == y.ranges().shift()
        && x.flags() == 0 && y.flags() == 0;
  }

  /** Hears each difference, in path order. */
  @FunctionalInterface
  public interface Listener {
    void on(Difference d) throws IOException;
  }

  /** Counts by change, and the bytes of files added and removed. */
  public static final class Summary {
    public final long[] counts = new long[Change.values().length];
    public long addedBytes;
    public long removedBytes;
    /** Files whose bytes were read because their catalogs could not tell. */
    public long filesRead;

    public long count(Change c) {
      return counts[c.ordinal()];
    }
  }

  private final ImageRef a;
  private final ImageRef b;
  private CatalogHead headA;
  private CatalogHead headB;
  private FileReads readsA;
  private FileReads readsB;

  private ImageDiff(ImageRef a, ImageRef b) {
    this.a = a;
    this.b = b;
  }

  /** Compares the tree of {@code a} (before) with that of {@code b} (after). */
  public static Summary run(ImageRef a, ImageRef b, Listener listener) {
    ImageDiff d = new ImageDiff(a, b);
    try (ImageSource srcA = ImageSources.open(a.location(), a.s3());
        ImageSource srcB = ImageSources.open(b.location(), b.s3())) {
      d.headA = ImageReader.readHead(srcA, a.keys(), false);
      d.headB = ImageReader.readHead(srcB, b.keys(), false);
      return d.walk(new CatalogCursor(srcA, d.headA), new CatalogCursor(srcB, d.headB),
          listener);
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    } finally {
      d.closeReads();
    }
  }

  private Summary walk(CatalogCursor ca, CatalogCursor cb, Listener listener)
      throws IOException {
    Summary s = new Summary();
    Entry x = ca.next();
    Entry y = cb.next();
    while (x != null || y != null) {
      int c = x == null ? 1 : y == null ? -1 : PathOrder.compare(x.path(), y.path());
      Difference d;
      if (c < 0) {
        d = new Difference(Change.REMOVED, x, null);
        s.removedBytes += x.isFile() ? x.size() : 0;
        x = ca.next();
      } else if (c > 0) {
        d = new Difference(Change.ADDED, null, y);
        s.addedBytes += y.isFile() ? y.size() : 0;
        y = cb.next();
      } else {
        Change change = compare(x, y, s);
        d = change == null ? null : new Difference(change, x, y);
        x = ca.next();
        y = cb.next();
      }
      if (d != null) {
        s.counts[d.change().ordinal()]++;
        listener.on(d);
      }
    }
    return s;
  }

  /** How {@code y} differs from {@code x} at the same path; null if not at all. */
  private Change compare(Entry x, Entry y, Summary s) throws IOException {
    if (x.type() != y.type()) {
      return Change.TYPE;
    }
    boolean same = switch (x.type()) {
      case FILE -> sameBytes(x, y, s);
      case SYMLINK, HARDLINK -> Objects.equals(x.linkTarget(), y.linkTarget());
      case CHAR_DEVICE, BLOCK_DEVICE -> x.meta().rdev() == y.meta().rdev();
      case DIRECTORY, FIFO -> true;
    };
    if (!same) {
      return Change.CONTENT;
    }
    boolean sameMeta = x.type() == EntryType.HARDLINK
        || x.mode() == y.mode() && x.uid() == y.uid() && x.gid() == y.gid()
            && x.mtimeSeconds() == y.mtimeSeconds() && x.mtimeNanos() == y.mtimeNanos()
            && sameMeta(x.meta(), y.meta()) && x.unreadable() == y.unreadable();
    return sameMeta ? null : Change.METADATA;
  }

  private static boolean sameMeta(Meta p, Meta q) {
    return Arrays.equals(p.user(), q.user()) && Arrays.equals(p.group(), q.group())
        && p.xattrs().equals(q.xattrs());
  }

  private boolean sameBytes(Entry x, Entry y, Summary s) throws IOException {
    if (x.size() != y.size()) {
      return false;
    }
    if (comparableRanges(x, y)) {
      // The SHA-256 of every range: as good as reading both.
      return x.ranges().equals(y.ranges());
    }
    List<Extent> ex = x.extents();
    List<Extent> ey = y.extents();
    if (ex.size() == ey.size()) {
      boolean samePieces = true;
      boolean sameDigests = true;
      for (int i = 0; i < ex.size(); i++) {
        Extent p = ex.get(i);
        Extent q = ey.get(i);
        samePieces &= p.length() == q.length() && p.shard() == q.shard()
            && p.offset() == q.offset()
            && imageOf(headA.catalog(), p).equals(imageOf(headB.catalog(), q));
        sameDigests &= p.length() == q.length() && Arrays.equals(p.digest(), q.digest());
      }
      if (samePieces || sameDigests) {
        return true;
      }
      if (lengths(ex).equals(lengths(ey))) {
        return false;
      }
    }
    // Cut into other pieces: only the bytes tell.
    s.filesRead++;
    return Arrays.equals(digestOf(x, true), digestOf(y, false));
  }

  private static List<Long> lengths(List<Extent> extents) {
    return extents.stream().map(Extent::length).toList();
  }

  /** The image whose shards hold {@code x}: the image itself or one of its bases. */
  private static ImageId imageOf(Catalog c, Extent x) {
    if (x.image() == 0) {
      return c.id();
    }
    if (x.image() < 0 || x.image() > c.bases().size()) {
      return ImageId.random();
    }
    return c.bases().get(x.image() - 1).id();
  }

  private byte[] digestOf(Entry e, boolean first) throws IOException {
    if (first && readsA == null) {
      readsA = reads(a, headA);
    } else if (!first && readsB == null) {
      readsB = reads(b, headB);
    }
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException impossible) {
      throw new IllegalStateException(impossible);
    }
    (first ? readsA : readsB).copy(e, new OutputStream() {
      @Override
      public void write(int v) {
        md.update((byte) v);
      }

      @Override
      public void write(byte[] buf, int off, int len) {
        md.update(buf, off, len);
      }
    });
    return md.digest();
  }

  private static FileReads reads(ImageRef ref, CatalogHead head) {
    ImageChain chain = ImageChain.resolveHeads(ref.member(head.catalog()), ref.s3(), ref.keys(),
        ref.baseLocations());
    return new FileReads(chain, ref.s3(), 0);
  }

  private void closeReads() {
    for (FileReads r : new FileReads[] {readsA, readsB}) {
      if (r != null) {
        try {
          r.close();
        } catch (IOException ignored) {
          // The diff is done; a source that fails to close changes nothing in it.
        }
      }
    }
  }
}

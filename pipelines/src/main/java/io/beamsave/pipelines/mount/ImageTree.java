package io.beamsave.pipelines.mount;

import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.CatalogWalk;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.read.FileReads;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ImageSources;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One image's tree, as a mount shows it: entries looked up by path and directories listed from
 * the catalog's pages (only those that hold them), and file bytes read from the blocks that hold
 * them ({@link FileReads}), in the image or its bases. Listings are cached, at most {@link
 * #CACHED_ENTRIES} entries in all, the least recently used forgotten first: a catalog of any
 * size mounts in bounded memory. Thread-safe.
 */
public final class ImageTree implements AutoCloseable {
  /** Entries of listed directories kept at most, over all directories. */
  static final int CACHED_ENTRIES = 200_000;

  /** Decoded blocks kept at most, in bytes. */
  static final long CACHED_BLOCK_BYTES = 64L << 20;

  private final ImageRef ref;
  private final CatalogHead head;
  private final ImageSource catalogSource;
  private final CatalogWalk walk;
  private final FileReads reads;
  private final Entry root;
  /** How many names each file with later names (hard links) has, by its first name. */
  private final Map<PathBytes, Integer> links = new HashMap<>();
  private final LinkedHashMap<PathBytes, Dir> dirs = new LinkedHashMap<>(64, 0.75f, true);
  private long cachedEntries;
  private boolean modesSayAll;

  /** A directory's entries, in catalog order, and by path. */
  record Dir(List<Entry> entries, Map<PathBytes, Entry> byPath) {}

  private ImageTree(ImageRef ref, CatalogHead head, ImageSource catalogSource, FileReads reads) {
    this.ref = ref;
    this.head = head;
    this.catalogSource = catalogSource;
    this.walk = new CatalogWalk(catalogSource, head);
    this.reads = reads;
    Entry r = head.catalog().root();
    long saved = head.catalog().createdMillis() / 1000;
    this.root = r != null ? r : new Entry(PathBytes.of(""), EntryType.DIRECTORY, 0, 0555, 0, 0,
        saved, 0, saved, 0, 0, 0, null, List.of());
  }

  /**
   * Opens the image {@code ref} names (its bases found as a restore finds them), reading its
   * catalog once through to count hard links and fill the listing cache.
   */
  public static ImageTree open(ImageRef ref) {
    ImageSource src = null;
    try {
      src = ImageSources.open(ref.location(), ref.s3());
      CatalogHead head = ImageReader.readHead(src, ref.keys(), false);
      ImageChain chain = ImageChain.resolveHeads(ref.member(head.catalog()), ref.s3(),
          ref.keys(), ref.baseLocations());
      ImageTree tree = new ImageTree(ref, head, src,
          new FileReads(chain, ref.s3(), CACHED_BLOCK_BYTES));
      src = null;
      tree.countLinks();
      tree.reads.prepare();
      return tree;
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    } finally {
      if (src != null) {
        try {
          src.close();
        } catch (IOException ignored) {
          // The error that got us here is the one to report.
        }
      }
    }
  }

  private void countLinks() throws IOException {
    synchronized (this) {
      // The walk that counts links is the one that may look at every entry's ACL: knowing
      // whether the mode bits say all costs a mount nothing more.
      boolean[] modes = {AccessCheck.modesSayAll(root)};
      walk.walk(PathBytes.of(""), e -> {
        if (e.isHardLink() && e.linkTarget() != null) {
          links.merge(e.linkTarget(), 2, (a, b) -> a + 1);
        }
        modes[0] &= AccessCheck.modesSayAll(e);
      });
      modesSayAll = modes[0];
      dir(PathBytes.of(""));
    }
  }

  public CatalogHead head() {
    return head;
  }

  /** The library root: the image's recorded root, or a stand-in for one of format 1. */
  public Entry root() {
    return root;
  }

  /**
   * Whether every entry's mode bits say all its access ACL says (no entry has one beyond them):
   * then the kernel's check of the mode bits is the whole check.
   */
  public synchronized boolean modesSayAll() {
    return modesSayAll;
  }

  /** How many names the file {@code e} (a regular file, or a later name of one) has. */
  public synchronized int linkCount(Entry e) {
    PathBytes first = e.isHardLink() ? e.linkTarget() : e.path();
    return first == null ? 1 : links.getOrDefault(first, 1);
  }

  /** The entry at {@code path} (empty for the root), or null if the image has none. */
  public synchronized Entry lookup(PathBytes path) throws IOException {
    if (path.isEmpty()) {
      return root;
    }
    PathBytes parent = path.parent();
    Entry p = parent == null ? root : lookup(parent);
    if (p == null || p.type() != EntryType.DIRECTORY) {
      return null;
    }
    return dir(parent == null ? PathBytes.of("") : parent).byPath().get(path);
  }

  /** The entries of the directory at {@code path}, in catalog order. */
  public synchronized List<Entry> list(PathBytes path) throws IOException {
    return dir(path).entries();
  }

  /**
   * The file a later name stands for: the regular file at its {@code linkTarget}, checked to
   * be one (the catalog is untrusted); else null.
   */
  public Entry fileOf(Entry e) throws IOException {
    if (!e.isHardLink()) {
      return e.isFile() ? e : null;
    }
    Entry target = e.linkTarget() == null ? null : lookup(e.linkTarget());
    return target != null && target.isFile() && !target.isHardLink() ? target : null;
  }

  /** Reads bytes of the regular file {@code file}; see {@link FileReads#read}. */
  public int read(Entry file, long offset, byte[] buf, int len, FileReads.Cursor cursor)
      throws IOException {
    return reads.read(file, offset, buf, 0, len, cursor);
  }

  private Dir dir(PathBytes path) throws IOException {
    Dir d = dirs.get(path);
    if (d != null) {
      return d;
    }
    // One walk of the subtree lists this directory, and those beneath it while the cache
    // has room: a tree read through (find, diff -r) costs a walk per level, not per directory.
    Map<PathBytes, List<Entry>> found = new LinkedHashMap<>();
    found.put(path, new ArrayList<>());
    long[] kept = {0};
    boolean[] whole = {true};
    walk.walk(path, e -> {
      if (e.path().equals(path)) {
        return;
      }
      PathBytes parent = e.path().parent();
      PathBytes p = parent == null ? PathBytes.of("") : parent;
      boolean own = p.equals(path);
      if (!own && kept[0] >= CACHED_ENTRIES / 2) {
        whole[0] = false;
        return;
      }
      List<Entry> list = found.get(p);
      if (list == null) {
        if (!own && !whole[0]) {
          return;
        }
        list = new ArrayList<>();
        found.put(p, list);
      }
      list.add(e);
      kept[0]++;
      if (e.type() == EntryType.DIRECTORY && whole[0]) {
        found.putIfAbsent(e.path(), new ArrayList<>());
      }
    });
    if (!whole[0]) {
      found.keySet().retainAll(List.of(path));
    }
    for (Map.Entry<PathBytes, List<Entry>> f : found.entrySet()) {
      Map<PathBytes, Entry> byPath = new HashMap<>();
      for (Entry e : f.getValue()) {
        byPath.put(e.path(), e);
      }
      Dir old = dirs.put(f.getKey(), new Dir(List.copyOf(f.getValue()), byPath));
      cachedEntries += f.getValue().size() - (old == null ? 0 : old.entries().size());
    }
    d = dirs.get(path);
    var it = dirs.entrySet().iterator();
    while (cachedEntries > CACHED_ENTRIES && it.hasNext()) {
      Map.Entry<PathBytes, Dir> eldest = it.next();
      if (!eldest.getKey().equals(path)) {
        cachedEntries -= eldest.getValue().entries().size();
        it.remove();
      }
    }
    return d;
  }

  @Override
  public synchronized void close() throws IOException {
    try {
      reads.close();
      catalogSource.close();
    } finally {
      ref.close();
    }
  }
}

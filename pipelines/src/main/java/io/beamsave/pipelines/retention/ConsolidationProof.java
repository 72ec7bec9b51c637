package io.beamsave.pipelines.retention;

import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.io.ReadTask;
import io.beamsave.transforms.store.ImageChain;
import io.beamsave.transforms.store.ImageSources;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Whether a consolidated image may stand for the image it claims to have been folded from, so
 * that {@code prune} may delete the original: a claim is a line in a catalog, and anyone who
 * may write where the images are can write a catalog. It is believed only once read to be true:
 *
 * <ul>
 *   <li>both catalogs open (an encrypted one with a key given to prune; a plain image never
 *       stands for an encrypted one), and the consolidated image is self-contained;
 *   <li>the consolidated image holds every entry of the original, with the same name, type,
 *       metadata and, for a file, the same extents' lengths and digests;
 *   <li>every block of the consolidated image that holds those files reads back, and every
 *       file's digest matches: its bytes are there.
 * </ul>
 *
 * Reading the consolidated image whole costs what a verify does; it is done once per claim, and
 * only for an original that would otherwise be deleted.
 */
final class ConsolidationProof {
  private final S3Settings s3;
  private final Keys keys;
  private final Map<String, String> checked = new HashMap<>();

  ConsolidationProof(S3Settings s3, Keys keys) {
    this.s3 = s3;
    this.keys = keys;
  }

  /**
   * Null if {@code consolidated} is proved to hold all of {@code original}, else why not, in a
   * few words.
   */
  String disproof(PrunePlan.Candidate consolidated, PrunePlan.Candidate original) {
    return checked.computeIfAbsent(consolidated.image().uri() + "\n" + original.image().uri(),
        k -> check(consolidated, original));
  }

  private String check(PrunePlan.Candidate consolidated, PrunePlan.Candidate original) {
    if (consolidated.lineage() == null || consolidated.lineage().fromHeader()) {
      return "it does not open with the keys given";
    }
    try {
      Catalog c = StoredImages.catalog(consolidated.image(), s3, keys);
      Catalog o = StoredImages.catalog(original.image(), s3, keys);
      if (c == null || o == null) {
        return "it is stored with transfer compression and cannot be read in place";
      }
      if (o.encrypted() && !c.encrypted()) {
        return "it is not encrypted, and the original is";
      }
      if (c.origin() == null || !c.bases().isEmpty()) {
        return "its catalog does not make it a full, consolidated image";
      }
      String differs = sameTree(o, c);
      if (differs != null) {
        return differs;
      }
      return unreadable(consolidated.image().uri(), c);
    } catch (IOException | RuntimeException e) {
      return StoredImages.firstLine(e);
    }
  }

  /** Null if {@code c} holds every entry of {@code o} as it was saved, else what differs. */
  static String sameTree(Catalog o, Catalog c) {
    if (!sameEntry(o.root(), c.root())) {
      return "its library root differs from the original's";
    }
    List<Entry> a = o.entries();
    List<Entry> b = c.entries();
    if (a.size() != b.size()) {
      return "it holds " + b.size() + " entries, the original " + a.size();
    }
    for (int i = 0; i < a.size(); i++) {
      if (!sameEntry(a.get(i), b.get(i))) {
        return "its entry " + b.get(i).path() + " is not the original's " + a.get(i).path();
      }
    }
    return null;
  }

  private static boolean sameEntry(Entry x, Entry y) {
    if (x == null || y == null) {
      return x == y;
    }
    if (!x.path().equals(y.path()) || x.type() != y.type() || x.flags() != y.flags()
        || x.mode() != y.mode() || x.uid() != y.uid() || x.gid() != y.gid()
        || x.mtimeSeconds() != y.mtimeSeconds() || x.mtimeNanos() != y.mtimeNanos()
        || x.size() != y.size() || !Objects.equals(x.linkTarget(), y.linkTarget())
        || x.extents().size() != y.extents().size()) {
      return false;
    }
    for (int j = 0; j < x.extents().size(); j++) {
      Extent p = x.extents().get(j);
      Extent q = y.extents().get(j);
      if (p.length() != q.length() || !java.util.Arrays.equals(p.digest(), q.digest())) {
        return false;
      }
    }
    return true;
  }

  /** Null if every file of {@code c} reads back from its own shards, else the first failure. */
  private String unreadable(String location, Catalog c) throws IOException {
    List<Entry> files = c.entries().stream().filter(Entry::isFile).toList();
    try (ImageSource src = ImageSources.open(location, s3)) {
      for (ReadTask t : ReadTask.forEntries(ImageChain.of(location, c), files)) {
        try (ShardReader reader = new ShardReader(t.blockSize())) {
          reader.read(src, location, c.key(), t.shard(), t.info(), t.pieces(),
              (piece, fileOffset, buf, off, len, zero) -> { });
        }
      }
    }
    return null;
  }
}

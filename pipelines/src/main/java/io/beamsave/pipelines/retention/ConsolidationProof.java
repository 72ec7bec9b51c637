package io.beamsave.pipelines.retention;

import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.read.ReadTask;
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
 *       file's digest matches: its bytes are there;
 *   <li>the bytes are the original's: the SHA-256 of every file piece of the consolidated image
 *       equals that of the same piece of the original, read through the original's chain. The
 *       catalogs' own digests (XXH64) find damage, not a forgery: bytes made to match them are
 *       easy to find.
 * </ul>
 *
 * Reading both images whole costs two verifies; it is done once per claim, and only for an
 * original that would otherwise be deleted.
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
      Map<String, byte[]> made = pieces(new ImageChain.Member(consolidated.image().uri(), c));
      Map<String, byte[]> was = pieces(new ImageChain.Member(original.image().uri(), o));
      for (Map.Entry<String, byte[]> e : was.entrySet()) {
        if (!java.security.MessageDigest.isEqual(e.getValue(), made.get(e.getKey()))) {
          return "file " + e.getKey().substring(0, e.getKey().lastIndexOf('@'))
              + " holds other bytes than the original's";
        }
      }
      return null;
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

  /**
   * The SHA-256 of every file piece of {@code image}, by path and offset in its file, read
   * through its chain with every block and digest checked (a failure throws, naming it).
   */
  private Map<String, byte[]> pieces(ImageChain.Member image) throws IOException {
    List<Entry> files = image.catalog().entries().stream().filter(Entry::isFile).toList();
    ImageChain chain = ImageChain.resolve(image, files, s3, keys);
    Map<String, ImageSource> sources = new HashMap<>();
    Map<String, byte[]> out = new HashMap<>();
    try {
      for (ReadTask t : ReadTask.forEntries(chain, files)) {
        ImageSource src = sources.get(t.image());
        if (src == null) {
          src = ImageSources.open(t.image(), s3);
          sources.put(t.image(), src);
        }
        Map<ShardReader.FileExtent, java.security.MessageDigest> open = new HashMap<>();
        try (ShardReader reader = new ShardReader(t.blockSize())) {
          reader.read(src, t.image(), chain.keys().get(t.image()), t.shard(), t.info(),
              t.pieces(), new ShardReader.Sink() {
                @Override
                public void write(ShardReader.FileExtent piece, long fileOffset, byte[] buf, int off,
                    int len, boolean zero) {
                  open.computeIfAbsent(piece, p -> sha256()).update(buf, off, len);
                }

                @Override
                public void pieceDone(ShardReader.FileExtent piece) {
                  java.security.MessageDigest d = open.remove(piece);
                  out.put(piece.path() + "@" + piece.fileOffset(),
                      (d == null ? sha256() : d).digest());
                }
              });
        }
      }
    } finally {
      for (ImageSource s : sources.values()) {
        s.close();
      }
    }
    return out;
  }

  private static java.security.MessageDigest sha256() {
    try {
      return java.security.MessageDigest.getInstance("SHA-256");
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}

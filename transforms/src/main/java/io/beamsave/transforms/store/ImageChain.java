package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.ShardInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * An image and the base images its files' bytes are in, each opened and checked to be the very
 * image the catalog recorded (its id and its catalog's digest). Member 0 is the image itself;
 * member {@code i} is base {@code i} ({@link Catalog#bases()}), or null where none of the files
 * a command reads has bytes in it: only the images a read needs are opened, and in parallel.
 *
 * <p>A base is looked for where it was when the image was saved, then beside the image under
 * the same name (a chain moved or downloaded together).
 */
public final class ImageChain {
  /** One image of the chain: where it was found, and its catalog. */
  public record Member(String location, Catalog catalog) {}

  private final List<Member> members;

  private ImageChain(List<Member> members) {
    this.members = members;
  }

  /** An image with nothing to resolve (or whose bases none of the reads needs). */
  public static ImageChain of(String location, Catalog catalog) {
    List<Member> m = new ArrayList<>();
    m.add(new Member(location, catalog));
    for (int i = 0; i < catalog.bases().size(); i++) {
      m.add(null);
    }
    return new ImageChain(m);
  }

  /** The bases whose shards hold bytes of {@code entries}, by index. */
  public static TreeSet<Integer> basesUsedBy(Iterable<Entry> entries) {
    TreeSet<Integer> used = new TreeSet<>();
    for (Entry e : entries) {
      for (Extent x : e.extents()) {
        if (x.isReference()) {
          used.add(x.image());
        }
      }
    }
    return used;
  }

  /**
   * Opens the bases of the image at {@code location} that {@code entries} need, checks each is
   * the image recorded, and that every extent of {@code entries} lies inside a shard of its base.
   */
  public static ImageChain resolve(
      String location, Catalog catalog, Iterable<Entry> entries, S3Settings s3) {
    return resolve(location, catalog, entries, s3, Keys.NONE);
  }

  /**
   * Like {@link #resolve(String, Catalog, Iterable, S3Settings)}, encrypted bases opened with
   * {@code keys}.
   */
  public static ImageChain resolve(
      String location, Catalog catalog, Iterable<Entry> entries, S3Settings s3, Keys keys) {
    return resolve(location, catalog, basesUsedBy(entries), entries, s3, keys);
  }

  /** Opens every base the image lists, checked as {@link #resolve} does. */
  public static ImageChain resolveAll(String location, Catalog catalog, S3Settings s3,
      Keys keys) {
    TreeSet<Integer> all = new TreeSet<>();
    for (int i = 1; i <= catalog.bases().size(); i++) {
      all.add(i);
    }
    return resolve(location, catalog, all, catalog.entries(), s3, keys);
  }

  private static ImageChain resolve(String location, Catalog catalog, TreeSet<Integer> needed,
      Iterable<Entry> entries, S3Settings s3, Keys keys) {
    ImageChain chain = of(location, catalog);
    List<CompletableFuture<Member>> opening = new ArrayList<>();
    for (int i : needed) {
      Catalog.Base b = catalog.bases().get(i - 1);
      opening.add(CompletableFuture.supplyAsync(() -> open(location, b, s3, keys)));
    }
    int k = 0;
    for (int i : needed) {
      try {
        chain.members.set(i, opening.get(k++).join());
      } catch (CompletionException e) {
        if (e.getCause() instanceof RuntimeException r) {
          throw r;
        }
        throw e;
      }
    }
    chain.checkReferences(location, entries);
    return chain;
  }

  /** Where base {@code b} of the image at {@code image} may be: as recorded, then beside it. */
  public static List<String> candidates(String image, String recorded) {
    List<String> out = new ArrayList<>();
    out.add(recorded);
    String name = nameOf(recorded);
    String beside;
    if (ObjectUri.isObject(image)) {
      beside = ObjectUri.parse(image, false).parent().child(name).toString();
    } else {
      Path parent = Path.of(image).toAbsolutePath().getParent();
      beside = parent == null ? name : parent.resolve(name).toString();
    }
    if (!beside.equals(recorded)) {
      out.add(beside);
    }
    return out;
  }

  private static String nameOf(String location) {
    int slash = location.lastIndexOf('/');
    return slash < 0 ? location : location.substring(slash + 1);
  }

  /**
   * The bases of the image at {@code location} that are stored at none of their {@link
   * #candidates}: only whether something is there is checked (cheap, unlike opening each), so a
   * save does not take as its base an image that could no longer be restored.
   */
  public static List<Catalog.Base> absentBases(String location, Catalog catalog, S3Settings s3) {
    List<Catalog.Base> absent = new ArrayList<>();
    for (Catalog.Base b : catalog.bases()) {
      if (candidates(location, b.location()).stream().noneMatch(w -> exists(w, s3))) {
        absent.add(b);
      }
    }
    return absent;
  }

  /** A base as the operator is told of it. */
  public static String describe(Catalog.Base b) {
    return b.location() + " (image " + b.id() + ", saved "
        + Instant.ofEpochMilli(b.createdMillis()) + ")";
  }

  private static Member open(String image, Catalog.Base b, S3Settings s3, Keys keys) {
    List<String> tried = candidates(image, b.location());
    for (String where : tried) {
      if (!exists(where, s3)) {
        continue;
      }
      Catalog c;
      try (ImageSource src = ImageSources.open(where, s3)) {
        c = ImageReader.readCatalog(src, keys);
      } catch (IOException | BeamsaveException e) {
        throw new BeamsaveException(image + ": base image " + where + " cannot be read: "
            + e.getMessage());
      }
      if (!c.id().equals(b.id())) {
        throw new BeamsaveException(image + ": base image " + where + " is another image (id "
            + c.id() + ", not " + b.id() + "): it was replaced since");
      }
      if (!Arrays.equals(c.digest(), b.catalogDigest())) {
        throw new BeamsaveException(image + ": base image " + where + " has a catalog other"
            + " than the one recorded: it was changed or damaged since");
      }
      return new Member(where, c);
    }
    throw new BeamsaveException(image + ": base image " + describe(b) + " is missing"
        + (tried.size() > 1 ? " (also looked for " + tried.get(1) + ")" : ""));
  }

  private static boolean exists(String where, S3Settings s3) {
    if (!ObjectUri.isObject(where)) {
      return Files.isRegularFile(Path.of(where));
    }
    ObjectUri uri = ObjectUri.parse(where, false);
    return Stores.bucketOf(uri, s3).stat(uri.key()).isPresent();
  }

  /** Every referenced extent names a shard of its base and lies inside it. */
  private void checkReferences(String image, Iterable<Entry> entries) {
    for (Entry e : entries) {
      for (Extent x : e.extents()) {
        if (!x.isReference()) {
          continue;
        }
        Member m = members.get(x.image());
        List<ShardInfo> shards = m.catalog().shards();
        if (x.shard() >= shards.size()
            || x.offset() > shards.get(x.shard()).rawLength() - x.length()) {
          throw new BeamsaveException(image + ": catalog: file " + e.path() + " references"
              + " bytes base image " + m.location() + " does not hold (shard " + x.shard()
              + ")");
        }
      }
    }
  }

  /** Member {@code i}: 0 the image, {@code i} its {@code i}th base; null if not opened. */
  public Member member(int i) {
    return members.get(i);
  }

  public Member top() {
    return members.get(0);
  }

  /** Every member opened, the image first. */
  public List<Member> opened() {
    return members.stream().filter(m -> m != null).toList();
  }

  /** The keys of the encrypted members opened, by location: what workers reading them need. */
  public java.util.Map<String, ImageKey> keys() {
    return keysOf(opened());
  }

  /** The keys of the encrypted images among {@code members}, by location. */
  public static java.util.Map<String, ImageKey> keysOf(List<Member> members) {
    java.util.Map<String, ImageKey> keys = new java.util.HashMap<>();
    for (Member m : members) {
      if (m.catalog().key() != null) {
        keys.put(m.location(), m.catalog().key());
      }
    }
    return keys;
  }
}

package io.beamsave.transforms.read;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.ExtentOverlaps;
import io.beamsave.transforms.image.catalog.ShardInfo;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
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
 * the same name (a chain moved or downloaded together), then under each location the operator
 * named ({@code lookIn}). Where it was saved is believed only inside the image's own store: a
 * local image's bases on this machine, an object's in its own bucket. A catalog is untrusted
 * input, and one that named another bucket would have this command read there with the
 * operator's credentials.
 */
public final class ImageChain {
  /** What {@link #check} has seen of the extents, for a catalog read page by page. */
  private ExtentOverlaps overlaps;

  /**
   * One image of the chain: where it was found, its catalog, and its {@link ImageSource#tag}
   * when it was read (empty if unknown), which workers reading it expect.
   */
  public record Member(String location, Catalog catalog, String tag) {
    public Member(String location, Catalog catalog) {
      this(location, catalog, "");
    }
  }

  private final List<Member> members;

  private ImageChain(List<Member> members) {
    this.members = members;
  }

  /** An image with nothing to resolve (or whose bases none of the reads needs). */
  public static ImageChain of(String location, Catalog catalog) {
    return of(new Member(location, catalog));
  }

  /** Like {@link #of(String, Catalog)}, the image known by its tag too. */
  public static ImageChain of(Member image) {
    Catalog catalog = image.catalog();
    List<Member> m = new ArrayList<>();
    m.add(image);
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
    return resolve(new Member(location, catalog), basesUsedBy(entries), false, entries, s3, keys,
        List.of());
  }

  /**
   * Like {@link #resolve(String, Catalog, Iterable, S3Settings, Keys)}, the image known by the
   * {@link ImageSource#tag} of the source its catalog was read from.
   */
  public static ImageChain resolve(
      Member image, Iterable<Entry> entries, S3Settings s3, Keys keys) {
    return resolve(image, entries, s3, keys, List.of());
  }

  /** Like {@link #resolve(Member, Iterable, S3Settings, Keys)}, bases also looked for in {@code lookIn}. */
  public static ImageChain resolve(Member image, Iterable<Entry> entries, S3Settings s3,
      Keys keys, List<String> lookIn) {
    return resolve(image, basesUsedBy(entries), false, entries, s3, keys, lookIn);
  }

  /** Opens every base the image lists, checked as {@link #resolve} does. */
  public static ImageChain resolveAll(String location, Catalog catalog, S3Settings s3,
      Keys keys) {
    return resolveAll(location, catalog, s3, keys, List.of());
  }

  /** Like {@link #resolveAll(String, Catalog, S3Settings, Keys)}, also looking in {@code lookIn}. */
  public static ImageChain resolveAll(String location, Catalog catalog, S3Settings s3,
      Keys keys, List<String> lookIn) {
    return resolve(new Member(location, catalog), allBases(catalog), true, catalog.entries(), s3,
        keys, lookIn);
  }

  /**
   * Opens every base the image lists, each by its catalog's head, for entries met later (a
   * catalog read page by page): {@link #check} each batch of them before it is read.
   */
  public static ImageChain resolveHeads(Member image, S3Settings s3, Keys keys,
      List<String> lookIn) {
    return resolve(image, allBases(image.catalog()), false, List.of(), s3, keys, lookIn);
  }

  private static TreeSet<Integer> allBases(Catalog catalog) {
    TreeSet<Integer> all = new TreeSet<>();
    for (int i = 1; i <= catalog.bases().size(); i++) {
      all.add(i);
    }
    return all;
  }

  /**
   * Checks entries met a batch at a time, each once, in a catalog read page by page: every
   * extent they reference lies inside a shard of its base, and no extent shares a byte with one
   * checked before ({@link ExtentOverlaps}, which a whole catalog's validation runs as it is
   * read).
   */
  public void check(Iterable<Entry> entries) {
    String image = top().location();
    checkReferences(image, entries);
    if (overlaps == null) {
      overlaps = new ExtentOverlaps(image);
    }
    try {
      for (Entry e : entries) {
        overlaps.add(e);
      }
    } catch (ImageException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }

  /**
   * Opens the bases {@code needed}; {@code whole}: with their whole catalogs, else their
   * catalogs' heads (shards, id, lineage: what reading files from them takes), which for a
   * paged catalog is a small part of it.
   */
  private static ImageChain resolve(Member image, TreeSet<Integer> needed, boolean whole,
      Iterable<Entry> entries, S3Settings s3, Keys keys, List<String> lookIn) {
    String location = image.location();
    Catalog catalog = image.catalog();
    ImageChain chain = of(image);
    List<CompletableFuture<Member>> opening = new ArrayList<>();
    for (int i : needed) {
      Catalog.Base b = catalog.bases().get(i - 1);
      opening.add(CompletableFuture.supplyAsync(
          () -> open(location, b, s3, keys, lookIn, whole)));
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
    return candidates(image, recorded, List.of());
  }

  /**
   * Where base {@code b} of the image at {@code image} may be: as recorded if that is in the
   * image's own store, then beside the image, then in each of {@code lookIn}, by its name.
   */
  public static List<String> candidates(String image, String recorded, List<String> lookIn) {
    List<String> out = new ArrayList<>();
    if (sameStore(image, recorded)) {
      out.add(recorded);
    }
    String name = nameOf(recorded);
    String beside = Location.of(image).sibling(name).toString();
    if (!out.contains(beside)) {
      out.add(beside);
    }
    for (String dir : lookIn) {
      String there = Location.of(dir).normalized().child(name).toString();
      if (!out.contains(there)) {
        out.add(there);
      }
    }
    return out;
  }

  /** Whether {@code other} lies in {@code image}'s store: this machine, or its bucket. */
  static boolean sameStore(String image, String other) {
    try {
      return Location.of(image).sameContainer(Location.of(other));
    } catch (BeamsaveException bad) {
      return false;
    }
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
      if (!stored(location, b, s3)) {
        absent.add(b);
      }
    }
    return absent;
  }

  /** Whether base {@code b} of the image at {@code location} is at one of its candidates. */
  public static boolean stored(String location, Catalog.Base b, S3Settings s3) {
    return candidates(location, b.location()).stream().anyMatch(w -> exists(w, s3));
  }

  /** A base as the operator is told of it. */
  public static String describe(Catalog.Base b) {
    return b.location() + " (image " + b.id() + ", saved "
        + Instant.ofEpochMilli(b.createdMillis()) + ")";
  }

  private static Member open(String image, Catalog.Base b, S3Settings s3, Keys keys,
      List<String> lookIn, boolean whole) {
    List<String> tried = candidates(image, b.location(), lookIn);
    for (String where : tried) {
      if (!exists(where, s3)) {
        continue;
      }
      Catalog c;
      String tag;
      try (ImageSource src = ImageSources.open(where, s3)) {
        c = whole ? ImageReader.readCatalog(src, keys)
            : ImageReader.readHead(src, keys, false).catalog();
        tag = src.tag();
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
      return new Member(where, c, tag);
    }
    String looked = String.join(", ", tried.stream()
        .filter(w -> !w.equals(b.location())).toList());
    throw new BeamsaveException(image + ": base image " + describe(b) + " is missing"
        + (looked.isEmpty() ? "" : " (looked for " + looked + ")")
        + (sameStore(image, b.location()) ? ""
            : "; it was saved in another store than the image, which is not read unless"
                + " --base-location names it"));
  }

  /** Whether an image (a regular file, an object) is at {@code where}. */
  static boolean exists(String where, S3Settings s3) {
    return Location.of(where).exists(s3);
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

  /** The tags of the members opened, by location: what workers reading them expect. */
  public java.util.Map<String, String> tags() {
    return tagsOf(opened());
  }

  /** The tags of {@code members} known, by location. */
  public static java.util.Map<String, String> tagsOf(List<Member> members) {
    java.util.Map<String, String> tags = new java.util.HashMap<>();
    for (Member m : members) {
      if (!m.tag().isEmpty()) {
        tags.put(m.location(), m.tag());
      }
    }
    return tags;
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

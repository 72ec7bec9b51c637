package io.beamsave.pipelines.stored;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.crypt.KeyException;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.Walk;
import io.beamsave.transforms.image.ImageEnds;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.transfer.ImageUpload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The images stored under a directory or {@code s3://} prefix (at any depth), grouped into
 * series: images whose names differ only in a UTC timestamp ({@code NAME-20261130T021500Z.bsave},
 * as {@code save --image ...{utc}...} writes them) belong to one series, and an image's time is
 * that timestamp, else its modification time.
 */
public final class StoredImages {
  private static final Pattern STAMPED = Pattern.compile("(.*)-(\\d{8}T\\d{6}Z)\\" + ImageFormat.EXTENSION);
  private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("uuuuMMdd'T'HHmmss'Z'")
      .withResolverStyle(java.time.format.ResolverStyle.STRICT);

  /**
   * One image. {@code busy}: an upload to its key (or a save to its file) is in progress, so it
   * is about to be replaced and is never touched.
   */
  public record Image(String uri, String series, Instant time, long bytes, boolean busy) {}

  private StoredImages() {}

  /** Every image under {@code at}, by series (in the order series are first seen). */
  public static Map<String, List<Image>> list(String at, S3Settings s3) {
    Location where = Location.of(at);
    List<Image> all = where.match(StoredImages::listFiles, object -> listObjects(where, s3));
    Map<String, List<Image>> series = new LinkedHashMap<>();
    for (Image i : all) {
      series.computeIfAbsent(i.series(), k -> new ArrayList<>()).add(i);
    }
    return series;
  }

  /** The name that stands for the newest image wherever an image is expected. */
  public static final String LATEST = "latest";

  /**
   * {@code image} itself, or where it ends in {@code /latest} and nothing of that name exists,
   * the newest complete image at any depth under what comes before: the one series there (as
   * {@link #list} groups them), or the error names the series to choose from.
   */
  public static String resolveLatest(String image, S3Settings s3) {
    Location given = Location.of(image);
    if (!LATEST.equals(given.name()) || given.exists(s3)) {
      return image;
    }
    String at = given.parent().toString();
    Map<String, List<Image>> series = list(at, s3);
    if (series.isEmpty()) {
      throw new BeamsaveException(image + ": no images under " + at);
    }
    if (series.size() > 1) {
      List<String> names = new ArrayList<>();
      for (String k : series.keySet()) {
        String rel = k.startsWith(at) ? k.substring(at.length()).replaceFirst("^/", "") : k;
        names.add(rel);
      }
      java.util.Collections.sort(names);
      String shown = String.join(", ", names.subList(0, Math.min(5, names.size())))
          + (names.size() > 5 ? " and " + (names.size() - 5) + " more" : "");
      // Series in a directory of their own are named by it; else by their newest image.
      String example = parentOf(names.get(0)).isEmpty()
          ? newest(series.get(at.replaceFirst("/$", "") + "/" + names.get(0)), s3)
          : at.replaceFirst("/$", "") + "/" + parentOf(names.get(0)) + LATEST;
      throw new BeamsaveException(image + ": " + series.size() + " series of images under " + at
          + " (" + shown + "); name one, as in " + example);
    }
    return newest(series.values().iterator().next(), s3);
  }

  /** The series an image at {@code uri} belongs to (as {@link #list} groups them). */
  public static String seriesOf(String uri) {
    return image(uri, Instant.EPOCH, 0, false).series();
  }

  /**
   * The newest image of {@code series} whose catalog reads: one being replaced is still whole,
   * a damaged one is passed over.
   */
  public static String newest(List<Image> series, S3Settings s3) {
    if (series == null || series.isEmpty()) {
      throw new BeamsaveException("no images");
    }
    List<Image> newestFirst = new ArrayList<>(series);
    newestFirst.sort(java.util.Comparator.comparing(Image::time).thenComparing(Image::uri)
        .reversed());
    String problems = "";
    for (Image i : newestFirst) {
      String problem = problem(i, s3);
      if (problem == null) {
        return i.uri();
      }
      problems = problems.isEmpty() ? i.uri() + ": " + problem : problems;
    }
    throw new BeamsaveException("no readable image (" + problems + ")");
  }

  /**
   * The catalog of {@code image}, or null if it is stored with transfer compression (only a
   * download reaches its catalog); throws if the image is damaged or cannot be read, and a
   * {@link io.beamsave.transforms.crypt.KeyException} if it is encrypted and none of {@code
   * keys} opens it.
   */
  public static Catalog catalog(Image image, S3Settings s3, Keys keys) throws IOException {
    if (transferCompressed(image, s3)) {
      return null;
    }
    try (ImageSource src = ImageSources.open(image.uri(), s3)) {
      // Listing is no reading: a plain image among encrypted ones is shown as it is.
      return ImageReader.readCatalog(src, keys, true);
    }
  }

  /**
   * The head of {@code image}'s catalog (its catalog without entries, and the totals), as
   * {@link #catalog} reads the catalog: of a paged catalog, the head alone is read.
   */
  public static io.beamsave.transforms.image.catalog.CatalogHead head(Image image, S3Settings s3,
      Keys keys) throws IOException {
    if (transferCompressed(image, s3)) {
      return null;
    }
    try (ImageSource src = ImageSources.open(image.uri(), s3)) {
      return ImageReader.readHead(src, keys, true);
    }
  }

  private static boolean transferCompressed(Image image, S3Settings s3) {
    return !ImageSources.transferCodecOf(Location.of(image.uri()), s3).isNone();
  }

  /**
   * Where {@code image} stands among the images it was made from: from its catalog, or for an
   * encrypted image that none of {@code keys} opens, from its header (unauthenticated); null
   * if it is stored with transfer compression. Throws if the image is damaged.
   */
  public static Lineage lineage(Image image, S3Settings s3, Keys keys) throws IOException {
    if (transferCompressed(image, s3)) {
      return null;
    }
    try (ImageSource src = ImageSources.open(image.uri(), s3)) {
      ImageEnds.Trailer ends = ImageEnds.read(src);
      // The head alone holds the lineage: a paged catalog's entries are not read.
      if (!ends.encrypted()) {
        return Lineage.of(ImageReader.readHead(src, Keys.NONE, false).catalog());
      }
      try {
        return Lineage.of(ImageReader.readHead(src, keys, false).catalog());
      } catch (KeyException notForTheseKeys) {
        return Lineage.of(ends.envelope());
      }
    }
  }

  /**
   * What is wrong with {@code image}: null if its {@link #lineage} reads (an encrypted image's
   * header and trailer, which need no key), else why not.
   */
  public static String problem(Image image, S3Settings s3) {
    try {
      lineage(image, s3, Keys.NONE);
      return null;
    } catch (IOException | RuntimeException e) {
      return firstLine(e);
    }
  }

  /** The first line of what {@code e} says, for a status column or a reason. */
  public static String firstLine(Exception e) {
    String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    int nl = why.indexOf('\n');
    return nl < 0 ? why : why.substring(0, nl);
  }

  private static String parentOf(String relative) {
    int slash = relative.lastIndexOf('/');
    return slash < 0 ? "" : relative.substring(0, slash + 1);
  }

  /** Deletes {@code image} and then its records in the ledger beside it. */
  public static void delete(Image image, S3Settings s3) {
    Location.of(image.uri()).delete(s3);
    Ledger.forget(Ledger.besideImage(image.uri()), s3, image.uri());
  }

  private static List<Image> listObjects(Location at, S3Settings s3) {
    List<Store.Item> objects = at.directory(s3).list("");
    Set<String> busy = new HashSet<>();
    for (Store.Item o : objects) {
      if (o.key().endsWith(ImageFormat.EXTENSION + ImageUpload.STATE_SUFFIX)) {
        busy.add(o.key().substring(0, o.key().length() - ImageUpload.STATE_SUFFIX.length()));
      }
    }
    List<Image> out = new ArrayList<>();
    for (Store.Item o : objects) {
      if (o.key().endsWith(ImageFormat.EXTENSION)) {
        out.add(image(at.resolve(o.key()).toString(), o.modified(), o.size(),
            busy.contains(o.key())));
      }
    }
    return out;
  }

  private static List<Image> listFiles(Path dir) {
    if (!Files.isDirectory(dir)) {
      throw new BeamsaveException(dir + ": no such directory");
    }
    List<Image> out = new ArrayList<>();
    try {
      // Through handles: a directory swapped for a link while the walk is under way is not
      // entered, so no image outside the location is listed (and then pruned).
      Walk.tree(dir, new Walk.Visitor() {
        @Override
        public boolean enter(byte[] rel, FileStat s) {
          return named(dir, rel) != null;
        }

        @Override
        public void visit(byte[] rel, FileStat s) {
          String name = new String(Walk.fileName(rel), java.nio.charset.StandardCharsets.ISO_8859_1);
          // A run's staging may hold an image being assembled for upload: not a stored image.
          boolean staging = new String(rel, java.nio.charset.StandardCharsets.ISO_8859_1)
              .contains(".beamsave-staging-");
          if (!name.endsWith(ImageFormat.EXTENSION) || staging || !s.isRegularFile()) {
            return;
          }
          Path p = named(dir, rel);
          if (p != null) {
            name = p.getFileName().toString();
            boolean busy = Files.exists(p.resolveSibling(name + ImageFormat.PARTIAL_SUFFIX));
            out.add(image(p.toAbsolutePath().toString(),
                Instant.ofEpochSecond(s.mtimeSeconds(), s.mtimeNanos()), s.size(), busy));
          }
        }
      });
    } catch (NoSuchFileException gone) {
      // The directory itself went meanwhile: nothing is under it.
    } catch (IOException e) {
      throw BeamsaveException.io("cannot list images in", dir, e);
    }
    return out;
  }

  /**
   * {@code rel} beneath {@code dir} as a path, if its name survives as text: images are found
   * again by their names, and one that is not UTF-8 would be listed and then not found (as
   * damaged). Such a name is left out (null), with a warning naming it.
   */
  private static Path named(Path dir, byte[] rel) {
    String text = Walk.text(rel);
    if (text != null) {
      return dir.resolve(text);
    }
    // Its parent's name did survive, or the walk would not have come here.
    System.err.println("beamsave: warning: leaving out '" + Printable.bytes(Walk.fileName(rel))
        + "' in " + Printable.text(dir.toString()) + ": its name is not UTF-8, and images are found by"
        + " name; rename it to use what it holds");
    return null;
  }

  private static Image image(String uri, Instant modified, long bytes, boolean busy) {
    Matcher m = STAMPED.matcher(uri);
    if (m.matches()) {
      try {
        Instant t = LocalDateTime.parse(m.group(2), STAMP).toInstant(ZoneOffset.UTC);
        return new Image(uri, m.group(1), t, bytes, busy);
      } catch (java.time.DateTimeException noSuchTime) {
        // Shaped like a stamp but no time (month 13): an image without one, as any other name.
      }
    }
    return new Image(uri, uri.substring(0, uri.length() - ImageFormat.EXTENSION.length()),
        modified, bytes, busy);
  }
}

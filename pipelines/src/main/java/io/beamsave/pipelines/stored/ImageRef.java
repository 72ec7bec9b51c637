package io.beamsave.pipelines.stored;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.image.CatalogWalk;
import io.beamsave.transforms.image.ImageEnds;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.transfer.ImageDownload;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The image a read command ({@code list}, {@code verify}, {@code restore}) was given: a local
 * file, or an object read in place with ranged GETs. An object stored with transfer compression
 * cannot be read in place, so it is downloaded to a temporary file first, removed on close.
 */
public final class ImageRef implements AutoCloseable {
  private final String given;
  private final String location;
  private final S3Settings s3;
  private final Keys keys;
  private final Path temporary;
  private List<String> baseLocations = List.of();

  private ImageRef(String given, String location, S3Settings s3, Keys keys, Path temporary) {
    this.given = given;
    this.location = location;
    this.s3 = s3;
    this.keys = keys;
    this.temporary = temporary;
  }

  /**
   * This image, its bases also looked for in {@code locations} (directories or {@code s3://}
   * prefixes the operator named), besides where they were saved (in the image's own store)
   * and beside it.
   */
  public ImageRef withBaseLocations(List<String> locations) {
    this.baseLocations = List.copyOf(locations);
    return this;
  }

  /** Where else its bases are looked for: see {@link #withBaseLocations}. */
  public List<String> baseLocations() {
    return baseLocations;
  }

  public static ImageRef of(String image, S3Settings s3, PrintWriter progress) {
    return of(image, s3, Keys.NONE, progress);
  }

  /** The image {@code image}; an encrypted one, and its bases, opened with {@code keys}. */
  public static ImageRef of(String image, S3Settings s3, Keys keys, PrintWriter progress) {
    Location where = Location.of(image);
    if (ImageSources.transferCodecOf(where, s3).isNone()) {
      return new ImageRef(image, where.localPath().map(p -> p.toAbsolutePath().toString())
          .orElse(image), s3, keys, null);
    }
    try {
      Path dir = Files.createTempDirectory("beamsave-fetch-");
      Path local = dir.resolve(where.name());
      if (progress != null) {
        progress.println("fetching " + where + " (stored with transfer compression) to read it");
        progress.flush();
      }
      try {
        ImageDownload.download((Location.InStore) where, s3, local, 4, null);
      } catch (RuntimeException e) {
        Removal.tree(dir);
        throw e;
      }
      return new ImageRef(image, local.toString(), s3, keys, local);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot create a temporary directory for", image, e);
    }
  }

  /** As the operator wrote it, for messages. */
  public String display() {
    return given;
  }

  /** What the readers open: an absolute path or an {@code s3://} URI. */
  public String location() {
    return location;
  }

  public S3Settings s3() {
    return s3;
  }

  /** What opens the image and its bases, if they are encrypted. */
  public Keys keys() {
    return keys;
  }

  /** The header and trailer, checked: whether the image is encrypted, and what for. */
  public ImageEnds.Trailer ends() {
    try (ImageSource src = ImageSources.open(location, s3)) {
      return ImageEnds.read(src);
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }

  private java.util.concurrent.CompletableFuture<Catalog> catalogAhead;

  /**
   * Starts reading the catalog on another thread, so that it overlaps what the caller does
   * next (Beam's start-up); {@link #readCatalog} then takes it.
   */
  public ImageRef readCatalogAhead() {
    catalogAhead = java.util.concurrent.CompletableFuture.supplyAsync(this::readCatalogNow);
    return this;
  }

  /** Reads the catalog, turning a damaged image into an operator-facing error. */
  public Catalog readCatalog() {
    if (catalogAhead == null) {
      return readCatalogNow();
    }
    try {
      return catalogAhead.join();
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }

  /** The tag of the image whose catalog was read (see {@link ImageSource#tag}). */
  private volatile String tag = "";

  private Catalog readCatalogNow() {
    try (ImageSource src = ImageSources.open(location, s3)) {
      Catalog c = ImageReader.readCatalog(src, keys);
      tag = src.tag();
      return c;
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }

  /** The catalog's head alone (an older image's whole catalog, as one page). */
  public CatalogHead head() {
    return walk(List.of(), visited -> { });
  }

  /**
   * The catalog's head and the entries under each of {@code under} (all of them for an empty
   * path), read page by page: only the pages that can hold them. {@code visitor} hears each
   * entry in path order, holding no more than a page of them.
   *
   * @return the head (its catalog without entries), which {@link #member(Catalog)} takes
   */
  public CatalogHead walk(List<PathBytes> under, CatalogWalk.Visitor visitor) {
    return walk(under, h -> { }, visitor);
  }

  /** Like {@link #walk(List, CatalogWalk.Visitor)}, {@code onHead} told of the head first. */
  public CatalogHead walk(List<PathBytes> under, java.util.function.Consumer<CatalogHead> onHead,
      CatalogWalk.Visitor visitor) {
    return walkEach(under, onHead, i -> visitor);
  }

  /**
   * Like {@link #walk(List, java.util.function.Consumer, CatalogWalk.Visitor)}, the entries
   * under {@code under.get(i)} handed to {@code visitors.apply(i)}.
   */
  public CatalogHead walkEach(List<PathBytes> under,
      java.util.function.Consumer<CatalogHead> onHead,
      java.util.function.IntFunction<CatalogWalk.Visitor> visitors) {
    try (ImageSource src = ImageSources.open(location, s3)) {
      CatalogHead head = ImageReader.readHead(src, keys, false);
      tag = src.tag();
      onHead.accept(head);
      CatalogWalk walk =
          new CatalogWalk(src, head);
      for (int i = 0; i < under.size(); i++) {
        walk.walk(under.get(i), visitors.apply(i));
      }
      return head;
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }

  /**
   * The entries at {@code paths} that the catalog has, in the order given (absent ones left
   * out), each read from the one page that can hold it.
   */
  public List<Entry> find(List<PathBytes> paths,
      CatalogHead head) {
    try (ImageSource src = ImageSources.open(location, s3)) {
      CatalogWalk walk =
          new CatalogWalk(src, head);
      List<Entry> out = new java.util.ArrayList<>();
      for (PathBytes p : paths) {
        Entry e = walk.find(p);
        if (e != null) {
          out.add(e);
        }
      }
      return out;
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }

  /** The image as a chain's first member, known by {@code catalog} (a head will do). */
  public ImageChain.Member member(Catalog catalog) {
    return new ImageChain.Member(location, catalog, tag);
  }

  /**
   * The image as a chain's first member: where it is, its catalog ({@link #readCatalog}), and
   * the tag of what was read, which workers reading it then expect.
   */
  public ImageChain.Member member() {
    Catalog c = readCatalog();
    return new ImageChain.Member(location, c, tag);
  }

  @Override
  public void close() {
    if (temporary != null) {
      try {
        Removal.file(temporary);
        Removal.emptyDirectory(temporary.getParent());
      } catch (IOException ignored) {
        // A leftover temporary file is not worth failing a finished command for.
      }
    }
  }
}

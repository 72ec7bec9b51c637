package io.beamsave.pipelines;

import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Real images of an empty library with any place in a chain, written in a millisecond by the
 * image writer: what retention reads of an image is its catalog's identity and bases, and a
 * schedule of months of saves must not take minutes of pipelines to build.
 */
final class ChainImages {
  private ChainImages() {}

  /** A full image saved at {@code created}. */
  static Catalog full(Path image, Instant created) throws IOException {
    return write(image, created, null, List.of());
  }

  /**
   * An image saved at {@code created} against {@code base} (at its present path): references
   * into the base and into {@code alsoReferenced}, a part of the base's own bases.
   */
  static Catalog incremental(Path image, Instant created, Path base,
      List<Catalog.Base> alsoReferenced) throws IOException {
    Catalog b = ImageReader.readCatalog(base);
    List<Catalog.Base> bases = new ArrayList<>();
    bases.add(b.asBase(base.toAbsolutePath().toString()));
    bases.addAll(alsoReferenced);
    return write(image, created, null, bases, b.depth() + 1);
  }

  /** What {@code consolidate --image original --to image} writes: a full image standing for it. */
  static Catalog consolidated(Path image, Path original) throws IOException {
    Catalog o = ImageReader.readCatalog(original);
    return write(image, Instant.ofEpochMilli(o.createdMillis()), o.id(), List.of());
  }

  /**
   * A forgery: a tiny plain image whose catalog claims to be image {@code origin} consolidated,
   * as anyone who may write where the images are can make one.
   */
  static Catalog claiming(Path image, Instant created, ImageId origin) throws IOException {
    return write(image, created, origin, List.of());
  }

  private static Catalog write(Path image, Instant created, ImageId origin,
      List<Catalog.Base> bases) throws IOException {
    return write(image, created, origin, bases, 0);
  }

  private static Catalog write(Path image, Instant created, ImageId origin,
      List<Catalog.Base> bases, int depth) throws IOException {
    long s = created.getEpochSecond();
    Entry root = new Entry(PathBytes.of(""), EntryType.DIRECTORY, 0, 0755, 0, 0, s, 0, s, 1, 2,
        0, null, List.of());
    Catalog c = new Catalog("data", "none", created.toEpochMilli(), 4096, 1 << 20, root,
        List.of(), List.of()).withIdentity(ImageId.random(), origin, depth, bases);
    Files.createDirectories(image.toAbsolutePath().getParent());
    try (ImageWriter w = ImageWriter.open(image)) {
      w.finish(c, Codecs.parse("none"));
    }
    return ImageReader.readCatalog(image);
  }
}

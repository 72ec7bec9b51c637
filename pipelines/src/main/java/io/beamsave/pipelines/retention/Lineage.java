package io.beamsave.pipelines.retention;

import io.beamsave.transforms.crypt.Envelope;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.Catalog;
import java.time.Instant;
import java.util.List;

/**
 * An image's place among the images it was made from, as its catalog records it: its id, the
 * image it was consolidated from ({@code origin}, or null), how many incremental saves lead back
 * to a full one, and the images whose bytes it references ({@link Catalog#bases()}, the direct
 * base first). Kept apart from the catalog so that retention can hold it for every image of a
 * location without holding every image's entries.
 */
public record Lineage(ImageId id, ImageId origin, int depth, List<Catalog.Base> bases,
    Instant created, boolean fromHeader, boolean encrypted) {

  public static Lineage of(Catalog c) {
    return new Lineage(c.id(), c.origin(), c.depth(), List.copyOf(c.bases()),
        Instant.ofEpochMilli(c.createdMillis()), false, c.encrypted());
  }

  /**
   * An encrypted image's lineage as its header records it, which needs no key: its bases by id
   * alone (where they were is in the catalog), and every image it may reference, so that
   * retention keeps at least what the catalog would have it keep. Nothing without the key
   * authenticates it ({@code fromHeader}): it may keep images, never be the reason one goes.
   */
  public static Lineage of(Envelope e) {
    List<Catalog.Base> bases = e.bases().stream()
        .map(id -> new Catalog.Base(id, new byte[32], 0, "(image " + id + ")"))
        .toList();
    return new Lineage(e.id(), e.origin(), e.depth(), bases,
        Instant.ofEpochMilli(e.createdMillis()), true, true);
  }

  public boolean consolidated() {
    return origin != null;
  }

  /** Needs no other image to be restored. */
  public boolean selfContained() {
    return bases.isEmpty();
  }

  /** The image this one was saved against, or null for a full image. */
  public Catalog.Base directBase() {
    return bases.isEmpty() ? null : bases.get(0);
  }
}

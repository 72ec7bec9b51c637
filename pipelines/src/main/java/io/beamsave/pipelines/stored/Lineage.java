package io.beamsave.pipelines.stored;

import io.beamsave.transforms.crypt.Envelope;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.catalog.Catalog;
import java.time.Instant;
import java.util.List;

/**
 * An image's place among the images it was made from, as its catalog records it: its id, the
 * image it was consolidated from ({@code origin}, or null), how many incremental saves lead back
 * to a full one, and the images whose bytes it references ({@link Catalog#bases()}, the direct
 * base first), and its tags ({@code save --tag}; null where they are in a catalog no key given
 * opens). Kept apart from the catalog so that retention can hold it for every image of a
 * location without holding every image's entries.
 */
public record Lineage(ImageId id, ImageId origin, int depth, List<Catalog.Base> bases,
    Instant created, boolean fromHeader, boolean encrypted, List<String> tags) {

  /** An image without tags. */
  public Lineage(ImageId id, ImageId origin, int depth, List<Catalog.Base> bases,
      Instant created, boolean fromHeader, boolean encrypted) {
    this(id, origin, depth, bases, created, fromHeader, encrypted, List.of());
  }

  public static Lineage of(Catalog c) {
    String tags = c.notes().get(io.beamsave.transforms.image.catalog.Notes.TAGS);
    return new Lineage(c.id(), c.origin(), c.depth(), List.copyOf(c.bases()),
        Instant.ofEpochMilli(c.createdMillis()), false, c.encrypted(),
        tags == null || tags.isEmpty() ? List.of() : List.of(tags.split(",")));
  }

  /** Whether the image bears one of {@code any}; false where its tags are not known. */
  public boolean taggedAny(List<String> any) {
    return tags != null && any.stream().anyMatch(tags::contains);
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
    // Its tags are in its catalog, which needs the key: not known (null).
    return new Lineage(e.id(), e.origin(), e.depth(), bases,
        Instant.ofEpochMilli(e.createdMillis()), true, true, null);
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

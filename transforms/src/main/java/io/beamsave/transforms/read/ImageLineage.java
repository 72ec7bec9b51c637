package io.beamsave.transforms.read;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Envelope;
import io.beamsave.transforms.crypt.KeyException;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.ImageEnds;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogWriter;
import io.beamsave.transforms.store.ImageLocation;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every image of an image's lineage: the image, its base, its base's base, down to the full
 * image the chain began with, each known by its id and by every place a reader would look for
 * it ({@link ImageChain#candidates}: where the catalog naming it recorded it, beside that image,
 * under the operator's {@code --base-location}s). {@link ImageChain} opens only the images whose
 * bytes a read needs; this names them all, for an image that the newest one references no byte
 * of is still needed by the images between them. The commands that write an image ({@code
 * consolidate --to}, {@code save --image}, {@code download --to}, {@code upload --to}) refuse
 * a target that is one of them ({@link #refuse}).
 *
 * <p>Only heads are read: of each image its catalog's head, or where none of the keys opens an
 * encrypted one, its header, which names its bases by id alone. A header is not authenticated
 * without the key, which is fine here: what it says can only make a guard refuse more. The walk
 * follows the direct base (the first a catalog records) and stops where one is missing, cannot
 * be read or is another image than recorded: nothing below it is known, and no read reaches it
 * either. It refuses a chain that comes back to an image already on it, and one of more than
 * {@link #MAX_GENERATIONS} images.
 */
public final class ImageLineage {
  /**
   * The most images a walk reads: as many as a catalog can record as its bases, which is what an
   * image at the end of such a chain may reference.
   */
  public static final int MAX_GENERATIONS = CatalogWriter.MAX_BASES;

  /**
   * An image of the lineage. {@code onLine}: it is on the line of direct bases, {@code
   * generation} images below the image walked (0: the image itself); else it was met only in
   * the bases of the image {@code generation} below, which it is older than.
   */
  public record Member(ImageId id, int generation, boolean onLine, Set<String> places) {}

  /** A base as an image records it: its id, and where it was (null where only the id is known). */
  private record Recorded(ImageId id, String location) {}

  /** What a walk reads of one image. */
  private record Head(ImageId id, List<Recorded> bases) {
    static Head of(Catalog c) {
      return new Head(c.id(), c.bases().stream().map(b -> new Recorded(b.id(), b.location()))
          .toList());
    }

    static Head of(Envelope e) {
      return new Head(e.id(), e.bases().stream().map(id -> new Recorded(id, null)).toList());
    }
  }

  private final String shown;
  private final Map<ImageId, Member> members = new LinkedHashMap<>();

  private ImageLineage(String shown) {
    this.shown = shown;
  }

  /**
   * The lineage of the image at {@code location}, whose catalog (or its head) the caller read:
   * {@code shown} is how messages name it, {@code keys} open its encrypted bases, and {@code
   * lookIn} are where else bases are looked for ({@code --base-location}).
   */
  public static ImageLineage of(String shown, String location, Catalog catalog, S3Settings s3,
      Keys keys, List<String> lookIn) {
    return walk(shown, location, Head.of(catalog), s3, keys, lookIn, MAX_GENERATIONS);
  }

  /** Like {@link #of}, the image's head read here. */
  public static ImageLineage walk(String shown, String location, S3Settings s3, Keys keys,
      List<String> lookIn) {
    return walk(shown, location, s3, keys, lookIn, MAX_GENERATIONS);
  }

  /** Like {@link #walk(String, String, S3Settings, Keys, List)}, at most {@code limit} images. */
  static ImageLineage walk(String shown, String location, S3Settings s3, Keys keys,
      List<String> lookIn, int limit) {
    Head top;
    try {
      top = readHead(location, s3, keys);
    } catch (IOException | RuntimeException e) {
      throw new BeamsaveException(location + ": cannot read its lineage: " + e.getMessage(), e);
    }
    return walk(shown, location, top, s3, keys, lookIn, limit);
  }

  private static ImageLineage walk(String shown, String location, Head top, S3Settings s3,
      Keys keys, List<String> lookIn, int limit) {
    ImageLineage l = new ImageLineage(shown);
    l.members.put(top.id(), new Member(top.id(), 0, true,
        new LinkedHashSet<>(List.of(location))));
    String at = location;
    Head h = top;
    for (int g = 0; !h.bases().isEmpty(); g++) {
      for (int i = 0; i < h.bases().size(); i++) {
        Recorded b = h.bases().get(i);
        l.note(at, g, b, i == 0, placesOf(at, b, lookIn));
      }
      if (g + 1 >= limit) {
        throw new BeamsaveException(shown + ": its chain of bases is longer than " + limit
            + " images; refusing to follow it further");
      }
      ImageId direct = h.bases().get(0).id();
      String found = null;
      Head next = null;
      for (String place : l.members.get(direct).places()) {
        try {
          Head there = ImageChain.exists(place, s3) ? readHead(place, s3, keys) : null;
          if (there != null && there.id().equals(direct)) {
            found = place;
            next = there;
            break;
          }
        } catch (IOException | RuntimeException unreadable) {
          // Not this place: the base may be at another.
        }
      }
      if (next == null) {
        // Nothing below it is known: its places, noted above, are all that is guarded.
        break;
      }
      at = found;
      h = next;
    }
    return l;
  }

  /** Where base {@code b} of the image at {@code at} is looked for: nowhere if it has no name. */
  private static List<String> placesOf(String at, Recorded b, List<String> lookIn) {
    if (b.location() == null) {
      return List.of();
    }
    try {
      return ImageChain.candidates(at, b.location(), lookIn);
    } catch (RuntimeException noPlace) {
      // A recorded location that is no path nor key (a crafted catalog): no reader looks there.
      return List.of();
    }
  }

  /**
   * Notes base {@code b} of the image {@code g} below the top, at {@code at}: on the line if it
   * is that image's direct base. A base already on the line at {@code g} or above is a cycle.
   */
  private void note(String at, int g, Recorded b, boolean direct, List<String> places) {
    Member m = members.get(b.id());
    if (m != null && m.onLine() && m.generation() <= g) {
      throw new BeamsaveException(shown + ": its chain of bases comes back to image " + b.id()
          + " (" + relation(m) + ") at " + at + ": a chain is never its own base; refusing"
          + " to follow it");
    }
    if (m == null || (direct && !m.onLine())) {
      Set<String> kept = m == null ? new LinkedHashSet<>() : m.places();
      m = new Member(b.id(), direct ? g + 1 : g, direct, kept);
      members.put(b.id(), m);
    }
    m.places().addAll(places);
  }

  /** Every image of the lineage, the image first, then as they were met. */
  public List<Member> members() {
    return members.values().stream().map(m -> new Member(m.id(), m.generation(), m.onLine(),
        java.util.Collections.unmodifiableSet(m.places()))).toList();
  }

  /**
   * What {@code target} is of this lineage, as a message would say it ("W, the base of the
   * base of X"), or null if none: a place any image of it is looked for, however spelled
   * ({@link ImageLocation}), or, where {@code target} holds an image, one of the lineage's
   * below the top by id (a copy of the top elsewhere is no image of its chain).
   */
  public String whatIs(String target, S3Settings s3) {
    ImageLocation t = ImageLocation.of(target);
    for (Member m : members.values()) {
      for (String place : m.places()) {
        if (t.sameAs(ImageLocation.of(place))) {
          return place + ", " + relation(m);
        }
      }
    }
    ImageId held = idAt(target, s3);
    Member m = held == null ? null : members.get(held);
    if (m != null && !(m.onLine() && m.generation() == 0)) {
      return "it holds image " + held + ", " + relation(m);
    }
    return null;
  }

  /**
   * Refuses to write {@code target} (given as {@code option}) where it is an image of this
   * lineage, in one line naming it, which image of the chain it is, and {@code advice}.
   */
  public void refuse(String option, String target, S3Settings s3, String advice) {
    String what = whatIs(target, s3);
    if (what != null) {
      throw new BeamsaveException("refusing " + option + " " + target + ": "
          + (what.startsWith("it holds ") ? what : "it is " + what) + "; " + advice);
    }
  }

  /** Which image of the chain {@code m} is, for a message. */
  private String relation(Member m) {
    if (!m.onLine()) {
      return "a base of " + (m.generation() == 0 ? shown : relation(m.generation()));
    }
    return m.generation() == 0 ? shown + " itself" : relation(m.generation());
  }

  private String relation(int generation) {
    if (generation > 3) {
      return "the base " + generation + " images down the chain of " + shown;
    }
    return "the base of ".repeat(generation) + shown;
  }

  /** The id of the image at {@code location}, or null where none is there or it does not read. */
  private static ImageId idAt(String location, S3Settings s3) {
    try {
      if (!ImageChain.exists(location, s3)) {
        return null;
      }
      // Read without keys: an encrypted image's header says its id.
      return readHead(location, s3, Keys.NONE).id();
    } catch (IOException | RuntimeException notAnImage) {
      return null;
    }
  }

  /** The image's id and bases: its catalog's head, or its header where no key opens it. */
  private static Head readHead(String location, S3Settings s3, Keys keys) throws IOException {
    try (ImageSource src = ImageSources.open(location, s3)) {
      ImageEnds.Trailer ends = ImageEnds.read(src);
      if (!ends.encrypted()) {
        return Head.of(ImageReader.readHead(src, Keys.NONE, false).catalog());
      }
      try {
        return Head.of(ImageReader.readHead(src, keys, false).catalog());
      } catch (KeyException notForTheseKeys) {
        return Head.of(ends.envelope());
      }
    }
  }
}

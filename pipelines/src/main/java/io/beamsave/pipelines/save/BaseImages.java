package io.beamsave.pipelines.save;

import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.image.ImageEnds;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ImageLineage;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.store.ImageLocation;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Chooses the base image of each library of an incremental save ({@code save --base}): the
 * image given, or with {@code latest} the newest readable image of the series the library's
 * image joins, and checks before anything runs that it is an image of that library, readable,
 * and not the image about to be replaced. With {@code optional}, a library without a usable
 * base is saved whole instead, and said so; {@code fullEvery} makes every Nth save of a chain a
 * full one.
 */
public final class BaseImages {
  private BaseImages() {}

  /**
   * The base of each library of {@code spec} that gets one, as {@code request} asks. An
   * encrypted base is read with the request's keys, and must be encrypted exactly when the new
   * image is: an encrypted image on a plain base would leave its unchanged files in the clear,
   * a plain one on an encrypted base would list them in the clear.
   */
  public static BasePlan choose(SaveSpec spec, SaveRequest request, Consumer<String> note) {
    String base = request.base();
    if (base == null) {
      return BasePlan.NONE;
    }
    boolean latest = StoredImages.LATEST.equals(base);
    if (!latest && spec.libraries().size() > 1) {
      throw new BeamsaveException("--base " + base + " names one image, and " +
          spec.libraries().size() + " libraries are saved: use --base latest, which finds each"
          + " library's own");
    }
    Map<String, BasePlan.Base> chosen = new LinkedHashMap<>();
    for (SaveSpec.Library lib : spec.libraries().values()) {
      BasePlan.Base c;
      try {
        c = choose(lib, latest ? null : base, request.fullEvery(), request.s3(), request.keys(),
            request.encrypted(), note);
      } catch (BeamsaveException e) {
        if (!request.baseOptional()) {
          throw e;
        }
        note.accept(lib.name() + ": saved whole: " + e.getMessage());
        continue;
      }
      if (c != null) {
        chosen.put(lib.name(), c);
      }
    }
    return new BasePlan(chosen);
  }

  private static BasePlan.Base choose(SaveSpec.Library lib, String given, int fullEvery,
      S3Settings s3, Keys keys, boolean encrypted, Consumer<String> note) {
    String destination = lib.destination();
    String location = given != null ? absolute(StoredImages.resolveLatest(given, s3))
        : latestOf(destination, s3);
    if (ImageLocation.same(location, destination)) {
      throw new BeamsaveException("--base " + location + " is the image this save replaces ("
          + destination + "); an incremental save keeps its base: give --image a {utc} (as in"
          + " {library}-{utc}.bsave) so each run has its own image");
    }
    Catalog c = null;
    boolean baseEncrypted;
    String tag;
    try (ImageSource src = ImageSources.open(location, s3)) {
      tag = src.tag();
      baseEncrypted = ImageEnds.read(src).encrypted();
      if (baseEncrypted == encrypted) {
        c = ImageReader.readHead(src, encrypted ? keys : Keys.NONE, false).catalog();
      }
    } catch (IOException | BeamsaveException e) {
      throw new BeamsaveException("--base " + location + ": " + StoredImages.firstLine(e));
    }
    if (c == null) {
      throw new BeamsaveException("--base " + location + (encrypted
          ? " is not encrypted: an encrypted image saved against it would leave its unchanged"
              + " files in the clear there"
          : " is encrypted: an image saved against it without encryption would list its"
              + " files in the clear; give the same --recipient, --key-file or"
              + " --password-file"));
    }
    if (!c.library().equals(lib.name())) {
      throw new BeamsaveException("--base " + location + " is an image of library '"
          + c.library() + "', not of '" + lib.name() + "'");
    }
    // Every image of the base's chain, bytes referenced or not: the images between need them.
    ImageLineage.of("--base " + location, location, c, s3, encrypted ? keys : Keys.NONE,
        List.of()).refuse("--image", destination, s3, "the new image would need the chain"
            + " it destroys; give --image a {utc} (as in {library}-{utc}.bsave) so each run"
            + " has its own image");
    List<Catalog.Base> absent = ImageChain.absentBases(
        location, c, s3);
    if (!absent.isEmpty()) {
      // An image referencing it would not restore either.
      throw new BeamsaveException("--base " + location + " cannot be restored: its base "
          + ImageChain.describe(absent.get(0)) + " is missing");
    }
    if (fullEvery > 0 && c.depth() + 1 >= fullEvery) {
      note.accept(lib.name() + ": saved whole: --full-every " + fullEvery + " (" + location
          + " is save " + (c.depth() + 1) + " of its chain)");
      return null;
    }
    return new BasePlan.Base(c, location, tag);
  }

  /** The newest readable image of the series {@code destination} joins. */
  static String latestOf(String destination, S3Settings s3) {
    String series = StoredImages.seriesOf(destination);
    String at = Location.of(destination).parent().toString();
    Map<String, List<StoredImages.Image>> all;
    try {
      all = StoredImages.list(at, s3);
    } catch (BeamsaveException e) {
      throw new BeamsaveException("--base latest: no image of this library under " + at + " yet");
    }
    List<StoredImages.Image> mine = all.get(series);
    if (mine == null || mine.isEmpty()) {
      throw new BeamsaveException("--base latest: no image of this library under " + at + " yet");
    }
    try {
      return StoredImages.newest(mine, s3);
    } catch (BeamsaveException e) {
      throw new BeamsaveException("--base latest: " + e.getMessage());
    }
  }

  private static String absolute(String location) {
    return Location.of(location).normalized().toString();
  }
}

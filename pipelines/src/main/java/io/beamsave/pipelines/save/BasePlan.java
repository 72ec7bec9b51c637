package io.beamsave.pipelines.save;

import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.save.SaveSpec;
import java.util.Map;

/**
 * The base images an incremental save was planned against, by library, as {@link BaseImages}
 * chose and checked them: each one's catalog head (its entries stay in the image, where
 * planning reads them page by page), where it is, and its tag when it was read. They travel on
 * explicitly: into the spec's libraries ({@link #applyTo}) and into the keys of encrypted images
 * ({@link SaveKeys}).
 */
public record BasePlan(Map<String, Base> byLibrary) {
  /** A save without bases. */
  public static final BasePlan NONE = new BasePlan(Map.of());

  /** One library's base image. */
  public record Base(Catalog catalog, String location, String tag) {}

  public BasePlan {
    byLibrary = Map.copyOf(byLibrary);
  }

  /** {@code spec} with each library's base set where it has one. */
  public SaveSpec applyTo(SaveSpec spec) {
    for (Map.Entry<String, Base> e : byLibrary.entrySet()) {
      Catalog c = e.getValue().catalog();
      spec = spec.withBase(e.getKey(), c.asBase(e.getValue().location()), c.key(),
          e.getValue().tag());
    }
    return spec;
  }

  /** The base's catalog of {@code library}, or null if it is saved whole. */
  public Catalog catalog(String library) {
    Base b = byLibrary.get(library);
    return b == null ? null : b.catalog();
  }
}

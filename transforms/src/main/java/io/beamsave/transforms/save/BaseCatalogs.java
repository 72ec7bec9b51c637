package io.beamsave.transforms.save;

import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.run.RunState;
import java.io.Serializable;
import java.util.Map;
import java.util.UUID;

/**
 * The base catalogs a launcher read and checked, handed to the planning of the same run's
 * workers ({@link PlanShards#withBaseCatalogs}) so that they need not read a catalog of a
 * million entries again. What travels with the transform is only a name: the catalogs stay in
 * the run's state in the launcher's JVM ({@link RunState}), where workers that run in that JVM
 * find them; workers elsewhere find nothing and read the bases themselves. Closing it drops the
 * catalogs.
 */
public final class BaseCatalogs implements Serializable, AutoCloseable {
  private static final long serialVersionUID = 1L;

  /** No catalogs: every base is read by the workers. */
  public static final BaseCatalogs NONE = new BaseCatalogs("");

  private final String run;

  private BaseCatalogs(String run) {
    this.run = run;
  }

  /** Hands over {@code catalogs}, by library, until {@link #close}. */
  public static BaseCatalogs of(Map<String, Catalog> catalogs) {
    if (catalogs.isEmpty()) {
      return NONE;
    }
    BaseCatalogs handed = new BaseCatalogs("base catalogs " + UUID.randomUUID());
    Map<String, Catalog> copy = Map.copyOf(catalogs);
    RunState.of(handed.run).shared(BaseCatalogs.class, k -> copy);
    return handed;
  }

  /** The catalog handed over for {@code library}'s base, or null where there is none here. */
  Catalog get(String library) {
    RunState state = run.isEmpty() ? null : RunState.find(run);
    Map<String, Catalog> catalogs = state == null ? null : state.sharedIfAny(BaseCatalogs.class);
    return catalogs == null ? null : catalogs.get(library);
  }

  @Override
  public void close() {
    if (!run.isEmpty()) {
      RunState.end(run);
    }
  }
}

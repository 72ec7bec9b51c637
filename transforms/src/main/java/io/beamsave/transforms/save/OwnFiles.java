package io.beamsave.transforms.save;

import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.select.Excludes;
import io.beamsave.transforms.store.Location;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Beamsave's own files that a save must never take in when they lie inside a library: the
 * images of this save and others beside them (with their {@code .partial} and {@code .lock}),
 * the ledger, leases, and this run's and other runs' staging. They become exclude patterns
 * anchored at the library's root, added to the operator's. Static methods only.
 */
final class OwnFiles {
  private OwnFiles() {}

  /**
   * What the walk of {@code lib} leaves out: the operator's excludes, and beamsave's own files
   * where an image of this save, its ledger or the run's staging lies inside the library (so
   * that a save into the library never takes in earlier images, a partial one or staging).
   */
  static Excludes excludes(SaveSpec spec, SaveSpec.Library lib) {
    Path root = real(lib.rootPath());
    Set<Path> imageDirs = new LinkedHashSet<>();
    List<String> own = new ArrayList<>();
    for (SaveSpec.Library l : spec.libraries().values()) {
      // Only an image with a path on this host can lie inside a library.
      java.util.Optional<Path> file = Location.of(l.sink().location()).localPath();
      if (file.isPresent() && file.get().getParent() != null) {
        Path image = real(file.get());
        imageDirs.add(image.getParent());
        if (image.startsWith(root) && !image.equals(root)) {
          // This run's image whatever its name, with its .partial and .lock.
          String rel = Excludes.quote(root.relativize(image).toString());
          own.add("/" + rel);
          own.add("/" + rel + ".*");
        }
      }
    }
    for (Path dir : imageDirs) {
      if (dir.startsWith(root)) {
        String rel = root.relativize(dir).toString();
        String in = "/" + (rel.isEmpty() ? "" : Excludes.quote(rel) + "/");
        for (String name : List.of("*" + ImageFormat.EXTENSION, "*" + ImageFormat.EXTENSION + ".*",
            "beamsave-ledger/" /* the ledger, as pipelines.transfer.Ledger names it */,
            ".beamsave-staging-*/", ".beamsave-lease-*")) {
          own.add(in + name);
        }
      }
    }
    java.util.Optional<Path> stagingPath = Location.of(spec.staging()).localPath();
    if (stagingPath.isPresent()) {
      Path staging = real(stagingPath.get());
      if (staging.startsWith(root) && !staging.equals(root)) {
        own.add("/" + Excludes.quote(root.relativize(staging).toString()) + "/");
      }
      // Other runs' staging beside this run's (killed ones', or a concurrent save's).
      Path base = staging.getParent();
      if (base != null && base.startsWith(root)) {
        String rel = root.relativize(base).toString();
        own.add("/" + (rel.isEmpty() ? "" : Excludes.quote(rel) + "/") + ".beamsave-staging-*/");
      }
    }
    return spec.excludes().withOwn(own);
  }

  /** {@code p} with its links resolved as far as it exists (it may not be made yet). */
  private static Path real(Path p) {
    Path abs = p.toAbsolutePath().normalize();
    Path existing = abs;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    try {
      return existing == null ? abs : existing.toRealPath().resolve(existing.relativize(abs));
    } catch (IOException e) {
      return abs;
    }
  }
}

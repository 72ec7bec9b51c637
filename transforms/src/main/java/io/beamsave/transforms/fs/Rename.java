package io.beamsave.transforms.fs;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Renames a file into place by its directories' handles ({@code renameat}): atomic, replacing
 * whatever file or link had the name (never following it), as a whole file is published. The
 * directories leading to either name are taken as {@code cd} would; the names themselves are
 * never followed.
 */
public final class Rename {
  private Rename() {}

  /** Renames {@code from} to {@code to}, replacing a file or link there. */
  public static void replacing(Path from, Path to) throws IOException {
    Path a = from.toAbsolutePath();
    Path b = to.toAbsolutePath();
    if (a.getParent() == null || b.getParent() == null) {
      throw new IOException("cannot rename " + a + " to " + b);
    }
    try (Dir fromDir = Dir.open(a.getParent())) {
      if (a.getParent().equals(b.getParent())) {
        fromDir.rename(Removal.lastName(a), Removal.lastName(b));
        return;
      }
      try (Dir toDir = Dir.open(b.getParent())) {
        fromDir.renameTo(Removal.lastName(a), toDir, Removal.lastName(b));
      }
    }
  }
}

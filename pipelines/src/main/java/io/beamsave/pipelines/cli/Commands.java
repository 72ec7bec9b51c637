package io.beamsave.pipelines.cli;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.FileImageSource;
import io.beamsave.transforms.image.ImageEnds;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.CatalogReader;
import java.io.IOException;
import java.nio.file.Path;

/** Small helpers the commands share. */
final class Commands {
  private Commands() {}

  /** Warns that {@code old} is the former name of {@code now}. */
  static void deprecated(picocli.CommandLine.Model.CommandSpec spec, String old, String now) {
    spec.commandLine().getErr().println(
        "beamsave: warning: " + old + " is deprecated; use " + now);
    spec.commandLine().getErr().flush();
  }

  /** Fails as a usage error if an old name gives what its new name {@code now} already gave. */
  static void once(picocli.CommandLine.Model.CommandSpec spec, Object given, Object again,
      String now) {
    if (given != null && !given.equals(again)) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(),
          now + " given twice: " + given + " and " + again);
    }
  }

  /** Fails as a usage error unless the option {@code name} was given ({@code value} not null). */
  static void require(picocli.CommandLine.Model.CommandSpec spec, Object value, String name) {
    if (value == null) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(),
          "Missing required option: '" + name + "'");
    }
  }

  /** Where a command without a pipeline shows progress: stderr, or nowhere with -q. */
  static java.io.PrintWriter progress(picocli.CommandLine.Model.CommandSpec spec) {
    if (BeamsaveCommand.of(spec).quiet) {
      return null;
    }
    boolean tty = System.console() != null;
    return io.beamsave.pipelines.runner.ProgressOutput.text(spec.commandLine().getErr(), tty,
        tty ? 1 : 10);
  }

  /** The header and trailer of a local image, checked (no key needed). */
  static ImageEnds.Trailer endsOf(Path image) {
    try (FileImageSource src = FileImageSource.open(image)) {
      return ImageEnds.read(src);
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }

  /**
   * The library and codec of a local image; fails with one line unless {@code image} is a
   * complete image (header, trailer, start of the catalog).
   */
  static CatalogReader.Label labelOf(Path image) {
    try (FileImageSource src = FileImageSource.open(image)) {
      return ImageReader.readLabel(src);
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }
}

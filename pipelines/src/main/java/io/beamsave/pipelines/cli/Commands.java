package io.beamsave.pipelines.cli;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.ImageReader;
import java.io.IOException;
import java.nio.file.Path;

/** Small helpers the commands share. */
final class Commands {
  private Commands() {}

  /** The catalog of a local image, or a one-line error saying why it is not one. */
  static Catalog catalogOf(Path image) {
    try {
      return ImageReader.readCatalog(image);
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }
}

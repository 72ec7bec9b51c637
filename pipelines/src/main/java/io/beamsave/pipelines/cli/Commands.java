package io.beamsave.pipelines.cli;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.CatalogCodec;
import io.beamsave.transforms.image.FileImageSource;
import io.beamsave.transforms.image.ImageReader;
import java.io.IOException;
import java.nio.file.Path;

/** Small helpers the commands share. */
final class Commands {
  private Commands() {}

  /**
   * The library and codec of a local image; fails with one line unless {@code image} is a
   * complete image (header, trailer, start of the catalog).
   */
  static CatalogCodec.Label labelOf(Path image) {
    try (FileImageSource src = FileImageSource.open(image)) {
      return ImageReader.readLabel(src);
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }
}

package io.beamsave.transforms.format;

import java.io.IOException;

/**
 * An image is damaged, truncated or not a save image. The message names the image and where
 * in it the problem is (header, trailer, catalog, shard, block or file), for operators.
 */
public class ImageException extends IOException {
  public ImageException(String message) {
    super(message);
  }

  public ImageException(String message, Throwable cause) {
    super(message, cause);
  }
}

package io.beamsave.transforms.sink;

import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;

/**
 * The one place that chooses how an image is written, by the kind of its {@link Location}: a
 * file is appended shard by shard and renamed into place ({@link FileImageSink}); an object is
 * a multipart upload whose small shards are staged as objects under {@code shards} ({@link
 * StoreImageSink}). The save and the consolidation both get their sinks here.
 */
public final class ImageSinks {
  private ImageSinks() {}

  /**
   * The sink of the image at {@code image}; for an object, its small shards staged under the
   * prefix {@code shards} and its parts sent {@code parallelParts} at a time within {@code
   * linkMbps} (0: unthrottled).
   */
  public static ImageSink forImage(Location image, Location shards, S3Settings s3,
      double linkMbps, int parallelParts) {
    if (image instanceof Location.InStore object) {
      if (!(shards instanceof Location.InStore staging)
          || !staging.uri().bucket().equals(object.uri().bucket())) {
        throw new IllegalArgumentException("the shards of " + image + " are staged in its"
            + " bucket, not at " + shards);
      }
      return new StoreImageSink(object.uri(), staging.uri(), s3, linkMbps, parallelParts);
    }
    return new FileImageSink(((Location.Local) image).path());
  }
}

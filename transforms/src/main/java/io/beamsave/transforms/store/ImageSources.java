package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.FileImageSource;
import io.beamsave.transforms.image.ImageSource;
import java.io.IOException;
import java.nio.file.Path;

/** Opens an image by location: a local path, or {@code s3://BUCKET/KEY}. */
public final class ImageSources {
  private ImageSources() {}

  /**
   * Opens {@code location} for random access. An object stored with transfer compression has no
   * random access: callers {@linkplain ImageDownload download} it first.
   */
  public static ImageSource open(String location, S3Settings settings) throws IOException {
    if (!ObjectUri.isObject(location)) {
      return FileImageSource.open(Path.of(location));
    }
    ObjectUri uri = ObjectUri.parse(location, false);
    Store store = Stores.bucketOf(uri, settings);
    Store.Stat head =
        store.stat(uri.key()).orElseThrow(() -> new BeamsaveException(uri + ": no such image"));
    TransferCodec codec = ImageDownload.transferCodec(head);
    if (!codec.isNone()) {
      throw new BeamsaveException(
          uri + ": stored with transfer codec " + codec + "; download it before reading");
    }
    return new S3ImageSource(store, uri, head.size());
  }

  /** The transfer codec an object was stored with ({@code none} for a plain image). */
  public static TransferCodec transferCodecOf(String location, S3Settings settings) {
    ObjectUri uri = ObjectUri.parse(location, false);
    Store.Stat head = Stores.bucketOf(uri, settings).stat(uri.key())
        .orElseThrow(() -> new BeamsaveException(uri + ": no such image"));
    return ImageDownload.transferCodec(head);
  }
}

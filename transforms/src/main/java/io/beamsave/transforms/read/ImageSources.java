package io.beamsave.transforms.read;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.FileImageSource;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.StoreException;
import io.beamsave.transforms.store.Stores;
import io.beamsave.transforms.transfer.ImageDownload;
import io.beamsave.transforms.transfer.TransferCodec;
import java.io.IOException;
import java.nio.file.Path;

/** Opens an image by location: a local path, or {@code s3://BUCKET/KEY}. */
public final class ImageSources {
  private ImageSources() {}

  /**
   * Opens {@code location} for random access. An object stored with transfer compression has no
   * random access: callers {@linkplain ImageDownload download} it first.
   */
  public static ImageSource open(String location, S3Settings s3) throws IOException {
    return open(location, s3, "");
  }

  /**
   * Like {@link #open(String, S3Settings)}, for a reader that must read the very image another
   * opened: {@code tag} is what that one's {@link ImageSource#tag} said (empty: any). An image
   * put in its place since fails here, and an object replaced while it is read fails its next
   * read, each saying it was replaced.
   */
  public static ImageSource open(String location, S3Settings s3, String tag)
      throws IOException {
    if (!Location.inStore(location)) {
      ImageSource src = FileImageSource.open(Path.of(location));
      if (!tag.isEmpty() && !tag.equals(src.tag())) {
        src.close();
        throw replaced(location);
      }
      return src;
    }
    ObjectUri uri = ObjectUri.parse(location, false);
    Store store = Stores.bucketOf(uri, s3);
    Store.Stat head =
        store.stat(uri.key()).orElseThrow(() -> new BeamsaveException(uri + ": no such image"));
    TransferCodec codec = ImageDownload.transferCodec(head);
    if (!codec.isNone()) {
      throw new BeamsaveException(
          uri + ": stored with transfer codec " + codec + "; download it before reading");
    }
    if (!tag.isEmpty() && !head.etag().isEmpty() && !tag.equals(head.etag())) {
      throw replaced(location);
    }
    return new StoreImageSource(store, uri.key(), uri.toString(), head.size(), tag.isEmpty() ? head.etag() : tag);
  }

  private static StoreException replaced(String location) {
    return new StoreException(StoreException.Kind.CHANGED, location + ": it was replaced since"
        + " this command began reading it (another image is at its name now)");
  }

  /**
   * The transfer codec an object was stored with ({@code none} for a plain image, and for a
   * file, which is never stored with one).
   */
  public static TransferCodec transferCodecOf(Location location, S3Settings s3) {
    return location.match(file -> TransferCodec.NONE,
        object -> ImageDownload.transferCodec(location.stat(s3)
            .orElseThrow(() -> new BeamsaveException(object + ": no such image"))));
  }
}

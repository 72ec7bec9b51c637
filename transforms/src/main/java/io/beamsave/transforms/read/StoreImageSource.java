package io.beamsave.transforms.read;

import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.store.Store;

/**
 * An image stored as one object in a store, read by ranges. A read inside the range announced by
 * {@link #willRead} fetches up to {@link #WINDOW} bytes of it at once; any other read fetches
 * exactly what it asks for. So listing an image costs three small requests (header, trailer,
 * catalog) and restoring one file costs those plus the blocks that hold it. Not thread-safe:
 * one per worker.
 */
public final class StoreImageSource implements ImageSource {
  static final int WINDOW = 8 << 20;

  private final Store store;
  private final String key;
  private final String name;
  private final long size;
  /** Every read asks for the object with this ETag: one replaced meanwhile fails as such. */
  private final String etag;
  private long hintStart;
  private long hintEnd;
  private byte[] window = new byte[0];
  private long windowStart;
  private int windowLen;

  StoreImageSource(Store store, String key, String name, long size, String etag) {
    this.store = store;
    this.key = key;
    this.name = name;
    this.size = size;
    this.etag = etag == null ? "" : etag;
  }

  @Override
  public String tag() {
    return etag;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public void willRead(long pos, long len) {
    hintStart = pos;
    hintEnd = Math.min(size, pos + len);
  }

  @Override
  public void read(long pos, byte[] buf, int off, int len) throws ImageException {
    if (pos < 0 || len < 0 || pos + len > size) {
      throw new ImageException(name() + ": unexpected end of image at offset " + pos);
    }
    if (pos >= windowStart && pos + len <= windowStart + windowLen) {
      System.arraycopy(window, (int) (pos - windowStart), buf, off, len);
      return;
    }
    if (pos >= hintStart && pos + len <= hintEnd && len < WINDOW) {
      int n = (int) Math.min(hintEnd - pos, WINDOW);
      if (window.length < n) {
        window = new byte[Math.max(n, Math.min(WINDOW, window.length * 2))];
      }
      store.read(key, etag, pos, window, 0, n);
      windowStart = pos;
      windowLen = n;
      System.arraycopy(window, 0, buf, off, len);
      return;
    }
    store.read(key, etag, pos, buf, off, len);
  }

  @Override
  public void close() {
    window = new byte[0];
    windowLen = 0;
  }
}

package io.beamsave.transforms.image;

import java.io.Closeable;
import java.io.IOException;

/**
 * Random access to the bytes of a stored image: a local file or an object in object storage.
 * Readers say which range they are about to read ({@link #willRead}) so that a remote source
 * fetches it in few large requests and nothing else.
 */
public interface ImageSource extends Closeable {
  /** Names the image in errors. */
  String name();

  long size() throws IOException;

  /** Reads exactly {@code len} bytes at {@code pos} into {@code buf[off..]}. */
  void read(long pos, byte[] buf, int off, int len) throws IOException;

  /** A hint that {@code [pos, pos + len)} will be read next, in order. */
  default void willRead(long pos, long len) {}

  /**
   * What tells this image from another put at its name since: an object's ETag, a file's
   * device, inode, size and mtime; empty where nothing does. Readers elsewhere (workers) open
   * the image expecting it, so that an image replaced meanwhile is reported as replaced, not as
   * damaged.
   */
  default String tag() {
    return "";
  }
}

package io.beamsave.transforms.store;

import io.beamsave.transforms.BeamsaveException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A file that another thread is still appending to, read as it grows: the partial image that
 * save workers append shards to, so that an upload can send it while later shards are still
 * being compressed. Images are append-only until complete, so every byte below the file's
 * current size is final.
 *
 * <p>The writer's side says when the file is complete ({@link #finished}, with the path it was
 * renamed to) or will never be ({@link #failed}); readers block until the bytes they ask for
 * exist or one of those happens.
 */
public final class GrowingFile implements AutoCloseable {
  private static final long POLL_MILLIS = 10;

  private final Path path;
  private FileChannel channel;
  private volatile Path finishedAs;
  private volatile long finalLength = -1;
  private volatile String failure;

  public GrowingFile(Path path) {
    this.path = path;
  }

  /** The file is complete, {@code length} bytes long, and now at {@code renamedTo}. */
  public void finished(Path renamedTo, long length) {
    finishedAs = renamedTo;
    finalLength = length;
  }

  /** The file will not be completed: readers fail with {@code why}. */
  public void failed(String why) {
    failure = why;
  }

  /** The final length, or -1 while the file is still being written. */
  public long finalLength() {
    return finalLength;
  }

  /**
   * Reads up to {@code n} bytes at {@code pos} into {@code b}, waiting until that many exist or
   * the file is complete.
   *
   * @return the bytes read: {@code n}, fewer only where the complete file ends
   */
  public int read(byte[] b, long pos, int n) throws IOException {
    FileChannel ch = channel();
    while (true) {
      long end = finalLength;
      if (failure != null) {
        throw new BeamsaveException(path.getFileName() + ": " + failure);
      }
      long size = ch.size();
      if (size >= pos + n || end >= 0) {
        int want = (int) Math.min(n, Math.max(0, (end >= 0 ? end : size) - pos));
        ByteBuffer buf = ByteBuffer.wrap(b, 0, want);
        while (buf.hasRemaining()) {
          if (ch.read(buf, pos + buf.position()) < 0) {
            throw new IOException(path + " is shorter than its writer said");
          }
        }
        return want;
      }
      pause();
    }
  }

  /** Opens the file once it exists (the first shard creates it), or once it is complete. */
  private FileChannel channel() throws IOException {
    while (channel == null) {
      if (failure != null) {
        throw new BeamsaveException(path.getFileName() + ": " + failure);
      }
      Path done = finishedAs;
      try {
        channel = FileChannel.open(done != null ? done : path, StandardOpenOption.READ);
      } catch (NoSuchFileException notYet) {
        if (done != null) {
          throw notYet;
        }
        pause();
      }
    }
    return channel;
  }

  private static void pause() {
    try {
      Thread.sleep(POLL_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("upload interrupted");
    }
  }

  @Override
  public void close() throws IOException {
    if (channel != null) {
      channel.close();
    }
  }
}

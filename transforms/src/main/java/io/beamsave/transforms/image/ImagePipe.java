package io.beamsave.transforms.image;

import io.beamsave.transforms.BeamsaveException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An image handed from a save's workers to its upload in memory, never written to the local
 * disk: workers append compressed shards as they finish ({@link ImageWriter#appendShard} finds
 * the pipe by the image's path), the writer of the catalog ends it, and one reader takes the
 * bytes in order as they arrive. Bytes are dropped once read.
 *
 * <p>About {@code limit} bytes at most wait unread: once that many do, workers wait for the
 * reader, so a slow link slows the compression instead of filling memory. They never wait while
 * the reader waits for more bytes than that (an upload's read can outgrow the limit), as both
 * would then wait forever. Either side
 * can fail the pipe, and the other then fails too rather than waiting forever: a failed upload
 * stops the workers, a failed save aborts the upload.
 */
public final class ImagePipe {
  private static final ConcurrentHashMap<Path, ImagePipe> OPEN = new ConcurrentHashMap<>();

  private final Path image;
  private final long limit;
  private final Deque<byte[]> unread = new ArrayDeque<>();
  /** Bytes of the first unread chunk already read. */
  private int headRead;

  private long length;
  private long readTo;
  /** Where the bytes the reader waits for end; 0 while it does not wait. */
  private long readerNeeds;
  private boolean ended;
  private String failure;

  private ImagePipe(Path image, long limit) {
    this.image = image;
    this.limit = limit;
    byte[] header = ImageFormat.header();
    unread.add(header);
    length = header.length;
  }

  /**
   * Opens the pipe that carries {@code image}, with its header; until it ends or fails, shards
   * appended to {@code image} in this JVM go into it.
   */
  public static ImagePipe open(Path image, long limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive");
    }
    ImagePipe pipe = new ImagePipe(image, limit);
    if (OPEN.putIfAbsent(key(image), pipe) != null) {
      throw new IllegalStateException(image + " is already being piped");
    }
    return pipe;
  }

  /** The open pipe that carries {@code image}, or null when its bytes go to a file. */
  public static ImagePipe of(Path image) {
    return OPEN.get(key(image));
  }

  private static Path key(Path image) {
    return image.toAbsolutePath().normalize();
  }

  /** The image this pipe carries. */
  public Path image() {
    return image;
  }

  /**
   * Adds {@code b[0, len)} after the bytes so far, first waiting while the limit's worth is
   * unread; copies them, so the caller may reuse {@code b}.
   *
   * @return the offset of the bytes in the image
   */
  public synchronized long append(byte[] b, int len) {
    while (failure == null && !ended && length >= readerNeeds && length - readTo >= limit) {
      await();
    }
    checkOpen();
    return add(b, len);
  }

  /** Adds the image's last bytes, whatever the reader's lag, and ends it. */
  public synchronized void end(byte[] tail) {
    checkOpen();
    add(tail, tail.length);
    ended = true;
    OPEN.remove(key(image), this);
    notifyAll();
  }

  /** The pipe will not be ended: both sides fail with {@code why}. Does nothing once ended. */
  public synchronized void fail(String why) {
    if (ended || failure != null) {
      return;
    }
    failure = why;
    unread.clear();
    OPEN.remove(key(image), this);
    notifyAll();
  }

  /** The bytes appended so far: the offset of the next append. */
  public synchronized long length() {
    return length;
  }

  /** The image's length once ended, -1 before. */
  public synchronized long finalLength() {
    return ended ? length : -1;
  }

  /**
   * Reads up to {@code n} bytes at {@code pos}, the end of the previous read, into {@code b},
   * waiting until that many exist or the image has ended.
   *
   * @return the bytes read: {@code n}, fewer only where the image ends
   */
  public synchronized int read(byte[] b, long pos, int n) {
    if (pos != readTo) {
      throw new IllegalStateException("an image pipe is read in order: asked for " + pos
          + ", next is " + readTo);
    }
    while (failure == null && !ended && length - pos < n) {
      readerNeeds = pos + n;
      notifyAll();
      try {
        await();
      } finally {
        readerNeeds = 0;
      }
    }
    if (failure != null) {
      throw failed();
    }
    int want = (int) Math.min(n, length - pos);
    int done = 0;
    while (done < want) {
      byte[] head = unread.peek();
      int take = Math.min(want - done, head.length - headRead);
      System.arraycopy(head, headRead, b, done, take);
      done += take;
      headRead += take;
      if (headRead == head.length) {
        unread.poll();
        headRead = 0;
      }
    }
    readTo += want;
    notifyAll();
    return want;
  }

  private long add(byte[] b, int len) {
    long offset = length;
    if (len > 0) {
      unread.add(Arrays.copyOf(b, len));
      length += len;
      notifyAll();
    }
    return offset;
  }

  private void checkOpen() {
    if (failure != null) {
      throw failed();
    }
    if (ended) {
      throw new IllegalStateException(image + " has already ended");
    }
  }

  private BeamsaveException failed() {
    return new BeamsaveException(image.getFileName() + ": " + failure);
  }

  private void await() {
    try {
      wait();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException(image.getFileName() + ": interrupted");
    }
  }
}

package io.beamsave.transforms.image;

import io.beamsave.transforms.format.ImageException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** An image in a local file. */
public final class FileImageSource implements ImageSource {
  private final String name;
  private final FileChannel ch;
  private final String tag;

  private FileImageSource(String name, FileChannel ch, String tag) {
    this.name = name;
    this.ch = ch;
    this.tag = tag;
  }

  public static FileImageSource open(Path path) throws IOException {
    if (java.nio.file.Files.isDirectory(path)) {
      throw new ImageException(path + ": is a directory, not an image");
    }
    try {
      String before = tagOf(path);
      FileChannel ch = FileChannel.open(path, StandardOpenOption.READ);
      String after = tagOf(path);
      // Replaced while it was being opened: which of the two the channel holds is unknown, so
      // nothing can tell a later replacement apart.
      return new FileImageSource(path.toString(), ch, before.equals(after) ? after : "");
    } catch (NoSuchFileException e) {
      throw new ImageException(path + ": no such image");
    } catch (java.nio.file.FileSystemException e) {
      throw new ImageException(path + ": cannot open image: "
          + (java.nio.file.Files.isDirectory(path) ? "is a directory"
              : io.beamsave.transforms.BeamsaveException.describe(e)));
    }
  }

  /** The file's device and inode, size and mtime: a file put in its place differs. */
  private static String tagOf(Path path) throws IOException {
    java.nio.file.attribute.BasicFileAttributes a = java.nio.file.Files.readAttributes(path,
        java.nio.file.attribute.BasicFileAttributes.class);
    return a.fileKey() + " " + a.size() + " " + a.lastModifiedTime().to(
        java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String tag() {
    return tag;
  }

  @Override
  public long size() throws IOException {
    return ch.size();
  }

  @Override
  public void read(long pos, byte[] buf, int off, int len) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(buf, off, len);
    while (b.hasRemaining()) {
      if (ch.read(b, pos + b.position() - off) < 0) {
        throw new ImageException(name + ": unexpected end of image at offset " + pos);
      }
    }
  }

  @Override
  public void close() throws IOException {
    ch.close();
  }
}

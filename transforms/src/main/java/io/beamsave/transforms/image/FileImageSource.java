package io.beamsave.transforms.image;

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

  private FileImageSource(String name, FileChannel ch) {
    this.name = name;
    this.ch = ch;
  }

  public static FileImageSource open(Path path) throws IOException {
    if (java.nio.file.Files.isDirectory(path)) {
      throw new ImageException(path + ": is a directory, not an image");
    }
    try {
      return new FileImageSource(path.toString(), FileChannel.open(path, StandardOpenOption.READ));
    } catch (NoSuchFileException e) {
      throw new ImageException(path + ": no such image");
    } catch (java.nio.file.FileSystemException e) {
      throw new ImageException(path + ": cannot open image: "
          + (java.nio.file.Files.isDirectory(path) ? "is a directory"
              : io.beamsave.transforms.BeamsaveException.describe(e)));
    }
  }

  @Override
  public String name() {
    return name;
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

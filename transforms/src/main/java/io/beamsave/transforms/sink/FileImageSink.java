package io.beamsave.transforms.sink;

import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.ImageWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * An image file on a disk every worker reaches (this machine's, or a shared one). Workers
 * append their shards to {@code <image>.partial} as they complete, so every byte is written
 * once; finishing appends the catalog and trailer, forces the file to disk and renames it (see
 * {@link ImageWriter}). A shard written twice is appended twice; the catalog names the copy
 * whose result the job kept, and the other is dead space no reader visits.
 */
public final class FileImageSink implements ImageSink {
  private static final long serialVersionUID = 2L;

  private final String image;
  private final ImageKey key;

  public FileImageSink(Path image) {
    this(image.toAbsolutePath().toString(), null);
  }

  private FileImageSink(String image, ImageKey key) {
    this.image = image;
    this.key = key;
  }

  @Override
  public ImageKey key() {
    return key;
  }

  @Override
  public FileImageSink encryptedWith(ImageKey newKey) {
    return new FileImageSink(image, newKey);
  }

  public Path path() {
    return Path.of(image);
  }

  @Override
  public String location() {
    return image;
  }

  /** A partial image left by a crashed run must not be extended. */
  @Override
  public ImageSink prepare() throws IOException {
    removePartial();
    return this;
  }

  private void removePartial() throws IOException {
    Files.deleteIfExists(ImageWriter.partialPath(path()));
  }

  @Override
  public Copy writeShard(int shard, byte[] blocks, int len) throws IOException {
    return new Copy(ImageWriter.appendShard(path(), header(), blocks, len), "");
  }

  @Override
  public long finish(
      List<WrittenShard> shards, Function<List<Kept>, Catalog> catalog, Codec codec,
      int blockSize) throws IOException {
    try (ImageWriter writer = ImageWriter.open(path(), header())) {
      List<Kept> kept = new ArrayList<>(shards.size());
      for (WrittenShard s : ImageSink.lastOfEach(shards)) {
        kept.add(new Kept(s, s.at(s.copy().where())));
      }
      return writer.finish(catalog.apply(kept).withKey(key), codec);
    }
  }

  @Override
  public void discard() {
    try {
      removePartial();
    } catch (IOException e) {
      System.err.println("beamsave: warning: cannot remove " + ImageWriter.partialPath(path())
          + ": " + e.getMessage());
    }
  }

  @Override
  public void abandon() {
    try {
      ImageWriter.abandon(path());
    } catch (IOException e) {
      System.err.println("beamsave: warning: cannot remove " + ImageWriter.partialPath(path())
          + ": " + e.getMessage());
    }
  }

  @Override
  public String toString() {
    return image;
  }
}

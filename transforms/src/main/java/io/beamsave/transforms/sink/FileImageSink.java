package io.beamsave.transforms.sink;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.catalog.Catalog;
import java.io.IOException;
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
  private static final long serialVersionUID = 3L;

  private final String image;
  private final ImageKey key;
  /** This run's own name, set by {@link #prepare}: what a stopped run's workers are known by. */
  private final String run;

  public FileImageSink(Path image) {
    this(image.toAbsolutePath().toString(), null, "");
  }

  private FileImageSink(String image, ImageKey key, String run) {
    this.image = image;
    this.key = key;
    this.run = run;
  }

  @Override
  public ImageKey key() {
    return key;
  }

  @Override
  public FileImageSink encryptedWith(ImageKey newKey) {
    return new FileImageSink(image, newKey, run);
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
    return new FileImageSink(image, key,
        Long.toHexString(new java.security.SecureRandom().nextLong()));
  }

  private void removePartial() throws IOException {
    Removal.file(ImageWriter.partialPath(path()));
  }

  @Override
  public Copy writeShard(int shard, byte[] blocks, int len) throws IOException {
    return new Copy.InFile(ImageWriter.appendShard(path(), run, header(), blocks, len));
  }

  @Override
  public long finish(
      List<WrittenShard> shards, Function<List<Kept>, Catalog> catalog, Codec codec,
      int blockSize) throws IOException {
    try (ImageWriter writer = ImageWriter.open(path(), header(), run)) {
      List<Kept> kept = new ArrayList<>(shards.size());
      for (WrittenShard s : ImageSink.lastOfEach(shards)) {
        if (!(s.copy() instanceof Copy.InFile in)) {
          throw new IllegalStateException(
              image + ": shard " + s.shard() + " was not written to this file: " + s.copy());
        }
        kept.add(new Kept(s, s.at(in.offset())));
      }
      return writer.finish(catalog.apply(kept).withKey(key), codec);
    }
  }

  @Override
  public void checkWritable() {
    if (ImageWriter.abandoned(path(), run)) {
      throw new BeamsaveException(image + ": the save was stopped");
    }
  }

  @Override
  public List<String> discard() {
    try {
      ImageWriter.abandon(path(), run);
      return List.of();
    } catch (IOException e) {
      return List.of(ImageWriter.partialPath(path()) + " (" + BeamsaveException.describe(e)
          + ")");
    }
  }

  @Override
  public String toString() {
    return image;
  }
}
